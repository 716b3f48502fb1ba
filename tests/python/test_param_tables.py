"""The C solvers' parameter tables (csrc/core/params.h) and the Python schemas agree:
the same names, kinds, ranges, defaults and enum items, in the solver's units."""
import math

import pytest

import tsubu
from tsubu import _core, schema
from tsubu.effects.water import CLOSED

KIND_TYPES = {"float": ("real",), "int": ("int", "long"), "bool": ("bool",), "enum": ("enum",),
              "vector": ("vec3",)}


def table(effect):
    return getattr(_core, f"{effect}_params")()


@pytest.mark.parametrize("effect", ["water", "sand", "fracture", "erosion", "elastoplastic"])
def test_table_and_schema_agree(effect):
    s = schema.get(effect)
    rows = {r["name"]: r for r in table(effect)}
    user = {n for n, r in rows.items() if not r["from_scene"]}
    assert user == {p.name for p in s.params if p.name not in schema.LOOP_PARAMS}
    for p in s.params:
        if p.name in schema.LOOP_PARAMS:
            continue
        r = rows[p.name]
        assert r["type"] in KIND_TYPES[p.kind], p.name
        if p.kind == "enum":
            assert r["items"] == tuple(i[0] for i in p.items), p.name
            assert r["items"][int(r["default"][0])] == p.default, p.name
            continue
        if p.kind == "bool":
            assert bool(r["default"][0]) == p.default, p.name
            continue
        bound = math.radians if p.unit == "°" else float
        assert r["min"] == pytest.approx(bound(p.min), rel=1e-15), p.name
        assert r["max"] == pytest.approx(bound(p.max), rel=1e-15), p.name
        default = p.solver_value(p.default)
        expected = default if p.kind == "vector" else [default]
        assert list(r["default"][:len(expected)]) == pytest.approx(expected, rel=1e-15), p.name


@pytest.mark.parametrize("effect", ["water", "sand", "fracture", "erosion", "elastoplastic"])
def test_scene_rows_are_what_the_bake_sets(effect):
    scene_rows = {r["name"] for r in table(effect) if r["from_scene"]}
    assert {"frame_start", "fps", "seed"} <= scene_rows


def test_degrees_reach_the_solver_as_radians():
    p = schema.get("sand").param("cone_angle")
    assert p.unit == "°" and p.solver_value(90.0) == math.pi / 2


def test_unknown_or_badly_typed_settings_are_named(tmp_path):
    with pytest.raises(ValueError, match="unknown setting 'partcle_radius'"):
        _core.water_bake({"partcle_radius": 0.01}, [], str(tmp_path), 1, 2, 24.0)
    with pytest.raises(TypeError, match="'surface_smoothing' must be a whole number"):
        _core.water_bake({"surface_smoothing": 2.5}, [], str(tmp_path), 1, 2, 24.0)
    with pytest.raises(ValueError, match="'solver' must be one of its choices"):
        _core.water_bake({"solver": "flip"}, [], str(tmp_path), 1, 2, 24.0)
    with pytest.raises(ValueError, match="seed must be a whole number 0 to 2"):
        _core.water_bake({"seed": 2 ** 64}, [], str(tmp_path), 1, 2, 24.0)
    with pytest.raises(ValueError, match="water: particle_radius must be within 0.001 and 1"):
        _core.water_bake({"particle_radius": 5.0}, [], str(tmp_path), 1, 2, 24.0)
    assert not any((tmp_path / d).exists() for d in ("fluid", "state"))


def test_a_bake_from_the_c_defaults_alone(tmp_path):
    """A pipeline that calls the core with only what the scene gives gets the table's defaults."""
    from water_scenes import tank
    from tsubu.effects import water
    settings, objects = water.solver_input(tank(2).validate())
    scene_only = {k: settings[k] for k in ("domain_min", "domain_max", "seed", "particle_radius", "write_surface",
                                           *CLOSED)}
    a = _core.water_bake(scene_only, objects, str(tmp_path / "a"), 1, 2, 24.0)
    b = _core.water_bake(settings, objects, str(tmp_path / "b"), 1, 2, 24.0)
    assert a == b and isinstance(a["fluid_particles"], int) and a["fluid_particles"] > 0
