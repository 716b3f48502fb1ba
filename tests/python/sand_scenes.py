"""Sand scenes for the physical tests, in the paper's units (§5: cell 1, DE radius 0.5,
DE mass 0.05, mu 0.1, sphere radius 15) with a shallow DEM layer so each bakes in seconds."""
import math

import numpy as np

import tsubu
from tsubu.shapes import box, grid_plane, height_grid, uv_sphere

DE_MASS = 0.05
DE_RADIUS = 0.5
BULK = DE_MASS / (4 * math.sqrt(2) * DE_RADIUS ** 3)  # kg per unit volume that gives a lattice DE this mass
# The paper gives no split speed. 2.0 was chosen while a fresh region sagged under its own weight and bounced its
# top DEs up at nearly that speed as the ball arrived; on a bed laid at rest the crater's rim rises at 1-3 cells/s
# under these balls (12-14 cells/s), and figs 5-7 hold for split speeds from 1.0 to 1.5 (at 1.75 and 2.0 the
# oblique throw's spatter is no longer ahead, at 2.0 the heavy ball throws nothing).
PAPER = {"cell_size": 1.0, "element_radius": DE_RADIUS, "bulk_density": BULK, "friction": 0.1,
         "restitution": 0.3, "contact_time": 0.1, "dem_depth": 4.0, "split_speed": 1.25, "grow_force": 10.0,
         "rest_speed": 0.05, "gravity": (0.0, 0.0, -9.81), "unloading_stiffness": 1.0}


def sphere_mass_density(mass_ratio, radius=15.0):
    return mass_ratio * DE_MASS / (4.0 / 3.0 * math.pi * radius ** 3)


def bed(size=64):
    v, t = grid_plane((0, 0), (size, size), 0.0, (4, 4))
    return tsubu.SceneObject("Sand", "bed", v, t)


def placed(name, mesh, centre, matrices=None, **params):
    v, t = mesh
    if matrices is None:
        matrices = np.eye(4)[None].copy()
        matrices[0, :3, 3] = centre
    return tsubu.SceneObject(name, "object", v, t, matrices=matrices, params=params)


def drop(mass_ratio, frames=30, height=16.0, velocity=(0.0, 0.0, -12.0), size=64, **settings):
    """The paper's figs 5-7: a sphere of radius 15 and mass_ratio x the DE mass falling into the bed."""
    params = dict(PAPER, **settings)
    ball = placed("Ball", uv_sphere((0, 0, 0), 15.0, 12, 24), (size / 2, size / 2, height),
                  density=sphere_mass_density(mass_ratio), initial_velocity=velocity)
    return tsubu.SceneDescription("sand", params, 1, frames, 24.0, 0, [bed(size), ball])


def press_box(frames=60, press=36, depth=2.0, size=40):
    """A keyframed box pressed `depth` into the bed and lifted out again over `press`
    frames, then held above while the sand it threw up lands."""
    m = np.repeat(np.eye(4)[None], frames, axis=0)
    s = np.clip(np.arange(frames) / (press - 1), 0.0, 1.0)
    m[:, 0, 3], m[:, 1, 3] = size / 2, size / 2
    m[:, 2, 3] = 3.0 - (3.0 + depth) * np.sin(np.pi * s)  # bottom from 0.5 above the sand, down and up again
    v, t = box((-6.0, -4.0, -2.5), (6.0, 4.0, 2.5))
    block = placed("Block", (v, t), None, matrices=m, motion="animated")
    params = dict(PAPER, dem_depth=4.0, smoothing=0)
    return tsubu.SceneDescription("sand", params, 1, frames, 24.0, 0, [bed(size), block])


# ---- real-world scale (issue 18): metres, the built-in presets, default settings ----

PRESETS = ("Dry Sand", "Fine Dust", "Coarse Gravel")


def preset_parameters(name):
    from tsubu import presets
    return dict(presets.load(presets.available("sand")[name])["parameters"])


def real_bed(lo, hi, height=0.1):
    """A sand bed of the given x-y extent whose surface is at `height` (so its volume above z = 0 is not 0)."""
    v, t = grid_plane(lo, hi, height, (4, 4))
    return tsubu.SceneObject("Sand", "bed", v, t)


def keyframed(name, lo, hi, centres):
    """A box from lo to hi about its origin, moved through `centres` (one per frame) with infinite mass."""
    m = np.repeat(np.eye(4)[None], len(centres), axis=0)
    m[:, :3, 3] = centres
    return placed(name, box(lo, hi), None, matrices=m, motion="animated")


def press_real(depth=0.02, speed=0.24, frames=24, fps=24.0, **settings):
    """A keyframed 10 cm box lowered from 1 cm above a Dry Sand bed (2 cm cells) into it at `speed`, `depth`
    deep, and held there. Returns the scene and the volume it presses down."""
    t = np.arange(frames) / fps
    bottom = 0.1 + np.maximum(0.01 - speed * t, -depth)
    centres = np.stack([np.full(frames, 0.3), np.full(frames, 0.3), bottom + 0.05], axis=1)
    params = dict(preset_parameters("Dry Sand"), cell_size=0.02, element_radius=0.01, **settings)
    objects = [real_bed((0, 0), (0.6, 0.6)), keyframed("Box", (-0.05, -0.05, -0.05), (0.05, 0.05, 0.05), centres)]
    return tsubu.SceneDescription("sand", params, 1, frames, fps, 0, objects), 0.1 * 0.1 * depth


