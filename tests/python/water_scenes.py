"""Small water scenes for the physical tests (coarse particles so each bakes in seconds)."""
import numpy as np

import tsubu
from tsubu.effects.water import CLOSED, OPEN
from tsubu.shapes import box, open_box_walls


def obj(name, role, lo, hi, matrices=None, **params):
    v, t = box(lo, hi)
    return tsubu.SceneObject(name, role, v, t, matrices=matrices, params=params)


def tank(frames, size=(0.5, 0.5, 0.6), depth=0.4, radius=0.025, extra=(), **params):
    """A closed tank (domain walls) filled to `depth`."""
    settings = {"particle_radius": radius, "write_surface": False, **CLOSED}
    settings.update(params)
    objects = [obj("Domain", "domain", (0, 0, 0), size), obj("Water", "fluid", (0, 0, 0), (size[0], size[1], depth))]
    return tsubu.SceneDescription("water", settings, 1, frames, 24.0, 0, objects + list(extra))


def moving_cup(frames, shift=0.3):
    """Liquid in an open cup (five wall boxes) carried sideways by `shift` metres over the bake."""
    lo, hi = (0.2, 0.2, 0.05), (0.6, 0.6, 0.5)
    matrices = np.repeat(np.eye(4)[None], frames, axis=0)
    s = np.linspace(0.0, 1.0, frames)
    matrices[:, 0, 3] = shift * (3 * s ** 2 - 2 * s ** 3)  # eased: starts and stops at rest
    walls = [tsubu.SceneObject(f"Cup{i}", "obstacle", v, t, matrices=matrices)
             for i, (v, t) in enumerate(open_box_walls(lo, hi, 0.06))]
    objects = [obj("Domain", "domain", (-0.2, -0.2, -0.2), (1.4, 1.0, 1.0)),
               obj("Water", "fluid", lo, (hi[0], hi[1], 0.3))] + walls
    settings = {"particle_radius": 0.025, "write_surface": False, **OPEN}
    return tsubu.SceneDescription("water", settings, 1, frames, 24.0, 0, objects), lo, hi


def meshed_level(cache, frame, side, centre, away):
    """The height of the meshed surface of a tank `side` m square with its corner at the origin: the zero of the
    surface stream's signed distance, interpolated along each voxel column, averaged over the columns further than
    `away` (m) from `centre` and 5 cm from the walls - the level an artist sees, where the particles' volume ends
    (surface_anisotropic.c)."""
    values, origin, voxel = cache.read_volume("surface", frame)["surface"]
    nz, ny, nx = values.shape
    X, Y = np.meshgrid(origin[0] + voxel * np.arange(nx), origin[1] + voxel * np.arange(ny))  # [y, x]
    keep = (np.hypot(X - centre[0], Y - centre[1]) > away) & (np.minimum.reduce([X, Y, side - X, side - Y]) > 0.05)
    columns = values.transpose(1, 2, 0)[keep]                 # [column, z]
    crossing = (columns[:, :-1] < 0) & (columns[:, 1:] >= 0)  # inside below, outside above
    columns, crossing = columns[crossing.any(axis=1)], crossing[crossing.any(axis=1)]
    k = nz - 2 - np.argmax(crossing[:, ::-1], axis=1)         # the highest crossing of each column
    a, b = np.take_along_axis(columns, k[:, None], 1)[:, 0], np.take_along_axis(columns, k[:, None] + 1, 1)[:, 0]
    return float(np.mean(origin[2] + voxel * (k + a / (a - b))))
