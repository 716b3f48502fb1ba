"""The README's demo: bake a built-in scene (water by default) with the add-on in
headless Blender and render one frame with Cycles (CPU, few samples).

    blender -b --factory-startup --python scripts/demo.py -- [--effect water|sand|sand_plough|fracture|erosion|elastoplastic] [--out out]
        [--frame N] [--samples 16] [--before N] [--motion-blur]

Writes OUT/<effect>_demo.png, OUT/<effect>_demo.blend and the cache in OUT/tsubu_cache/.
"""
import argparse
import os
import sys
import time

import bpy

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "addon"))
import addon_utils  # noqa: E402


def material(name, color, roughness=0.5):
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (*color, 1.0)
    bsdf.inputs["Roughness"].default_value = roughness
    return mat


# per effect: the object holding the settings, the camera (location, rotation), the frame shown, looks by name
SCENES = {
    "water": ("Domain", (1.05, -1.3, 1.45), (0.82, 0.0, 0.68), 40,
              {"Container": ((0.85, 0.85, 0.82), 0.4), "Crate": ((0.55, 0.33, 0.14), 0.6),
               "Stone": ((0.18, 0.18, 0.19), 0.7)}),
    "sand": ("Sand", (0.95, -1.25, 0.75), (1.1, 0.0, 0.62), 12,
             {"Ball": ((0.5, 0.08, 0.06), 0.4), "Thrown": ((0.1, 0.2, 0.5), 0.4),
              "Tsubu Particles": ((0.76, 0.62, 0.42), 0.9)}),
    "sand_plough": ("Sand", (0.75, -1.05, 0.55), (1.15, 0.0, 0.55), 60,
                    {"Blade": ((0.35, 0.36, 0.38), 0.3), "Tsubu Particles": ((0.76, 0.62, 0.42), 0.9)}),
    "fracture": ("Wall", (1.6, -2.2, 1.0), (1.4, 0.0, 0.63), 12,
                 {"Ball": ((0.2, 0.2, 0.22), 0.3), "Tsubu Particles": ((0.45, 0.43, 0.4), 0.9)}),
    "erosion": ("Hillside", (2.55, -1.35, 1.3), (1.134, 0.0, 0.927), 72,
                {"Tsubu Particles": ((0.25, 0.45, 0.75), 0.2)}),
    "elastoplastic": ("Jelly", (0.75, -0.75, 0.45), (1.252, 0.0, 0.785), 20,
                      {"Step": ((0.7, 0.7, 0.68), 0.5)}),
}


def stage(scene, samples, camera, looks):
    """Camera, sun, sky, floor and materials: a plain studio look."""
    cam = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(cam)
    cam.location, cam.rotation_euler = camera
    cam.data.lens = 30
    scene.camera = cam
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = (0.7, 0.2, 0.9)
    scene.collection.objects.link(sun)
    world = bpy.data.worlds.new("Sky")
    world.use_nodes = True
    world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.55, 0.65, 0.8, 1.0)
    world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.8
    scene.world = world
    floor_mesh = bpy.data.meshes.new("Floor")
    floor_mesh.from_pydata([(-4, -4, -0.04), (4, -4, -0.04), (4, 4, -0.04), (-4, 4, -0.04)], [], [(0, 1, 2, 3)])
    floor = bpy.data.objects.new("Floor", floor_mesh)
    floor.data.materials.append(material("Floor", (0.35, 0.33, 0.3), 0.8))
    scene.collection.objects.link(floor)
    grains = bpy.data.materials.get("Tsubu Particles")
    if grains is not None and "Tsubu Particles" in looks:  # sand-coloured grains
        color, rough = looks["Tsubu Particles"]
        grains.node_tree.nodes["Principled BSDF"].inputs["Base Color"].default_value = (*color, 1.0)
    for obj in scene.objects:
        for prefix, (color, rough) in looks.items():
            if obj.name.startswith(prefix) and obj.type == "MESH":
                obj.data.materials.append(material(prefix, color, rough))
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_denoising = False  # Debian's Blender is built without OpenImageDenoise
    scene.render.resolution_x, scene.render.resolution_y = 960, 540
    scene.render.image_settings.file_format = "PNG"


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    ap = argparse.ArgumentParser(prog="demo.py")
    ap.add_argument("--out", default=os.path.join(ROOT, "out"))
    ap.add_argument("--effect", choices=sorted(SCENES), default="water")
    ap.add_argument("--frame", type=int, default=None, help="the frame to render (default: one that shows the effect)")
    ap.add_argument("--samples", type=int, default=24)
    ap.add_argument("--reuse", action="store_true", help="render from an existing cache instead of baking")
    ap.add_argument("--before", type=int, default=None, help="also render this frame, to <effect>_demo_before.png")
    ap.add_argument("--motion-blur", action="store_true",
                    help="render with Cycles motion blur (from the results' velocity attributes) to <effect>_demo_blur.png")
    args = ap.parse_args(argv)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)

    addon_utils.enable("tsubu", default_set=True)
    from tsubu import demos
    from tsubu.blender.scene_import import create_objects
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon_utils.enable("tsubu", default_set=True)
    scene = bpy.context.scene
    holder, *camera, frame, looks = SCENES[args.effect]
    frame = args.frame if args.frame is not None else frame
    desc = demos.DEMOS[args.effect]()
    scene.frame_start, scene.frame_end = desc.frame_start, desc.frame_end
    scene.render.fps = int(desc.fps)
    made = create_objects(desc)
    domain = made[holder]
    domain.tsubu.cache_dir = os.path.join(out, "tsubu_cache")
    bpy.context.view_layer.objects.active = domain

    started = time.monotonic()
    if args.reuse and os.path.exists(os.path.join(out, "tsubu_cache", holder, "manifest.json")):
        from tsubu.blender import playback
        playback.build_results(scene, domain)
    elif bpy.ops.tsubu.bake() != {"FINISHED"}:
        sys.exit(f"demo: the bake failed: {domain.tsubu.status}")
    print(f"demo: baked {desc.frame_end} frames in {time.monotonic() - started:.0f} s ({domain.tsubu.status})")
    stage(scene, args.samples, camera, looks)
    if args.before is not None:
        scene.frame_set(args.before)
        scene.render.filepath = os.path.join(out, f"{args.effect}_demo_before.png")
        bpy.ops.render.render(write_still=True)
    scene.frame_set(frame)
    scene.render.use_motion_blur = args.motion_blur
    suffix = "_blur" if args.motion_blur else ""
    scene.render.filepath = os.path.join(out, f"{args.effect}_demo{suffix}.png")
    started = time.monotonic()
    bpy.ops.render.render(write_still=True)
    print(f"demo: rendered frame {frame} in {time.monotonic() - started:.0f} s -> {scene.render.filepath}")
    bpy.ops.wm.save_as_mainfile(filepath=os.path.join(out, f"{args.effect}_demo.blend"))


main()