def plough_real(depth=0.03, speed=0.3, frames=36, fps=24.0, **settings):
    """A keyframed blade (2 cm thick, 20 cm wide) lowered `depth` into a Dry Sand bed (2 cm cells) and dragged
    along +x at `speed`. Returns the scene and the blade's x per frame."""
    t = np.arange(frames) / fps
    x = 0.15 + speed * np.clip(t - 0.25, 0.0, None)
    bottom = 0.1 + np.maximum(0.01 - 0.2 * t, -depth)
    centres = np.stack([x, np.full(frames, 0.25), bottom + 0.05], axis=1)
    params = dict(preset_parameters("Dry Sand"), cell_size=0.02, element_radius=0.01, **settings)
    objects = [real_bed((0, 0), (0.8, 0.5)), keyframed("Blade", (-0.01, -0.1, -0.05), (0.01, 0.1, 0.05), centres)]
    return tsubu.SceneDescription("sand", params, 1, frames, fps, 0, objects), x


def balls_real(cell, preset, frames=24):
    """The built-in demo scaled to `cell` (it has 2.5 cm cells): a ball dropped and one thrown in at a slant, sizes
    in proportion, speeds by the square root (the same Froude number), the preset otherwise unchanged.
    Returns the scene and the dropped ball's speed as it reaches the sand."""
    s = cell / 0.025
    u = math.sqrt(s)

    def ball(name, radius, centre, velocity):
        return placed(name, uv_sphere((0, 0, 0), radius * s, 12, 24), (centre[0] * s, 0.0, 0.1 + centre[2] * s),
                      density=1200.0, initial_velocity=(velocity[0] * u, 0.0, velocity[2] * u))

    params = dict(preset_parameters(preset), cell_size=cell, element_radius=cell / 2)
    objects = [real_bed((-0.8 * s, -0.5 * s), (0.8 * s, 0.5 * s)), ball("Ball", 0.1, (-0.35, 0, 0.35), (0, 0, -2.0)),
               ball("Thrown", 0.08, (-0.05, 0, 0.3), (1.0, 0, -1.5))]
    impact = math.sqrt(2.0 ** 2 + 2.0 * 9.81 * 0.25) * u
    return tsubu.SceneDescription("sand", params, 1, frames, 24.0, 0, objects), impact


def column_real(cell, preset, frames=48):
    """A column of the preset's sand (12 cells across, 16 high) standing on a flat bed 40 cells square at the
    scene's start, free to fall: the sand's own angle of repose makes a cone of it. Heights are above z = 0.1."""
    size, radius, height = 40 * cell, 6 * cell, 16 * cell
    xs = np.linspace(0.0, size, 81)
    v, t = height_grid(xs, xs, lambda X, Y: 0.1 + np.where(np.hypot(X - size / 2, Y - size / 2) < radius, height, 0.0))
    params = dict(preset_parameters(preset), cell_size=cell, element_radius=cell / 2)
    return tsubu.SceneDescription("sand", params, 1, frames, 24.0, 0, [tsubu.SceneObject("Sand", "bed", v, t)])


def resting_cube(cell=0.02, preset="Dry Sand", half=None, density=1000.0, dem_depth=0.0, frames=48,
                 velocity=(0.0, 0.0, 0.0), **settings):
    """A cube of side 2 `half` (m; 5 cells by default) set a tenth of a cell above the middle of a bed of `preset`
    30 cells square, whose surface is 5 cells up (0.6 m and 0.1 m at the default 2 cm cells), and let go with
    `velocity`; `settings` override the preset's. Returns the scene (the cube is "Cube") and the height of its centre
    resting on the surface."""
    half = 2.5 * cell if half is None else half
    surface = 5 * cell
    params = dict(preset_parameters(preset), cell_size=cell, element_radius=cell / 2, dem_depth=dem_depth,
                  **settings)
    cube = placed("Cube", box((-half,) * 3, (half,) * 3), (15 * cell, 15 * cell, surface + half + 0.1 * cell),
                  density=density, initial_velocity=velocity)
    ground = real_bed((0, 0), (30 * cell, 30 * cell), surface)
    return tsubu.SceneDescription("sand", params, 1, frames, 24.0, 0, [ground, cube]), surface + half


def balls_meeting(wall=False, frames=48, fps=96.0):
    """Two 16 cm balls of 1000 kg/m^3 over a Dry Sand bed (2 cm cells, surface 10 cm up): "Target" set on the sand,
    "Ball" thrown at it at 3 m/s from 3 cm higher and 30 cm away - or, with `wall`, thrown level at a keyframed wall
    4 cm thick standing on the sand ("Wall", its face at x = 0.8 m) from 40 cm before it."""
    radius, surface = 0.08, 0.1
    params = dict(preset_parameters("Dry Sand"), cell_size=0.02, element_radius=0.01)
    objects = [real_bed((0, 0), (1.2, 0.6), surface)]
    if wall:
        still = np.array([[0.82, 0.3, surface + 0.151]] * frames)
        objects.append(keyframed("Wall", (-0.02, -0.2, -0.15), (0.02, 0.2, 0.15), still))
        objects.append(placed("Ball", uv_sphere((0, 0, 0), radius, 16, 32), (0.4, 0.3, surface + radius + 0.03),
                              density=1000.0, initial_velocity=(3.0, 0.0, 0.0)))
    else:
        objects.append(placed("Target", uv_sphere((0, 0, 0), radius, 16, 32), (0.6, 0.3, surface + radius + 0.002),
                              density=1000.0))
        objects.append(placed("Ball", uv_sphere((0, 0, 0), radius, 16, 32), (0.3, 0.3, surface + radius + 0.03),
                              density=1000.0, initial_velocity=(3.0, 0.0, 0.0)))
    return tsubu.SceneDescription("sand", params, 1, frames, fps, 0, objects), radius
