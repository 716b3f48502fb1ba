"""Renders of a baked cache show each frame's own content, and move with motion blur.

A synthetic water cache holds a blob of particles that jumps 0.4 m along x every frame. An
orthographic camera looks straight down on it; each rendered frame (Cycles, tiny, few samples) must
show the blob where that frame of the cache puts it: a frame late or early is 16 pixels off.
Rendered as the user does: with the Blender executable, `blender -b file.blend -a` in a new process
with the add-on enabled, and F12 animation from the interface (in a virtual display, the interface
not locked and redrawing); with the bpy module, the same animation render in-process.
With motion blur on, a frame whose particles move fast must render as a streak along their velocity.
The water surface mesh carries the particles' velocity for motion blur as well.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402  (sets sys.path)

import bpy  # noqa: E402
import addon_utils  # noqa: E402
import numpy as np  # noqa: E402

from tsubu import _core, cache as cachelib  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tsubu-render-")
WIDTH, HEIGHT, VIEW = 96, 48, 2.4  # pixels, and metres across the orthographic view
FPS = 24
STEP = 0.4  # metres the blob moves per frame
FRAMES = 4


def blob_centre(frame):
    return np.array([-0.6 + STEP * (frame - 1), 0.0, 0.0])


def write_cache(folder, velocity_of, surface=False):
    streams = {"fluid": {"kind": "particles"}}
    if surface:
        streams["surface"] = {"kind": "volume", "grids": ["surface"], "particles": "fluid"}
    c = cachelib.Cache(folder)
    c.create("water", {"particle_radius": 0.04}, 1, FRAMES, float(FPS), 0, streams)
    rng = np.random.default_rng(7)
    offsets = rng.normal(scale=0.06, size=(300, 3)).astype(np.float32)
    for f in range(1, FRAMES + 1):
        pos = (offsets + blob_centre(f)).astype(np.float32)
        vel = np.tile(np.asarray(velocity_of(f), np.float32), (len(pos), 1))
        cachelib.write_particles(cachelib.frame_path(folder, "fluid", f), f, (f - 1) / FPS, {
            "position": pos, "velocity": vel, "id": np.arange(len(pos), dtype=np.uint32)})
        if surface:
            level_set = _core.particles_to_level_set(pos, 0.08, 0.02)
            _core.write_vdb(cachelib.frame_path(folder, "surface", f, "volume"), [level_set])


def scene_with_cache(name, velocity_of, motion_blur, surface=False):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon_utils.enable("tsubu", default_set=True, handle_error=None)
    scene = bpy.context.scene
    mesh = bpy.data.meshes.new("Tank")
    mesh.from_pydata([(x, y, z) for x in (-1.5, 1.5) for y in (-1, 1) for z in (-1, 1)], [],
                     [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)])
    domain = bpy.data.objects.new("Tank", mesh)
    scene.collection.objects.link(domain)
    bpy.context.view_layer.objects.active = domain
    assert bpy.ops.tsubu.role_set(role_id="water.domain") == {"FINISHED"}
    domain.tsubu.cache_dir = os.path.join(TMP, name)
    domain.hide_render = True
    from tsubu.blender.export import cache_folder
    write_cache(cache_folder(domain), velocity_of, surface)
    from tsubu.blender import playback  # the results made as after a bake
    playback.build_results(scene, domain)
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    camera.data.type = "ORTHO"
    camera.data.ortho_scale = VIEW
    camera.location = (0, 0, 5)
    scene.collection.objects.link(camera)
    scene.camera = camera
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.data.energy = 5.0
    scene.collection.objects.link(sun)
    scene.world = bpy.data.worlds.new("Black")
    scene.world.color = (0, 0, 0)
    if scene.world.node_tree is None and hasattr(scene.world, "use_nodes"):
        scene.world.use_nodes = True  # Blender 5 worlds always have nodes, with a grey background
    for node in scene.world.node_tree.nodes if scene.world.node_tree else ():
        if node.type == "BACKGROUND":
            node.inputs["Strength"].default_value = 0.0
    r = scene.render
    r.engine = "CYCLES"
    scene.cycles.samples = 8
    scene.cycles.use_denoising = False  # Debian's Blender has no OpenImageDenoise
    scene.cycles.device = "CPU"
    r.resolution_x, r.resolution_y, r.resolution_percentage = WIDTH, HEIGHT, 100
    r.fps = FPS
    r.use_motion_blur = motion_blur
    # the shutter centred on the frame (a Cycles setting before 4.2, a render setting since)
    setattr(r if hasattr(r, "motion_blur_position") else scene.cycles, "motion_blur_position", "CENTER")
    r.motion_blur_shutter = 0.5
    r.image_settings.file_format = "PNG"
    r.filepath = os.path.join(TMP, name, "frame_####")
    scene.frame_start, scene.frame_end = 1, FRAMES
    scene.frame_set(1)
    return scene


def blender_executable():
    binary = bpy.app.binary_path
    return binary if binary and os.path.basename(binary).startswith("blender") and os.access(binary, os.X_OK) else None


def render_animation(scene, name):
    """The frames as the user renders them: `blender -b file.blend -a` where there is a Blender
    executable, else (the bpy module) the same animation render in-process."""
    binary = blender_executable()
    if binary:
        path = os.path.join(TMP, name + ".blend")
        bpy.ops.wm.save_as_mainfile(filepath=path)
        enable = (f"import sys, addon_utils; sys.path.insert(0, {os.path.join(harness.ROOT, 'addon')!r}); "
                  "addon_utils.enable('tsubu', default_set=True)")
        done = subprocess.run([binary, "-b", path, "--python-expr", enable, "-a"], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    else:
        bpy.ops.render.render(animation=True)
    return [os.path.join(TMP, name, f"frame_{f:04d}.png") for f in range(1, FRAMES + 1)]


def bright_columns(png):
    """(first, last, centroid) column of the pixels lit by the blob."""
    image = bpy.data.images.load(png)
    rgba = np.array(image.pixels[:], np.float32).reshape(image.size[1], image.size[0], 4)
    bpy.data.images.remove(image)
    lit = rgba[..., :3].max(axis=2) > 0.05
    cols = np.nonzero(lit.any(axis=0))[0]
    assert len(cols), f"{png} shows nothing"
    weight = lit.sum(axis=0)
    return cols[0], cols[-1], float((weight * np.arange(len(weight))).sum() / weight.sum())


def column_of(x):
    return (x + VIEW / 2) / VIEW * WIDTH - 0.5


def test_each_rendered_frame_shows_its_own_particles():
    scene = scene_with_cache("still", lambda f: (0, 0, 0), motion_blur=False)
    scene.frame_set(3)  # the interface left on another frame than the first rendered
    for f, png in enumerate(render_animation(scene, "still"), start=1):
        _, _, centroid = bright_columns(png)
        expected = column_of(blob_centre(f)[0])
        assert abs(centroid - expected) < 3.0, f"frame {f}: blob at column {centroid:.1f}, cache says {expected:.1f}"


def test_interface_render_f12_shows_each_frame():
    """F12 animation from Blender's window with the interface not locked (where there is a Blender
    executable and a virtual display to open its window in)."""
    binary = blender_executable()
    if binary is None or not shutil.which("xvfb-run"):
        print("     (no Blender executable here: the bpy module has no interface)")
        return
    scene = scene_with_cache("interface", lambda f: (0, 0, 0), motion_blur=False)
    path = os.path.join(TMP, "interface.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    out = os.path.join(TMP, "interface_frames")
    done = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x720x24", binary, "--factory-startup", "--python",
                           os.path.join(os.path.dirname(__file__), "f12_render.py"), "--", path, out, str(FRAMES)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    for f in range(1, FRAMES + 1):
        _, _, centroid = bright_columns(os.path.join(out, f"frame_{f:04d}.png"))
        expected = column_of(blob_centre(f)[0])
        assert abs(centroid - expected) < 3.0, f"frame {f}: blob at column {centroid:.1f}, cache says {expected:.1f}"


def test_motion_blur_streaks_along_the_velocity():
    speed = 2 * STEP * FPS  # m/s: 0.4 m of travel within the half-frame shutter
    still = scene_with_cache("sharp", lambda f: (speed, 0, 0), motion_blur=False)
    sharp = bright_columns(render_animation(still, "sharp")[1])
    blurred_scene = scene_with_cache("blurred", lambda f: (speed, 0, 0), motion_blur=True)
    blurred = bright_columns(render_animation(blurred_scene, "blurred")[1])
    travel = speed * 0.5 / FPS / VIEW * WIDTH  # pixels of travel while the shutter is open
    width_sharp, width_blurred = sharp[1] - sharp[0], blurred[1] - blurred[0]
    assert width_blurred > width_sharp + 0.7 * travel, (sharp, blurred, travel)
    assert abs(blurred[2] - sharp[2]) < 3.0, "the streak is centred on the frame (shutter centred)"


def test_surface_carries_the_particle_velocity():
    speed = 2 * STEP * FPS
    scene = scene_with_cache("surface", lambda f: (speed, 0, 0), motion_blur=True, surface=True)
    scene.frame_set(2)
    surface = bpy.data.objects["Tank.surface"]
    surface.data.materials[0] = bpy.data.materials["Tsubu Particles"]  # opaque: the water is clear on black
    assert bpy.data.objects["Tank.fluid"].hide_render and not surface.hide_render  # the surface renders
    evaluated = surface.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    try:
        assert len(mesh.vertices) > 100, "no surface was meshed"
        velocity = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.attributes["velocity"].data.foreach_get("vector", velocity)
        assert np.allclose(velocity.reshape(-1, 3), (speed, 0, 0)), "surface vertices without the particles' velocity"
    finally:
        evaluated.to_mesh_clear()
    blurred = bright_columns(render_animation(scene, "surface")[1])
    sharp_scene = scene_with_cache("surface_sharp", lambda f: (speed, 0, 0), motion_blur=False, surface=True)
    bpy.data.objects["Tank.surface"].data.materials[0] = bpy.data.materials["Tsubu Particles"]
    sharp = bright_columns(render_animation(sharp_scene, "surface_sharp")[1])
    travel = speed * 0.5 / FPS / VIEW * WIDTH
    assert (blurred[1] - blurred[0]) > (sharp[1] - sharp[0]) + 0.7 * travel, (sharp, blurred, travel)


harness.run(globals(), "render")
