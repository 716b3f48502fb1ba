"""Sand: objects dent, plough and spatter a sand bed (Onoue & Nishita).

Paper: ../shared/papers/sand-dem-spattering-onoue-nishita.txt. The solver is
csrc/core/sand.c; this module declares what a user can set and turns a scene
description into the solver's input.
"""
import math

import numpy as np

from .._native import _core
from ..baking import core_runner, register_runner
from ..errors import ValidationError
from ..schema import Param, Role, Schema, register
from ..transforms import keyframed_motion, object_input

PARAMS = (
    Param("cell_size", "float", 0.02, "Side of a heightfield cell of the bed (the paper's unit length)", unit="m",
          min=1e-4, max=100.0, group="Bed"),
    Param("noise", "float", 0.0, "Amplitude of random bumps on the initial surface (§3.1)", unit="m", min=0.0,
          max=100.0, group="Bed"),
    Param("angle_of_repose", "float", 33.0, "The steepest slope loose sand stands at: steeper slopes of the bed "
          "(a pile, a dent's walls, landed spatter) run down until they are this steep; 90: they hold any slope",
          unit="°", min=1.0, max=90.0, group="Bed", label="Repose Angle"),
    Param("bulk_density", "float", 1600.0, "Density of the sand bed (dry sand about 1600)", unit="kg/m³", min=1e-9,
          max=30000.0, group="Bed", label="Density"),
    Param("element_radius", "float", 0.01, "Radius of a distinct element (DE) standing for many grains; half the "
          "cell size is the paper's choice", unit="m", min=1e-5, max=100.0, group="Grains"),
    Param("grains_per_element", "int", 30, "Airborne grains a DE splits into when it spatters (the paper: 30)",
          min=1, max=1000, group="Grains", label="Grains/Element"),
    Param("friction", "float", 0.5, "Coulomb friction mu between elements and on objects (eq. A-6)", min=0.0,
          max=10.0, group="Grains"),
    Param("restitution", "float", 0.3, "Rebound speed / impact speed of a contact, e_n (eqs A-9, A-10)", min=0.01,
          max=1.0, group="Grains"),
    Param("rolling_friction", "float", 0.0, "Rolling resistance mu_r (LIGGGHTS' EPSD2): the torque that stops grains "
          "rolling over one another, at most mu_r x the pair's radius x its normal force: what gives a heap its angle "
          "of repose; 0: none (not yet calibrated per preset: see docs/sand.md)", min=0.0, max=10.0, group="Grains",
          advanced=True),
    Param("unloading_stiffness", "float", 4.0, "Contacts unload along a spring this many times stiffer than they "
          "load (Walton & Braun's hysteresis, its memory fading over 2 contact times): a bed that a load presses in "
          "keeps most of that energy instead of throwing the load back, so a stone set on the sand settles instead "
          "of bobbing; at rest a contact is the plain spring, so objects rest as deep as without it. 1: the paper's "
          "linear spring", min=1.0, max=20.0, group="Grains", advanced=True, label="Hysteresis"),
    Param("contact_time", "float", 0.0, "Duration of a collision t_c (eq. A-9): shorter is stiffer and slower to "
          "bake; 0: from the element radius, so a DE's own weight presses its contact 1.7 % of its radius in "
          "(0.014 s for 1 cm elements), stiffer under a heavy object, the more so through a deep DEM layer (down "
          "to 0.6 %)", unit="s", min=0.0, max=10.0, group="Grains", automatic="contact_time"),
    Param("split_speed", "float", 0.3, "A DE thrown free of the surface faster than this upward spatters into grains",
          unit="m/s", min=1e-4, max=1000.0, group="Spatter"),
    Param("resting_gap", "float", 0.5, "A DE within this many element radii above an object rests on it (shown "
          "with the grains, not the bed)", min=0.01, max=100.0, group="Spatter", advanced=True),
    Param("cone_angle", "float", 15.0, "Spread of the spattered grains' directions (half-angle of the cone)",
          unit="°", min=0.0, max=90.0, group="Spatter"),
    Param("dem_depth", "float", 0.0, "Depth of the moving layer below the surface; 0: half the object's height "
          "(a heavy object's: at least its footprint's width), at most what the contacts carry",
          label="DEM Depth", unit="m", min=0.0, max=1000.0, group="Region", automatic="dem_depth"),
    Param("grow_force", "float", 10.0, "The DEM region grows where a moving edge DE pushes the sand beside it harder "
          "than this many times its weight (plus, below the surface, the pressure sand there holds)", min=0.01,
          max=1e6, group="Region", advanced=True),
    Param("rest_force", "float", 0.05, "DEs with net force below this many weights ...", min=0.0, max=100.0,
          group="Region", advanced=True),
    Param("rest_speed", "float", 0.005, "... and slower than this are not updated (§4.3.3 step 2)", unit="m/s",
          min=0.0, max=100.0, group="Region", advanced=True),
    Param("smoothing", "int", 2, "Smoothing passes of the rebuilt surface in the region (§4.4)", min=0, max=100,
          group="Output"),
    Param("gravity", "vector", (0.0, 0.0, -9.81), "Acceleration of gravity (Blender's Z is up)", unit="m/s²",
          min=-1000.0, max=1000.0, group="World"),
    Param("steps_per_contact", "float", 10.0, "Substeps per contact time: the step is t_c / this", min=2.0,
          max=1000.0, group="Time", advanced=True, label="Contact Steps"),
    Param("max_substeps", "int", 5000, "Upper bound of substeps per frame", min=1, max=100000, group="Time"),
    Param("max_elements", "int", 2_000_000, "Memory budget: a bake that would need more DEs stops with a message",
          min=1, max=200_000_000, group="Time", advanced=True),
)

