"""Fracture: an object shatters under impacts; a painted brittleness map
decides what stays whole (Imagire, Johan & Nishita).

Paper: ../shared/papers/edem-fracture-brittleness-map-imagire-johan-nishita.txt.
The solver is csrc/core/fracture.c; this module declares what a user can set
and turns a scene description into the solver's input.
"""

import numpy as np

from .._native import _core
from ..baking import core_runner, register_runner
from ..errors import ValidationError
from ..schema import Param, Role, Schema, register
from ..transforms import keyframed_motion, object_input, relative_motion

PARAMS = (
    Param("element_count", "int", 2048, "Elements (equal spheres) the Breakable is made of; each becomes one "
          "Voronoi piece", min=5, max=2_000_000, group="Elements"),
    Param("element_radius", "float", 0.0, "Radius r of an element; 0: from the count and the object's volume",
          automatic="element_radius",
          unit="m", min=0.0, max=100.0, group="Elements"),
    Param("density", "float", 2400.0, "Density of the Breakable (concrete about 2400)", unit="kg/m³", min=1e-6,
          max=1e6, group="Elements"),
    Param("p0", "float", 1.0, "Strength of the lowest level of springs (eq. 1): the hard region and the closest "
          "pairs", label="Strength p0", min=1e-6, max=1e6, group="Strength"),
    Param("pH", "float", 0.001, "Strength of the highest level (eq. 1): the seams between the largest pieces",
          label="Strength pH", min=1e-6, max=1e6, group="Strength"),
    Param("n", "float", 30.0, "Exponent of eq. 1: large gives few large pieces, near 0 many small ones",
          label="Size Exponent n", min=0.0, max=1000.0, group="Strength"),
    Param("strain_limit", "float", 0.02, "Stretch or squeeze (fraction of its length) that breaks a spring of "
          "strength 1", min=1e-6, max=10.0, group="Strength"),
    Param("bend_limit", "float", 10.0, "Bend that breaks a spring of strength 1 (appendix A)", unit="°", min=1e-3,
          max=180.0, group="Strength"),
    Param("twist_limit", "float", 20.0, "Twist that breaks a spring of strength 1 (appendix A)", unit="°",
          min=1e-3, max=180.0, group="Strength"),
    Param("bond_stiffness", "float", 1.0, "Pore spring stiffness k_p as a multiple of the contact stiffness",
          min=1e-3, max=1000.0, group="Strength", advanced=True),
    Param("hard_threshold", "float", 0.5, "Map values below this are hard: their springs form the strongest level",
          min=0.0, max=1.0, group="Brittleness Map"),
    Param("max_spring_length", "float", 1.6, "Delaunay edges longer than this many median edges get no spring",
          min=1.0, max=10.0, group="Elements", advanced=True, label="Max Spring Span"),
    Param("contact_time", "float", 0.0, "Duration of a collision t_c (sets the contact and spring stiffness): "
          "shorter is stiffer and slower to bake; 0: from the element size and the object's size and shape, so "
          "the object bears its own weight alike at every scale and element count. The break limits follow it, so "
          "the same blow breaks the same springs at any stiffness", unit="s", min=0.0, max=10.0,
          group="Contacts"),
    Param("restitution", "float", 0.3, "Rebound speed / impact speed of a contact", min=0.01, max=1.0,
          group="Contacts"),
    Param("friction", "float", 0.5, "Coulomb limit of the tangential dashpot", min=0.0, max=10.0, group="Contacts"),
    Param("debris_energy", "float", 0.005, "A breaking spring releasing this much energy throws one debris "
          "particle (up to 8); 0: no debris", unit="J", min=0.0, max=1e9, group="Debris", label="Energy"),
    Param("debris_size", "float", 0.004, "Characteristic diameter of the Rosin-Rammler size distribution",
          unit="m", min=1e-6, max=10.0, group="Debris"),
    Param("debris_spread", "float", 1.5, "Rosin-Rammler exponent: larger gives more uniform sizes", min=0.1,
          max=20.0, group="Debris"),
    Param("max_debris", "int", 200_000, "Debris particles at most", min=0, max=100_000_000, group="Debris",
          advanced=True),
    Param("anchored", "bool", False, "Elements touching an Obstacle at the start are held fixed, like a wall set in "
          "the ground; off: the object stands free and may topple", group="World"),
    Param("gravity", "vector", (0.0, 0.0, -9.81), "Acceleration of gravity (Blender's Z is up)", unit="m/s²",
          min=-1000.0, max=1000.0, group="World"),
    Param("steps_per_contact", "float", 15.0, "Substeps per contact time (the springs may ask for more)", min=2.0,
          max=1000.0, group="Time", advanced=True, label="Contact Steps"),
    Param("max_substeps", "int", 2000, "Upper bound of substeps per frame", min=1, max=100000, group="Time"),
)

