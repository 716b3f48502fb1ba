"""Water: SPH liquid with two-way rigid bodies (Amada 2005; Becker & Teschner 2007).

Paper: ../shared/papers/sph-water-rigid-coupling-amada.txt. The solver is
csrc/core/water.c; this module declares what a user can set and turns a
scene description into the solver's input.
"""

from .._native import _core
from ..baking import core_runner, register_runner
from ..schema import Param, Role, Schema, register
from ..transforms import object_input, relative_motion
from .surface_params import surface_params

SOLVERS = (
    ("wcsph", "Weakly compressible",
     "Tait equation of state (gamma = 7) and artificial viscosity (Becker & Teschner 2007): holds its volume"),
    ("muller", "Müller 2003",
     "The paper's ideal-gas pressure p = k (rho - rho0), eq. 3.17: soft and bouncy, fast, compresses under weight"),
)

# the domain's sides, as Blender's Fluid names its border collisions; a new domain is a tank (no top)
SIDES = (("left", "-X"), ("right", "+X"), ("front", "-Y"), ("back", "+Y"), ("bottom", "-Z"), ("top", "+Z"))
CLOSED = {f"wall_{side}": True for side, _ in SIDES}  # every side a wall: a closed box
OPEN = {f"wall_{side}": False for side, _ in SIDES}  # no walls: liquid leaving the domain is removed

PARAMS = (
    Param("solver", "enum", "wcsph", "Pressure model", items=SOLVERS, group="Liquid"),
    Param("particle_radius", "float", 0.02, "Half the spacing of fluid particles; sets the resolution",
          unit="m", min=0.001, max=1.0, group="Liquid"),
    Param("rest_density", "float", 1000.0, "Density of the liquid at rest (rho0)", unit="kg/m³", min=1.0,
          max=30000.0, group="Liquid", label="Density"),
    Param("speed_of_sound", "float", 30.0,
          "Weakly compressible: stiffness as a speed of sound; about 10x the fastest flow keeps density within 1%",
          unit="m/s", min=1.0, max=1000.0, group="Liquid"),
    Param("gas_stiffness", "float", 200.0, "Müller: k in p = k (rho - rho0), eq. 3.17", unit="J/kg", min=0.01,
          max=1e6, group="Liquid", label="Stiffness"),
    Param("viscosity", "float", 0.001,
          "Dynamic viscosity mu of eq. 3.19 (water 0.001, oil 0.1, honey 5)", unit="Pa·s", min=0.0, max=1000.0,
          group="Liquid"),
    Param("artificial_viscosity", "float", 0.08,
          "Weakly compressible: alpha of the artificial viscosity, damps noise", min=0.0, max=1.0, group="Liquid",
          advanced=True, label="Art. Viscosity"),
    Param("surface_tension", "float", 0.0728, "sigma of the colour-field surface tension, eq. 3.23", unit="N/m",
          min=0.0, max=100.0, group="Liquid", label="Tension"),
    Param("wall_friction", "float", 0.1, "Share of tangential speed lost at a wall contact: 0 slides, 1 sticks",
          min=0.0, max=1.0, group="Liquid"),
    Param("particle_shifting", "float", 0.01,
          "Weakly compressible: how fast the particles' packing relaxes (share of h² per substep); lets resting "
          "liquid carry pressure as a liquid does, so bodies float at Archimedes' depth. 0: off",
          min=0.0, max=0.2, group="Liquid", advanced=True, label="Shifting"),
    Param("gravity", "vector", (0.0, 0.0, -9.81), "Acceleration of gravity (Blender's Z is up)", unit="m/s²",
          min=-1000.0, max=1000.0, group="World"),
    *(Param(f"wall_{side}", "bool", side != "top", f"The domain's {side} side ({axis}) is a wall; off: liquid "
            "leaving through it is removed and counted. By default a tank: every side but the top",
            label=f"{side} ({axis})", group="Domain Walls")
      for side, axis in SIDES),
    Param("cfl_number", "float", 0.4, "Courant number: substep = cfl x h / (fastest speed)", min=0.01, max=1.0,
          group="Time", advanced=True),
    Param("max_substeps", "int", 400, "Upper bound of substeps per frame (the CFL condition picks fewer)",
          min=1, max=100000, group="Time"),
    Param("max_particles", "int", 4_000_000, "Memory budget: a bake that would need more particles stops before it "
          "starts", min=1, max=200_000_000, group="Time", advanced=True),
    Param("write_surface", "bool", True, "Write a level set 'surface' per frame for meshing", group="Output"),
    *surface_params(advanced=False),
)

