"""Erosion: SPH water carving a voxel terrain (Otsubo & Kusama).

Paper: ../shared/papers/sph-voxel-erosion-otsubo-kusama.txt. The solver is
csrc/core/erosion.c over the shared SPH model and the voxel terrain
(csrc/core/terrain.c); this module declares what a user can set and turns a
scene description into the solver's input.
"""

import numpy as np

from .._native import _core
from ..baking import core_runner, register_runner
from ..schema import Param, Role, Schema, register
from ..transforms import object_input, relative_motion
from .surface_params import surface_params

PARAMS = (
    Param("particle_radius", "float", 0.02, "Half the spacing of water particles; sets the water's resolution",
          unit="m", min=0.001, max=1.0, group="Water"),
    Param("rest_density", "float", 1000.0, "Density of the water at rest", unit="kg/m³", min=1.0, max=30000.0,
          group="Water", advanced=True, label="Density"),
    Param("speed_of_sound", "float", 30.0,
          "Stiffness as a speed of sound (Tait equation); about 10x the fastest flow keeps density within 1%",
          unit="m/s", min=1.0, max=1000.0, group="Water"),
    Param("viscosity", "float", 0.001, "Dynamic viscosity (water 0.001; mud flows 0.1 and up)", unit="Pa·s",
          min=0.0, max=1000.0, group="Water", advanced=True),
    Param("artificial_viscosity", "float", 0.08,
          "alpha of the artificial viscosity (sec. 2.4, 0.08-0.5); also sets the ground's wall friction",
          min=0.0, max=1.0, group="Water", advanced=True, label="Art. Viscosity"),
    Param("surface_tension", "float", 0.0728, "Colour-field surface tension", unit="N/m", min=0.0, max=100.0,
          group="Water", advanced=True, label="Tension"),
    Param("wall_friction", "float", 0.1,
          "Friction of the ground on the water, as a share of the no-slip wall of sec. 3.2 (0 slides freely); "
          "obstacles lose this share of sliding speed at contact", min=0.0, max=1.0, group="Water",
          advanced=True),
    Param("wall_attraction", "float", 0.5,
          "How strongly a thin flow clings to the ground, as a share of gravity (sec. 4.3): it follows the "
          "ground into hollows and over edges; below 1 a drop under a roof still falls", min=0.0, max=1.0,
          group="Water", advanced=True),
    Param("gravity", "vector", (0.0, 0.0, -9.81), "Acceleration of gravity (Blender's Z is up)", unit="m/s²",
          min=-1000.0, max=1000.0, group="World"),
    Param("voxel_size", "float", 0.04, "Size of the terrain's voxels; at most 4x the particle radius",
          unit="m", min=0.001, max=10.0, group="Terrain"),
    Param("erosion_strength", "float", 0.05,
          "K_e: how fast the ground wears where the shear passes the critical value (voxel fraction per second)",
          min=0.0, max=1000.0, group="Terrain"),
    Param("critical_shear", "float", 6.0,
          "tau_c: shear the ground resists; high values erode only fast flow (levee toe), low ones everywhere",
          min=0.0, max=1000.0, group="Terrain"),
    Param("shear_exponent", "float", 0.5, "n in tau = theta^n (0.5: a pseudo-plastic soil)", min=0.1, max=2.0,
          group="Terrain", advanced=True),
    Param("erosion_interval", "int", 50, "SPH steps between erosion updates (the paper: 50)", min=1, max=10000,
          group="Terrain", advanced=True),
    Param("erosion_floor", "float", -1e6, "No erosion below this height: bedrock (the default is off)", unit="m",
          min=-1e6, max=1e6, group="Terrain", advanced=True),
    Param("keep_sediment", "bool", True,
          "The water carries what it erodes and drops it where it slows; off: it vanishes, as in the paper",
          group="Sediment"),
    Param("settling_speed", "float", 0.1, "Sediment settles from water slower than this", unit="m/s", min=0.0,
          max=100.0, group="Sediment"),
    Param("settling_rate", "float", 1.0, "Share of the sediment that settles per second from still water",
          unit="1/s", min=0.0, max=1000.0, group="Sediment", advanced=True, label="Settling"),
    Param("rain_rate", "float", 20000.0,
          "Rain over the Rain objects' area (a cloudburst is 100; effects need far more to show in seconds)",
          label="Rain rate (mm/h)", unit="mm/h", min=0.0, max=1e7, group="Rain"),
    Param("rain_drop_particles", "int", 5, "Particles per raindrop (sec. 5.1: 5)", min=1, max=27, group="Rain",
          advanced=True, label="Drop Particles"),
    Param("rain_speed", "float", 4.0, "Falling speed of new drops", unit="m/s", min=0.0, max=100.0, group="Rain"),
    Param("cfl_number", "float", 0.4, "Courant number: substep = cfl x h / (fastest speed)", min=0.01, max=1.0,
          group="Time", advanced=True),
    Param("max_substeps", "int", 400, "Upper bound of substeps per frame (the CFL condition picks fewer)",
          min=1, max=100000, group="Time"),
    Param("max_particles", "int", 4_000_000, "Memory budget: rain and inflows pause while the water holds this "
          "many particles", min=1, max=200_000_000, group="Time", advanced=True),
    Param("write_surface", "bool", False, "Write a water surface level set per frame for meshing", group="Output"),
    *surface_params(advanced=True),
)

