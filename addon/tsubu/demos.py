"""Built-in demo scenes, built in plain Python (`python3 -m tsubu demo EFFECT --out DIR`).

The same descriptions are loaded into Blender by scripts/demo.py (the
README's demo command), so the shell and Blender bake the same scene.
"""
import numpy as np

from .baking import bake
from .effects.water import OPEN
from .scene import SceneDescription, SceneObject
from .shapes import box, grid_plane, height_grid, open_box_walls, uv_sphere


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
    # no domain walls: what splashes over the container leaves the scene
    params = {"particle_radius": radius, "surface_voxel_ratio": 0.5, "surface_radius_scale": 2.0, **OPEN}
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


def sand_plough_scene(cell=0.02, frames=60, fps=24.0):
    """Sand at real scale with the default (Dry Sand) settings: a keyframed blade, 30 cm wide, lowered 3 cm into a
    bed of 2 cm cells and dragged 0.3 m/s along +x - a pile builds ahead of it, a trench stays behind - past a
    heap that slumps to the sand's angle of repose as the bake starts."""
    def surface(X, Y):
        return np.maximum(0.0, 0.16 - 1.5 * np.hypot(X - 0.45, Y - 0.22))   # a steep cone, 16 cm high
    bed = SceneObject("Sand", "bed", *height_grid(np.linspace(-0.7, 0.7, 71), np.linspace(-0.45, 0.45, 46), surface))
    t = np.arange(frames) / fps
    matrices = np.repeat(np.eye(4)[None], frames, axis=0)
    matrices[:, 0, 3] = -0.45 + 0.3 * np.clip(t - 0.25, 0.0, None)
    matrices[:, 1, 3] = -0.08
    matrices[:, 2, 3] = 0.06 + np.maximum(0.01 - 0.2 * t, -0.03)
    blade = SceneObject("Blade", "object", *box((-0.01, -0.15, -0.06), (0.01, 0.15, 0.06)), matrices=matrices,
                        params={"motion": "animated"})
    return SceneDescription("sand", {"cell_size": cell, "element_radius": cell / 2}, 1, frames, fps, 0, [bed, blade])