VELOCITY = Param("initial_velocity", "vector", (0.0, 0.0, 0.0), "Velocity at the start", unit="m/s",
                 min=-1000.0, max=1000.0)

ROLES = (
    Role("domain", "Domain", "Bounds of the simulation (its bounding box) and the holder of the settings; "
         "particles leaving it are removed and counted", needs_closed_mesh=False, max_count=1,
         holds_settings=True),
    Role("fluid", "Fluid", "A closed mesh filled with liquid at the start", params=(VELOCITY,)),
    Role("inflow", "Inflow", "A closed mesh kept full of liquid moving at a velocity over a frame range", params=(
        Param("velocity", "vector", (0.0, 0.0, -1.0), "Velocity of emitted liquid", unit="m/s", min=-1000.0,
              max=1000.0),
        Param("emit_start", "int", 1, "First frame of emission", min=-1_000_000, max=1_000_000),
        Param("emit_end", "int", 50, "Last frame of emission", min=-1_000_000, max=1_000_000),
    )),
    Role("rigid", "Rigid Body", "A closed mesh that floats or sinks by its density and is pushed by the liquid",
         params=(
             Param("density", "float", 500.0, "Density of the body (water is 1000)", unit="kg/m³", min=1e-3,
                   max=1e6),
             VELOCITY,
             Param("initial_angular_velocity", "vector", (0.0, 0.0, 0.0), "Spin at the start",
                   unit="rad/s", min=-1000.0, max=1000.0, label="Spin"),
         )),
    Role("obstacle", "Obstacle", "A closed mesh the liquid cannot enter: static, or moved by its animation "
         "(a container that carries the liquid)"),
)

WATER = register(Schema(
    effect="water",
    label="Water",
    help="SPH liquid that pours, sloshes in moving containers, and floats or sinks rigid bodies by their density.",
    params=PARAMS,
    roles=ROLES,
    paper="sph-water-rigid-coupling-amada.txt",
))


ROLE_CODES = {"fluid": 0, "inflow": 1, "rigid": 2, "obstacle": 3}


def solver_input(desc):
    """(settings, objects) for _core.water_bake from a validated description."""
    domain = desc.objects_with_role("domain")[0].world_vertices()
    settings = WATER.solver_settings(desc.parameters, domain_min=domain.min(axis=0).tolist(),
                                     domain_max=domain.max(axis=0).tolist(), seed=desc.seed)
    objects = []
    for o in desc.objects:
        if o.role == "domain":
            continue
        q = o.params
        objects.append(object_input(o, ROLE_CODES[o.role], relative_motion(o),
                                    velocity=q.get("initial_velocity", q.get("velocity", [0.0, 0.0, 0.0])),
                                    density=q.get("density", 1000.0), emit_start=q.get("emit_start", 0),
                                    emit_end=q.get("emit_end", -1)))
    return settings, objects


def streams(desc):
    out = {"fluid": {"kind": "particles"}}
    if desc.parameters["write_surface"]:
        out["surface"] = {"kind": "volume", "grids": ["surface"], "particles": "fluid"}
    rigid = [o.name for o in desc.objects_with_role("rigid")]
    if rigid:
        out["rigid"] = {"kind": "transforms", "objects": rigid}
    return out


register_runner("water", core_runner(streams, solver_input, _core.water_bake))
