"""Small erosion scenes in metres for the physical tests (coarse particles so each bakes in seconds)."""
import numpy as np

import tsubu
from tsubu.shapes import box, height_grid


def heightfield(name, role, x, y, height, **params):
    """An open grid mesh over the points x (n) by y (m) at heights height(X, Y): a terrain seen from above."""
    v, t = height_grid(x, y, height)
    return tsubu.SceneObject(name, role, v, t, params=params)


def block(name, role, lo, hi, **params):
    v, t = box(lo, hi)
    return tsubu.SceneObject(name, role, v, t, params=params)


def levee_profile(x):
    """Fujisawa's overtopping levee (the erosion paper's sec. 4.2, fig. 9), at 1:4: a 0.25 m crest over a
    0.05 m bed, upstream slope 1:1, a 0.1 m crest, downstream slope 1:2."""
    bed, crest = 0.05, 0.30
    up = np.clip((x - 0.25) / 0.25, 0, 1)
    down = np.clip((1.1 - x) / 0.5, 0, 1)
    return bed + (crest - bed) * np.minimum(up, down)


LEVEE_WIDTH = 0.12


def levee(frames, critical_shear, erosion_strength, radius=0.01, **settings):
    """A channel across the levee: a reservoir filled to the crest and topped up from upstream, so that the
    water rises over the crest, overtops it and runs down the downstream slope, as in the flume."""
    w = LEVEE_WIDTH
    ground = heightfield("Levee", "terrain", np.linspace(-0.1, 1.4, 76), np.linspace(-0.1, w + 0.1, 8),
                         lambda X, Y: levee_profile(X))  # under the banks too: no slot beside the channel
    sides = [block("BankL", "obstacle", (-0.1, -0.1, -0.1), (1.5, 0.0, 0.6)),
             block("BankR", "obstacle", (-0.1, w, -0.1), (1.5, w + 0.1, 0.6)),
             block("Gate", "obstacle", (-0.1, -0.1, -0.1), (0.0, w + 0.1, 0.6))]
    lake = block("Reservoir", "fluid", (0.0, 0.0, 0.05), (0.5, w, 0.30))
    source = block("Source", "inflow", (0.0, 0.0, 0.30), (0.06, w, 0.40), velocity=[1.0, 0.0, 0.0], emit_start=1,
                   emit_end=frames)
    params = {"particle_radius": radius, "voxel_size": 2 * radius, "critical_shear": critical_shear,
              "erosion_strength": erosion_strength}
    params.update(settings)
    return tsubu.SceneDescription("erosion", params, 1, frames, 24.0, 0, [ground, lake, source] + sides)


def surface_heights(cache, frame, xs, y, stream="terrain"):
    """The ground's height (density 0.5, searched down from the top) at each x of a line at y."""
    from tsubu import _core
    grid = _core.read_vdb(cache.path(stream, frame))[0]
    zs = np.arange(0.6, -0.02, -0.0025)
    out = []
    for x in xs:
        d = np.array([grid.sample((x, y, z)) for z in zs])
        k = int(np.argmax(d >= 0.5))
        out.append(zs[k] if d[k] >= 0.5 else np.nan)
    return np.array(out)


def ground(cache, frame, stream="terrain"):
    """The terrain's density at a frame: (array [z, y, x], origin, voxel)."""
    from tsubu import _core
    values, origin, voxel = _core.read_vdb(cache.path(stream, frame))[0].to_dense()
    return values, np.array(origin), voxel


def ground_by_x(cache, frame, edges):
    """Solid volume (m^3) of the ground in each band [edges[i], edges[i+1]) of x."""
    values, origin, voxel = ground(cache, frame)
    x = origin[0] + voxel * np.arange(values.shape[2])
    per_x = values.sum(axis=(0, 1)) * voxel ** 3
    return np.array([per_x[(x >= a) & (x < b)].sum() for a, b in zip(edges[:-1], edges[1:])])
