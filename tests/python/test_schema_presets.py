"""Parameter schemas and presets: every problem reported at once, naming the
parameter and file; presets are data and round-trip exactly."""
import json
import math
import os

import pytest

import tsubu
from tsubu import presets, schema
from tsubu.errors import CorruptFileError, ValidationError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_defaults_validate_and_every_problem_is_listed():
    water = schema.get("water")
    assert water.validate({}) == water.defaults()
    with pytest.raises(ValidationError) as e:
        water.validate({"particle_radius": -1, "viscosity": math.nan, "solver": "magic", "gravity": [0, 0],
                        "viscosty": 1.0, "max_substeps": 2.5, "write_surface": 1})
    text = str(e.value)
    assert len(e.value.problems) == 7
    for name in ("particle_radius", "viscosity", "solver", "gravity", "viscosty", "max_substeps", "write_surface"):
        assert f"'{name}'" in text
    assert "did you mean viscosity" in text
    assert "finite" in text


def test_unknown_effect_names_known_ones():
    with pytest.raises(ValidationError, match="unknown effect 'lava'.*water"):
        schema.get("lava")


def test_parameter_reference_is_current():
    """docs/parameters.md is generated from the schemas: regenerate it when they change."""
    from tsubu.cli import main
    out = os.path.join(ROOT, "build", "parameters.md")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    assert main(["docs", "--out", out]) == 0
    with open(out) as f, open(os.path.join(ROOT, "docs", "parameters.md")) as g:
        assert f.read() == g.read(), "run: PYTHONPATH=addon python3 -m tsubu docs --out docs/parameters.md"
    for p in schema.get("water").params:
        assert f"`{p.name}`" in open(out).read()


def test_builtin_presets_are_valid_and_distinct():
    found = presets.available("water")
    assert {"Water", "Honey", "Preview"} <= set(found)
    assert presets.problems("water") == []
    honey = presets.load(found["Honey"])["parameters"]
    water = presets.load(found["Water"])["parameters"]
    assert honey["viscosity"] > 100 * water["viscosity"]
    assert presets.load(found["Preview"])["parameters"]["particle_radius"] > water["particle_radius"]


def test_bad_preset_reports_all_problems(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"tsubu_preset": 1, "effect": "water", "name": "",
                                "parameters": {"viscosity": -2, "nonsense": 1}, "script": "import os"}))
    with pytest.raises(ValidationError) as e:
        presets.load(str(path))
    assert str(path) in str(e.value)
    assert len(e.value.problems) == 4  # script key, empty name, viscosity, nonsense
    path.write_text("{not json")
    with pytest.raises(CorruptFileError, match="bad.json"):
        presets.load(str(path))


def test_user_presets_round_trip_and_shadow(tmp_path, monkeypatch):
    monkeypatch.setenv("TSUBU_PRESET_PATH", str(tmp_path))
    params = {"viscosity": 2.5, "gravity": [0, 0, -3.7], "solver": "muller"}
    path = presets.save_user("water", "Honey", params, "my honey")
    assert path == os.path.join(str(tmp_path), "water", "honey.json")
    loaded = presets.load(path)
    assert loaded["parameters"] == {"viscosity": 2.5, "gravity": [0.0, 0.0, -3.7], "solver": "muller"}
    assert presets.available("water")["Honey"] == path  # the user's shadows the built-in one
    applied = presets.apply(loaded, schema.get("water").defaults())
    assert applied["viscosity"] == 2.5 and applied["particle_radius"] == 0.02
    with pytest.raises(ValidationError):
        presets.save_user("water", "Bad", {"viscosity": "thick"})
    assert not os.path.exists(os.path.join(str(tmp_path), "water", "bad.json"))


def test_package_does_not_import_bpy():
    import subprocess
    import sys
    code = "import sys, tsubu; tsubu.schema.effects(); print('bpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "addon")))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    assert tsubu.__version__ == ".".join(map(str, tsubu.bl_info["version"]))


def test_every_label_fits_beside_its_field_in_blender():
    """At the default Properties width a label of more than 16 characters is cut ("Speed of so..."); units
    Blender does not show in the field are part of the label."""
    from tsubu.schema import UI_LABEL_MAX
    long = [(e, p.name, p.ui_label) for e in schema.effects()
            for p in list(schema.get(e).params) + [q for r in schema.get(e).roles for q in r.params]
            if len(p.ui_label) > UI_LABEL_MAX]
    assert not long, long
    water = schema.get("water")
    assert water.param("viscosity").ui_label == "Viscosity (Pa·s)" and water.param("cfl_number").ui_label == "CFL Number"
    assert water.param("particle_radius").ui_label == "Particle Radius"  # metres show in the field


def test_settings_that_only_matter_with_a_switch_name_it():
    """A setting drawn greyed while a switch is off (Blender's way: the yields without Plastic) names a bool of its
    own effect; a schema that names anything else is refused when it registers."""
    elastoplastic = schema.get("elastoplastic")
    assert {p.name for p in elastoplastic.params if p.active_if == "plastic"} == {
        "yield_compression", "yield_stretch", "keep_volume", "hardening"}
    for e in schema.effects():
        for p in schema.get(e).params:
            assert not p.active_if or schema.get(e).param(p.active_if).kind == "bool", (e, p.name)
    bad = schema.Schema("x", "X", "", (schema.Param("a", "float", 1.0, "", active_if="b"),
                                       schema.Param("b", "float", 1.0, "")))
    with pytest.raises(ValueError, match="'a': active_if 'b' is not a bool"):
        schema.register(bad)
    assert "x" not in schema.effects()
