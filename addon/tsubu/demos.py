"""Built-in demo scenes, built in plain Python (`python3 -m tsubu demo EFFECT --out DIR`).

The same descriptions are loaded into Blender by scripts/demo.py (the
README's demo command), so the shell and Blender bake the same scene.
"""
import numpy as np

from .baking import bake
from .scene import SceneDescription, SceneObject
from .shapes import box, grid_plane, open_box_walls, uv_sphere


def _box_object(name, role, lo, hi, **params):
    """A box as a mesh around its own centre, placed by its matrix (as Blender would have it)."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    v, t = box(-half, half)
    m = np.eye(4)
    m[:3, 3] = centre
    return SceneObject(name, role, v, t, matrices=m[None], params=params)


def water_scene(radius=0.015, frames=72):
    """A block of water falls into an open container where a light crate floats on a
    shallow pool; a dense stone falls in and sinks; the crate rides the waves and floats on."""
    inside_lo, inside_hi = (-0.5, -0.3, 0.0), (0.5, 0.3, 0.45)
    objects = [_box_object("Domain", "domain", (-0.8, -0.6, -0.2), (0.8, 0.6, 1.3))]
    for i, (v, t) in enumerate(open_box_walls(inside_lo, inside_hi, 0.04)):
        lo, hi = v.min(axis=0), v.max(axis=0)
        objects.append(_box_object(f"Container.{i}", "obstacle", lo, hi))
    objects += [
        _box_object("Pool", "fluid", inside_lo, (0.5, 0.3, 0.18)),
        _box_object("Water", "fluid", (-0.48, -0.28, 0.6), (-0.05, 0.28, 0.95)),
        _box_object("Crate", "rigid", (0.12, -0.12, 0.1), (0.34, 0.1, 0.32), density=400.0),
        _box_object("Stone", "rigid", (0.28, 0.14, 0.6), (0.4, 0.26, 0.72), density=2600.0),
    ]
    params = {"particle_radius": radius, "surface_voxel_ratio": 0.5, "surface_radius_scale": 2.0}
    return SceneDescription("water", params, 1, frames, 24.0, 0, objects)


def _placed(name, role, mesh, centre, **params):
    """A mesh around its own origin placed at `centre` by its matrix."""
    v, t = mesh
    m = np.eye(4)
    m[:3, 3] = centre
    return SceneObject(name, role, v, t, matrices=m[None], params=params)


def sand_scene(cell=0.025, frames=36):
    """A heavy ball dropped straight into a sand bed and a second ball thrown into it at a slant."""
    bed = SceneObject("Sand", "bed", *grid_plane((-0.8, -0.5), (0.8, 0.5), 0.0, (16, 10)))
    objects = [
        bed,
        _placed("Ball", "object", uv_sphere((0, 0, 0), 0.1, 12, 24), (-0.35, 0.0, 0.35), density=1200.0,
                initial_velocity=(0.0, 0.0, -2.0)),
        _placed("Thrown", "object", uv_sphere((0, 0, 0), 0.08, 12, 24), (-0.05, 0.0, 0.3), density=1200.0,
                initial_velocity=(1.0, 0.0, -1.5)),
    ]
    params = {"cell_size": cell, "element_radius": cell / 2, "noise": 0.002, "grains_per_element": 8,
              "dem_depth": 0.06}
    return SceneDescription("sand", params, 1, frames, 24.0, 0, objects)


DEMOS = {"water": water_scene, "sand": sand_scene}


def bake_demo(effect, out, progress=None):
    if effect not in DEMOS:
        raise ValueError(f"no demo scene for '{effect}' (demos: {', '.join(DEMOS)})")
    return bake(DEMOS[effect](), out, progress=progress)
