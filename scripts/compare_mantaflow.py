"""Side by side in one run: the same dam break baked by Tsubu's water solver and by
Blender's own liquid simulator (Mantaflow FLIP), wall time per simulated second.

    blender -b --factory-startup --python scripts/compare_mantaflow.py -- [--seconds 0.5] [--spacing 0.02]

Both get the same tank and water column; Mantaflow's grid cell is Tsubu's particle
spacing ("similar detail": one Mantaflow cell holds the volume of one Tsubu particle,
and FLIP seeds about 8 particles per cell). Prints one line per solver and the ratio.
This is a benchmark, not a test: it asserts nothing.
"""
import argparse
import os
import sys
import tempfile
import time

import bpy

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "addon"))


def box_object(name, lo, hi):
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=[(a + b) / 2 for a, b in zip(lo, hi)])
    obj = bpy.context.object
    obj.name = name
    obj.scale = [b - a for a, b in zip(lo, hi)]
    bpy.ops.object.transform_apply(scale=True)
    return obj


def mantaflow(tank, column, spacing, frames, fps, folder):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.fps = fps
    scene.frame_start, scene.frame_end = 1, frames
    domain = box_object("Domain", (0, 0, 0), tank)
    mod = domain.modifiers.new("Fluid", "FLUID")
    mod.fluid_type = "DOMAIN"
    settings = mod.domain_settings
    settings.domain_type = "LIQUID"
    settings.resolution_max = int(round(max(tank) / spacing))
    settings.cache_directory = folder
    settings.cache_frame_start, settings.cache_frame_end = 1, frames
    settings.cache_type = "ALL"
    settings.use_mesh = False
    water = box_object("Water", (0, 0, 0), column)
    wmod = water.modifiers.new("Fluid", "FLUID")
    wmod.fluid_type = "FLOW"
    wmod.flow_settings.flow_type = "LIQUID"
    wmod.flow_settings.flow_behavior = "GEOMETRY"
    bpy.context.view_layer.objects.active = domain
    started = time.monotonic()
    with bpy.context.temp_override(object=domain, active_object=domain):
        bpy.ops.fluid.bake_all()
    return time.monotonic() - started, settings.resolution_max


def tsubu_water(tank, column, spacing, frames, fps, folder):
    import tsubu
    from tsubu.shapes import box

    def obj(name, role, lo, hi):
        v, t = box(lo, hi)
        return tsubu.SceneObject(name, role, v, t)

    params = {"particle_radius": spacing / 2, **{f"wall_{s}": True for s in ("left", "right", "front", "back", "bottom", "top")}, "write_surface": False}
    desc = tsubu.SceneDescription("water", params, 1, frames, float(fps), 0,
                                  [obj("Domain", "domain", (0, 0, 0), tank), obj("Water", "fluid", (0, 0, 0), column)])
    started = time.monotonic()
    cache = tsubu.bake(desc, folder)
    return time.monotonic() - started, cache.read_particles("fluid", 1).count


def main():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    ap = argparse.ArgumentParser(prog="compare_mantaflow.py")
    ap.add_argument("--seconds", type=float, default=0.5, help="simulated time")
    ap.add_argument("--spacing", type=float, default=0.02, help="Tsubu particle spacing = Mantaflow cell size (m)")
    args = ap.parse_args(argv)
    fps = 24
    frames = max(2, int(round(args.seconds * fps)) + 1)
    simulated = (frames - 1) / fps
    tank, column = (1.6, 0.4, 1.0), (0.5, 0.4, 0.8)
    with tempfile.TemporaryDirectory() as folder:
        t_manta, res = mantaflow(tank, column, args.spacing, frames, fps, os.path.join(folder, "manta"))
        t_tsubu, n = tsubu_water(tank, column, args.spacing, frames, fps, os.path.join(folder, "tsubu"))
    print(f"mantaflow: resolution {res} (cell {max(tank) / res:.4f} m), {t_manta / simulated:.1f} s per simulated s")
    print(f"tsubu:     {n} particles (spacing {args.spacing} m), {t_tsubu / simulated:.1f} s per simulated s")
    print(f"ratio mantaflow/tsubu: {t_manta / t_tsubu:.2f} (above 1: Tsubu is faster)")


main()
