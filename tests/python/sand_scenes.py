"""Sand scenes for the physical tests, in the paper's units (§5: cell 1, DE radius 0.5,
DE mass 0.05, mu 0.1, sphere radius 15) with a shallow DEM layer so each bakes in seconds."""
import math

import numpy as np

import tsubu
from tsubu.shapes import box, grid_plane, uv_sphere

DE_MASS = 0.05
DE_RADIUS = 0.5
BULK = DE_MASS / (4 * math.sqrt(2) * DE_RADIUS ** 3)  # kg per unit volume that gives a lattice DE this mass
PAPER = {"cell_size": 1.0, "element_radius": DE_RADIUS, "bulk_density": BULK, "friction": 0.1,
         "restitution": 0.3, "contact_time": 0.1, "dem_depth": 4.0, "split_speed": 2.0, "grow_force": 10.0,
         "rest_speed": 0.05, "gravity": (0.0, 0.0, -9.81)}


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