FRAMES = (
    Param("emit_start", "int", 1, "First frame of emission", min=-1_000_000, max=1_000_000),
    Param("emit_end", "int", 100, "Last frame of emission", min=-1_000_000, max=1_000_000),
)

ROLES = (
    Role("terrain", "Terrain", "The ground that erodes - a closed mesh (caves and overhangs kept) or an open "
         "heightfield/plane filled below; holds the settings and the cache; the domain is everything's bounds",
         needs_closed_mesh=False, max_count=1, holds_settings=True),
    Role("rain", "Rain", "Drops fall from its faces (a plane above the ground) over a frame range",
         needs_closed_mesh=False, params=FRAMES),
    Role("inflow", "Inflow", "A closed mesh kept full of water moving at a velocity over a frame range (a river's "
         "source)", params=(Param("velocity", "vector", (0.0, 0.0, 0.0), "Velocity of emitted water", unit="m/s",
                                  min=-1000.0, max=1000.0),) + FRAMES),
    Role("fluid", "Fluid", "A closed mesh filled with water at the start (a lake; ground inside it is left dry)",
         params=(Param("initial_velocity", "vector", (0.0, 0.0, 0.0), "Velocity at the start", unit="m/s",
                       min=-1000.0, max=1000.0),)),
    Role("sink", "Sink", "Water inside this closed mesh is removed and counted, with its sediment"),
    Role("obstacle", "Obstacle", "A closed mesh the water cannot enter and that does not erode: static, or moved "
         "by its animation"),
)

EROSION = register(Schema(
    effect="erosion",
    label="Erosion",
    help="Rain and rivers of SPH water carve a voxel terrain: gullies, scour, caves and overhangs; the water "
         "carries what it erodes and drops it where it slows.",
    params=PARAMS,
    roles=ROLES,
    paper="sph-voxel-erosion-otsubo-kusama.txt",
))

ROLE_CODES = {"terrain": 0, "fluid": 1, "inflow": 2, "rain": 3, "sink": 4, "obstacle": 5}
WATER_ROLES = ("terrain", "fluid", "inflow", "rain")


def domain_box(desc):
    """The bounds of the ground and of every water source, one voxel wider, with two kernel radii more
    above them (room for splashes) and below (ground to erode into): water leaving it is removed and
    counted."""
    points = np.concatenate([o.world_vertices() for o in desc.objects if o.role in WATER_ROLES])
    voxel, kernel = desc.parameters["voxel_size"], 4.0 * desc.parameters["particle_radius"]
    lo, hi = points.min(axis=0) - voxel, points.max(axis=0) + voxel
    lo[2] -= 2.0 * kernel
    hi[2] += 2.0 * kernel
    return lo.tolist(), hi.tolist()


def solver_input(desc):
    """(settings, objects) for _core.erosion_bake from a validated description."""
    lo, hi = domain_box(desc)
    settings = EROSION.solver_settings(desc.parameters, domain_min=lo, domain_max=hi, seed=desc.seed)
    objects = []
    for o in desc.objects:
        q = o.params
        objects.append(object_input(o, ROLE_CODES[o.role], relative_motion(o),
                                    velocity=q.get("initial_velocity", q.get("velocity", [0.0, 0.0, 0.0])),
                                    emit_start=q.get("emit_start", 0), emit_end=q.get("emit_end", -1)))
    return settings, objects


def streams(desc):
    terrain = desc.objects_with_role("terrain")[0].name
    out = {"fluid": {"kind": "particles"},
           "terrain": {"kind": "volume", "grids": ["density"], "mesh": {"grid": "density", "threshold": 0.5,
                                                                        "materials_of": terrain}},
           "budget": {"kind": "table", "label": "Erosion budget", "unit": "m³"}}
    if desc.parameters["write_surface"]:
        out["surface"] = {"kind": "volume", "grids": ["surface"], "particles": "fluid"}
    return out


register_runner("erosion", core_runner(streams, solver_input, _core.erosion_bake))