MOTIONS = (
    ("simulated", "Simulated", "A rigid body of its density, pushed and slowed by the sand"),
    ("animated", "Animated", "Moved by its keyframes with infinite mass: ploughs and leaves footprints"),
)

ROLES = (
    Role("bed", "Sand Bed", "The ground (a plane or a grid mesh whose heights shape the bed) and the holder of the "
         "settings; it deforms as objects dent and plough it", needs_closed_mesh=False, max_count=1,
         holds_settings=True),
    Role("object", "Sand Object", "A closed mesh that hits the sand: simulated by its density, or animated", params=(
        Param("motion", "enum", "simulated", "How the object moves", items=MOTIONS),
        Param("density", "float", 2000.0, "Density of a simulated object", unit="kg/m³", min=1e-9, max=1e6),
        Param("initial_velocity", "vector", (0.0, 0.0, 0.0), "Velocity at the start (a throw)", unit="m/s",
              min=-1000.0, max=1000.0),
        Param("initial_angular_velocity", "vector", (0.0, 0.0, 0.0), "Spin at the start",
              unit="rad/s", min=-1000.0, max=1000.0, label="Spin"),
    )),
)

SAND = register(Schema(
    effect="sand",
    label="Sand",
    help="Objects dropped, thrown or dragged into a sand bed dent and plough it and spatter grains that fly and land.",
    params=PARAMS,
    roles=ROLES,
    paper="sand-dem-spattering-onoue-nishita.txt",
))


MAX_COLUMNS = 1e8  # 1.6 GB of heights and region masks: far beyond any bed an artist bakes


def bed_grid(desc):
    """The heightfield grid over the Sand Bed's extent seen from above: nx, ny, x0, y0, cell."""
    v = desc.objects_with_role("bed")[0].world_vertices()
    cell = desc.parameters["cell_size"]
    lo, hi = v.min(axis=0).astype(np.float64), v.max(axis=0).astype(np.float64)
    size = hi - lo
    columns = (size[0] / cell) * (size[1] / cell) if np.isfinite(size).all() else math.inf
    if not columns <= MAX_COLUMNS:
        name = desc.objects_with_role("bed")[0].name
        raise ValidationError([f"object '{name}': the Sand Bed spans {size[0]:.3g} m by {size[1]:.3g} m, "
                               f"{columns:.3g} columns of cell_size {cell:g} m, more than {MAX_COLUMNS:g}; "
                               "use a larger cell_size or a smaller bed"], "sand scene")
    nx, ny = (int(math.floor((hi[a] - lo[a]) / cell + 1e-6)) for a in (0, 1))
    return {"nx": nx, "ny": ny, "x0": float(lo[0]), "y0": float(lo[1]), "cell": float(cell)}


def solver_input(desc):
    """(settings, objects) for _core.sand_bake from a validated description."""
    grid = bed_grid(desc)
    settings = SAND.solver_settings(desc.parameters, nx=grid["nx"], ny=grid["ny"], x0=grid["x0"], y0=grid["y0"],
                                    seed=desc.seed)
    objects = []
    for o in desc.objects:
        motion = keyframed_motion(o) if o.params.get("motion") == "animated" else None
        objects.append(object_input(o, 0 if o.role == "bed" else 1, motion))
    return settings, objects


# the "volume" table's columns (csrc/core/sand.c, write_volume) as the panel names them
VOLUME_COLUMNS = {"bed": "In the bed (above z = 0)", "elements": "In the DEM layer", "airborne": "Airborne",
                  "over_edges": "Over the bed's edges", "total": "Total"}


def streams(desc):
    out = {"ground": dict(kind="heightfield", object=desc.objects_with_role("bed")[0].name, **bed_grid(desc)),
           "grains": {"kind": "particles"},
           "volume": {"kind": "table", "label": "Sand volume", "unit": "m³", "columns": VOLUME_COLUMNS}}
    names = [o.name for o in desc.objects_with_role("object")]
    if names:
        out["rigid"] = {"kind": "transforms", "objects": names}
    return out


register_runner("sand", core_runner(streams, solver_input, _core.sand_bake))
