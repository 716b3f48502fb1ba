"""Scene descriptions: exact save/load, and clear errors naming the object
before any bake starts."""
import math

import numpy as np
import pytest

from helpers import box
from tsubu import SceneDescription, SceneObject
from tsubu.errors import CorruptFileError, ValidationError


def scene():
    dv, dt = box((-1, -1, 0), (1, 1, 2))
    fv, ft = box((0, 0, 0), (0.3, 0.3, 0.3))
    moving = np.repeat(np.eye(4)[None], 5, axis=0)
    moving[:, 0, 3] = np.linspace(0, 0.4, 5)
    return SceneDescription("water", {"viscosity": 0.01}, frame_start=1, frame_end=5, fps=25.0, seed=3, objects=[
        SceneObject("Domain", "domain", dv, dt),
        SceneObject("Water", "fluid", fv, ft, params={"initial_velocity": [1, 0, 0]}),
        SceneObject("Cup", "obstacle", fv, ft, matrices=moving),
        SceneObject("Crate", "rigid", fv, ft, matrices=np.eye(4)[None], params={"density": 400},
                    arrays={"image": np.zeros((4, 4, 3), np.float32)}),
    ])


def test_round_trip(tmp_path):
    s = scene().validate()
    path = s.save(str(tmp_path / "shot"))
    t = SceneDescription.load(path).validate()
    assert (t.effect, t.parameters, t.frame_start, t.frame_end, t.fps, t.seed) == \
        (s.effect, s.parameters, s.frame_start, s.frame_end, s.fps, s.seed)
    for a, b in zip(s.objects, t.objects):
        assert (a.name, a.role, a.params) == (b.name, b.role, b.params)
        assert np.array_equal(a.vertices, b.vertices) and np.array_equal(a.triangles, b.triangles)
        assert (a.matrices is None) == (b.matrices is None)
        assert a.arrays.keys() == b.arrays.keys()
    assert t.objects[2].animated and not t.objects[3].animated
    assert t.parameters["viscosity"] == 0.01 and t.parameters["particle_radius"] == 0.02


def test_problems_name_objects_all_at_once():
    s = scene()
    v, t = box()
    s.objects.append(SceneObject("OpenBox", "fluid", v, t[:-1]))
    s.objects.append(SceneObject("Nothing", "fluid", np.zeros((0, 3)), np.zeros((0, 3))))
    s.objects.append(SceneObject("Stone", "rigid", v, t, params={"density": 0}))
    s.objects.append(SceneObject("Lamp", "light", v, t))
    s.objects.append(SceneObject("Domain2", "domain", v, t))
    s.parameters["surface_tension"] = math.nan
    with pytest.raises(ValidationError) as e:
        s.validate()
    msg = str(e.value)
    for expected in ("OpenBox", "open", "Nothing", "empty", "Stone", "density", "Lamp", "light",
                     "Domain, Domain2", "surface_tension"):
        assert expected in msg, expected
    assert len(e.value.problems) == 6


def test_bad_frames_and_matrices():
    s = scene()
    s.frame_end = 0
    s.fps = 0
    s.objects[2].matrices = np.zeros((3, 4, 4))
    with pytest.raises(ValidationError) as e:
        s.validate()
    assert "frame_end" in str(e.value) and "fps" in str(e.value) and "Cup" in str(e.value)


def test_damaged_files(tmp_path):
    path = scene().validate().save(str(tmp_path / "shot.json"))
    (tmp_path / "shot.npz").write_bytes(b"garbage")
    with pytest.raises(CorruptFileError, match="shot.npz"):
        SceneDescription.load(path)
    (tmp_path / "shot.npz").unlink()
    with pytest.raises(OSError, match="missing"):
        SceneDescription.load(path)
    (tmp_path / "shot.json").write_text('{"tsubu_scene": 99}')
    with pytest.raises(CorruptFileError, match="shot.json"):
        SceneDescription.load(path)


def test_a_wrong_keyword_names_where_the_value_belongs():
    v, t = box((0, 0, 0), (1, 1, 1))
    with pytest.raises(TypeError, match=r"SceneObject has no argument 'density': an object's own values go in "
                                        r"params=\{'density': \.\.\.\}"):
        SceneObject("Crate", "rigid", v, t, density=500)
    with pytest.raises(TypeError, match=r"the effect's settings go in parameters=\{'viscosity': \.\.\.\}"):
        SceneDescription("water", viscosity=1.0)
    assert SceneObject("Crate", "rigid", v, t, params={"density": 500}).params == {"density": 500}