def lower_half_hard(size=64):
    """The paper's fig. 1 a: a brittleness map whose lower half is black (hard). Row 0 is the bottom."""
    image = np.ones((size, size), np.float32)
    image[: size // 2] = 0.0
    return image


def star_hard(size=64, points=5, outer=0.42, inner=0.2, centre=(0.5, 0.42)):
    """A black star on white: a shaped hard region (the paper used an armadillo, fig. 1 b)."""
    v, u = (np.mgrid[0:size, 0:size] + 0.5) / size
    dx, dy = u - centre[0], v - centre[1]
    angle, r = np.arctan2(dy, dx) + np.pi / 2, np.hypot(dx, dy)
    sector = (angle % (2 * np.pi / points)) / (2 * np.pi / points)
    edge = inner + (outer - inner) * np.abs(1.0 - 2.0 * sector)  # the star's outline, straight-ish spikes
    return np.where(r < edge, 0.0, 1.0).astype(np.float32)


def letter_t_hard(size=64):
    """A black letter T on white: a shaped hard region with straight strokes a quarter of the wall wide."""
    v, u = (np.mgrid[0:size, 0:size] + 0.5) / size
    bar = (v > 0.62) & (v < 0.86) & (u > 0.14) & (u < 0.86)
    stem = (v <= 0.62) & (u > 0.38) & (u < 0.62)
    return np.where(bar | stem, 0.0, 1.0).astype(np.float32)


PAPER_WALL = {"element_count": 2048, "element_radius": 0.017, "p0": 1.0, "pH": 0.001, "n": 30.0}


def fracture_scene(frames=48, image=None, shots=((0.0, 0.75, 4), (-0.3, 0.7, 14), (0.3, 0.72, 24)), speed=9.0,
                   ball_radius=0.09, **settings):
    """The paper's wall (1.0 x 1.0 x 0.08, §5) standing on the ground, hit by steel balls fired through it
    at (x, z, launch frame) in order; image is its brittleness map laid along Y (default: lower half hard)."""
    wall = _box_object("Wall", "breakable", (-0.5, -0.04, 0.0), (0.5, 0.04, 1.0), brittleness_image="map",
                       projection="planar_y")
    wall.arrays["brittleness"] = lower_half_hard() if image is None else np.asarray(image, np.float32)
    objects = [wall, _box_object("Ground", "obstacle", (-3.0, -4.0, -0.2), (3.0, 5.0, 0.0))]
    for k, (x, z, frame) in enumerate(shots):
        objects.append(_placed(f"Ball.{k}", "projectile", uv_sphere((0, 0, 0), ball_radius, 8, 16),
                               (x, -0.4, z), density=7800.0, initial_velocity=(0.0, speed, 0.0),
                               launch_frame=frame))
    params = dict(PAPER_WALL, **settings)
    return SceneDescription("fracture", params, 1, frames, 24.0, 0, objects)


def fracture_demo_scene():
    """The demo: the paper's wall set in the ground (anchored), so it stands while its top is shot away."""
    return fracture_scene(anchored=True)


def hillside_height(X, Y):
    """A hillside falling 0.5 m over 1.6 m along x, a shallow valley down its middle, and bumps."""
    valley = 0.08 * np.exp(-(Y / 0.25) ** 2)
    bumps = 0.015 * np.sin(9.0 * X + 1.3) * np.cos(7.0 * Y - 0.4) + 0.01 * np.sin(23.0 * X * Y)
    return 0.1 + 0.5 * (1.0 - X / 1.6) ** 1.3 - valley + bumps


def erosion_scene(radius=0.01, frames=72):
    """Heavy rain on a hillside: the water gathers in the valley and runs off the foot of the slope, carving a
    gully and dropping sediment where it slows on the flat."""
    xs, ys = np.linspace(0.0, 1.6, 81), np.linspace(-0.5, 0.5, 51)
    hill = SceneObject("Hillside", "terrain", *height_grid(xs, ys, hillside_height))
    cloud = SceneObject("Cloud", "rain", *grid_plane((0.05, -0.45), (1.0, 0.45), 0.95, (1, 1)),
                        params={"emit_start": 1, "emit_end": frames})
    params = {"particle_radius": radius, "voxel_size": 2 * radius, "rain_rate": 150000.0, "write_surface": True}
    return SceneDescription("erosion", params, 1, frames, 24.0, 0, [hill, cloud])


def _tilted_box(half, angles):
    """A box of half-extents `half` about its centre, turned by `angles` (radians) about x then y."""
    v, t = box(-np.asarray(half), np.asarray(half))
    ax, ay = angles
    rx = np.array([[1, 0, 0], [0, np.cos(ax), -np.sin(ax)], [0, np.sin(ax), np.cos(ax)]])
    ry = np.array([[np.cos(ay), 0, np.sin(ay)], [0, 1, 0], [-np.sin(ay), 0, np.cos(ay)]])
    return (v @ (ry @ rx).T).astype(np.float32), t


def elastoplastic_scene(radius=0.005, frames=48):
    """A block of soft jelly, turned on its corner, falls across the edge of a step and wobbles to rest."""
    jelly = _placed("Jelly", "body", _tilted_box((0.07, 0.07, 0.07), (0.5, 0.35)), (0.0, 0.0, 0.32))
    step = _box_object("Step", "obstacle", (-0.3, -0.2, 0.0), (0.02, 0.2, 0.12))
    params = {"particle_radius": radius, "youngs_modulus": 1e6, "poisson_ratio": 0.4, "surface_smoothing": 8,
              "surface_radius_scale": 2.5}
    return SceneDescription("elastoplastic", params, 1, frames, 24.0, 0, [jelly, step])


DEMOS = {"water": water_scene, "sand": sand_scene, "fracture": fracture_demo_scene, "erosion": erosion_scene,
         "elastoplastic": elastoplastic_scene, "sand_plough": sand_plough_scene}


def bake_demo(effect, out, progress=None):
    if effect not in DEMOS:
        raise ValueError(f"no demo scene for '{effect}' (demos: {', '.join(DEMOS)})")
    return bake(DEMOS[effect](), out, progress=progress)