PROJECTIONS = (
    ("uv", "UV Map", "The object's active UV map, read at the surface point nearest each spring"),
    ("planar_x", "Planar X", "Projected along X over the object's bounds (u from Y, v from Z)"),
    ("planar_y", "Planar Y", "Projected along Y over the object's bounds (u from X, v from Z): the paper's wall"),
    ("planar_z", "Planar Z", "Projected along Z over the object's bounds (u from X, v from Y)"),
)
PROJECTION_CODES = {name: i for i, (name, _, _) in enumerate(PROJECTIONS)}

MOTIONS = (
    ("simulated", "Simulated", "A rigid body of its density, fired with its initial velocity at its launch frame"),
    ("animated", "Animated", "Moved by its keyframes with infinite mass"),
)

ROLES = (
    Role("breakable", "Breakable", "The closed mesh that shatters, and the holder of the settings", max_count=1,
         holds_settings=True, params=(
             Param("brittleness_image", "image", "", "Brittleness map: black stays whole, white may break, grey "
                   "in between; none: no hard region", label="Brittleness Map"),
             Param("projection", "enum", "uv", "How the map is laid on the object", items=PROJECTIONS),
         )),
    Role("projectile", "Projectile", "A closed mesh fired at the Breakable, acting as one large element (a sphere "
         "around its centre of mass)", params=(
             Param("motion", "enum", "simulated", "How the projectile moves", items=MOTIONS),
             Param("density", "float", 7800.0, "Density of a simulated projectile", unit="kg/m³", min=1e-6,
                   max=1e6),
             Param("initial_velocity", "vector", (0.0, 5.0, 0.0), "Velocity when fired", unit="m/s", min=-1000.0,
                   max=1000.0),
             Param("initial_angular_velocity", "vector", (0.0, 0.0, 0.0), "Spin when fired",
                   unit="rad/s", min=-1000.0, max=1000.0, label="Spin"),
             Param("launch_frame", "int", 1, "Frame it is fired at; before it, it waits and touches nothing",
                   min=-100000, max=100000),
         )),
    Role("obstacle", "Obstacle", "Ground, walls: a closed mesh the pieces and debris collide with, static or "
         "keyframed"),
)

FRACTURE = register(Schema(
    effect="fracture",
    label="Fracture",
    help="An object shatters into Voronoi pieces under projectiles; a painted brittleness map keeps the dark "
         "region whole.",
    params=PARAMS,
    roles=ROLES,
    paper="edem-fracture-brittleness-map-imagire-johan-nishita.txt",
))

ROLE_CODES = {"breakable": 0, "projectile": 1, "obstacle": 2}


def _breakable_arrays(o):
    """(corner_uv, brittleness, projection code) of the Breakable, checked."""
    q = o.params
    image_name = q.get("brittleness_image", "")
    image = o.arrays.get("brittleness")
    projection = q.get("projection", "uv")
    uv = o.arrays.get("uv")
    problems = []
    if image_name and image is None:
        problems.append(f"its brittleness image '{image_name}' has no pixels (a missing file?): in Blender reload "
                        "or replace the image; from Python give a PNG file's path or arrays['brittleness']")
    if image is not None:
        image = np.asarray(image, np.float32)
        if image.ndim != 2 or image.size == 0:
            problems.append(f"its brittleness image must be a 2D grey array, got shape {image.shape}")
        if projection == "uv" and uv is None:
            problems.append("the brittleness map is laid by UV but the object has no UV map: unwrap it or choose "
                            "a planar projection")
    if problems:
        raise ValidationError(problems, f"breakable '{o.name}'")
    if uv is not None:
        uv = np.ascontiguousarray(uv, np.float32).reshape(-1, 3, 2)
    return uv, image, PROJECTION_CODES[projection]


def solver_input(desc):
    """(settings, objects) for _core.fracture_bake from a validated description."""
    settings = FRACTURE.solver_settings(desc.parameters, seed=desc.seed)
    objects = []
    for o in desc.objects:
        q = o.params
        entry = object_input(o, ROLE_CODES[o.role], None, launch_frame=q.get("launch_frame", desc.frame_start),
                             projection=0)
        if o.role == "breakable":
            entry["corner_uv"], entry["brittleness"], entry["projection"] = _breakable_arrays(o)
        elif o.role == "obstacle":
            entry["motion"] = relative_motion(o)
        elif q.get("motion") == "animated":
            entry["motion"] = keyframed_motion(o)
        objects.append(entry)
    return settings, objects


def streams(desc):
    breakable = desc.objects_with_role("breakable")[0].name
    out = {"fragments": {"kind": "fragments", "object": breakable, "pieces": "elements"},
           "elements": {"kind": "pieces", "object": breakable},
           "debris": {"kind": "particles"}}
    names = [o.name for o in desc.objects_with_role("projectile")]
    if names:
        out["rigid"] = {"kind": "transforms", "objects": names}
    return out


def read_pieces(cache, frame, stream="elements"):
    """Per element at a frame: position (n,3), rotation (n,4, w x y z), piece label (n,)."""
    f = cache.read_particles(stream, frame)
    return f["position"], f["rotation"], f["piece"]


register_runner("fracture", core_runner(streams, solver_input, _core.fracture_bake))
