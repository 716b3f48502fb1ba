"""Elastoplastic: jelly, rubber, clay and dough with master and slave particles (Saida, Fujisawa & Mikawa 2017).

Paper: ../shared/papers/elastoplastic-slave-particles-saida-fujisawa-mikawa.txt. The solver is
csrc/core/elastoplastic.c; this module declares what a user can set and turns a scene description into the
solver's input.
"""

from .._native import _core
from ..baking import core_runner, register_runner
from ..schema import Param, Role, Schema, register
from ..transforms import object_input, relative_motion
from .surface_params import surface_params

PARAMS = (
    Param("particle_radius", "float", 0.005, "Half the spacing of the master particles; sets the resolution",
          unit="m", min=0.0005, max=1.0, group="Material"),
    Param("density", "float", 1000.0, "Density of the material", unit="kg/m³", min=1.0, max=30000.0,
          group="Material"),
    Param("youngs_modulus", "float", 1e6, "Young's modulus E: stiffness (jelly 1e5-1e6, rubber 1e7-1e8)",
          unit="Pa", min=10.0, max=1e11, group="Material", label="Stiffness"),
    Param("poisson_ratio", "float", 0.4, "Poisson's ratio nu: how much it bulges sideways when squeezed "
          "(below 0.5; 0.5 would be incompressible)", label="Poisson's ratio", min=0.0, max=0.49, group="Material"),
    Param("plastic", "bool", False, "Yields beyond the limits below and keeps part of its deformation (clay, "
          "dough); off: fully elastic (jelly, rubber)", group="Plasticity"),
    Param("yield_compression", "float", 0.025, "theta_c of eq. 19: the compression it takes elastically",
          min=0.0, max=1.0, group="Plasticity", active_if="plastic", label="Yield (Squash)"),
    Param("yield_stretch", "float", 0.0075, "theta_s of eq. 19: the stretch it takes elastically", min=0.0,
          max=10.0, group="Plasticity", active_if="plastic", label="Yield (Stretch)"),
    Param("keep_volume", "bool", True, "Plastic flow changes the shape, not the volume (clay, dough); off: "
          "squashing also compacts it, as snow (Stomakhin 2013's model, the paper's)", group="Plasticity",
          active_if="plastic"),
    Param("hardening", "float", 10.0, "xi: plastically compacted material grows stiffer by exp(xi (1 - J_P)) "
          "(Stomakhin 2013; only without Keep Volume)", min=0.0, max=50.0, group="Plasticity",
          active_if="plastic", advanced=True),
    Param("friction", "float", 0.5, "Coulomb friction at the ground and obstacles", min=0.0, max=10.0,
          group="Contacts"),
    Param("ground", "bool", True, "A ground plane at the ground height", group="Contacts"),
    Param("ground_height", "float", 0.0, "Height of the ground plane", unit="m", min=-1e6, max=1e6,
          group="Contacts"),
    Param("gravity", "vector", (0.0, 0.0, -9.81), "Acceleration of gravity (Blender's Z is up)", unit="m/s²",
          min=-1000.0, max=1000.0, group="World"),
    Param("beta", "float", 1.0, "Eq. 15: 0 explicit (small steps), 1 implicit (stable at the CFL step)", min=0.0,
          max=1.0, group="Solver", advanced=True),
    Param("alpha", "float", 0.9, "Eq. 8: share of the smooth (PIC) velocity in the masters' (0.9 in the paper)",
          min=0.0, max=1.0, group="Solver", advanced=True),
    Param("cfl_number", "float", 0.4, "Courant number of the step", min=0.01, max=1.0, group="Solver",
          advanced=True),
    Param("cg_iterations", "int", 50, "Most conjugate-gradient iterations per step", min=1, max=1000,
          group="Solver", advanced=True),
    Param("cg_tolerance", "float", 1e-4, "Relative residual the conjugate gradients stop at", min=1e-10, max=0.1,
          group="Solver", advanced=True),
    Param("slave_particles", "bool", True, "Stress at slave particles (the paper's method); off: at the masters, "
          "which shows zero-energy modes (for comparison)", group="Solver", advanced=True),
    Param("max_substeps", "int", 2000, "Upper bound of substeps per frame", min=1, max=100000, group="Solver"),
    Param("max_particles", "int", 4_000_000, "Memory budget of masters and slaves", min=1, max=200_000_000,
          group="Solver", advanced=True),
    Param("write_surface", "bool", True, "Write a level set 'surface' per frame, meshed with the body's "
          "materials", group="Output"),
    Param("write_skin", "bool", False, "Carry the body's own mesh with the particles (its UVs and materials "
          "follow the deformation): a 'skin' stream per frame, an alternative to the surface", group="Output"),
    *surface_params(advanced=True),
)

ROLES = (
    Role("body", "Body", "The material: a closed mesh filled with master particles, or an open one (a plane) as a "
         "sheet one particle thick; holds the settings and the cache", needs_closed_mesh=False, max_count=1,
         holds_settings=True, params=(
             Param("initial_velocity", "vector", (0.0, 0.0, 0.0), "Velocity at the start", unit="m/s", min=-1000.0,
                   max=1000.0),
             Param("sheet", "bool", False, "An open mesh (a plane, a cloth-like shape) as a sheet one particle "
                   "thick (fig. 12); off: the mesh must be closed and is filled"),
         )),
    Role("obstacle", "Obstacle", "A closed mesh the material cannot enter: static, or moved by its animation"),
)

ELASTOPLASTIC = register(Schema(
    effect="elastoplastic",
    label="Elastoplastic",
    help="Jelly, rubber, clay and dough: elastic to plastic, splitting and merging, thin sheets - particles "
         "only, no grid, so no domain.",
    params=PARAMS,
    roles=ROLES,
    paper="elastoplastic-slave-particles-saida-fujisawa-mikawa.txt",
))

ROLE_CODES = {"body": 0, "obstacle": 1}


def solver_input(desc):
    """(settings, objects) for _core.elastoplastic_bake from a validated description."""
    settings = ELASTOPLASTIC.solver_settings(desc.parameters, seed=desc.seed)
    objects = [object_input(o, ROLE_CODES[o.role], relative_motion(o),
                            velocity=o.params.get("initial_velocity", [0.0, 0.0, 0.0]),
                            sheet=int(bool(o.params.get("sheet", False)))) for o in desc.objects]
    return settings, objects


def streams(desc):
    body = desc.objects_with_role("body")[0].name
    out = {"masters": {"kind": "particles"}}
    if desc.parameters["write_skin"]:
        out["skin"] = {"kind": "skin", "object": body}
    if desc.parameters["write_surface"]:
        out["surface"] = {"kind": "volume", "grids": ["surface"], "particles": "masters",
                          "mesh": {"grid": "surface", "threshold": 0.0, "materials_of": body}}
    return out


register_runner("elastoplastic", core_runner(streams, solver_input, _core.elastoplastic_bake))
