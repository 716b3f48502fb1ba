"""The erosion effect in metres: the paper's levee overtopping (sec. 4.2) erodes the downstream slope first
when the ground resists (tau_c 6) and the crest from the start when it does not (tau_c 1.2); the ground taken
is the sediment carried, laid and drained at every frame; without erosion the ground's file never changes;
rain falls at the rate asked; bakes are the same bytes on 1 and 2 threads and after a resume; bad scenes are
refused before baking with the object or parameter named."""
import os

import numpy as np
import pytest

import tsubu
from erosion_scenes import block, ground, ground_by_x, heightfield, levee
from helpers import assert_same_bytes_with_one_or_two_threads

BANDS = [0.25, 0.5, 0.6, 1.1]  # upstream slope, crest, downstream slope


def eroded_by_band(cache, frame):
    return (ground_by_x(cache, 1, BANDS) - ground_by_x(cache, frame, BANDS)) * 1e6  # cm^3


def first_frame_eroding(cache, amount):
    """The first frame where the crest and the downstream slope together lost `amount` cm^3."""
    for f in cache.frames("terrain"):
        e = eroded_by_band(cache, f)
        if e[1] + e[2] > amount:
            return f, e
    raise AssertionError("the levee hardly eroded")


@pytest.fixture(scope="module")
def levees(tmp_path_factory):
    base = tmp_path_factory.mktemp("levee")
    return {tc: tsubu.bake(levee(40, tc, k), str(base / f"tc{tc}")) for tc, k in ((6.0, 2.0), (1.2, 0.05))}


def test_resistant_levee_erodes_its_downstream_slope_before_its_crest(levees):
    f, e = first_frame_eroding(levees[6.0], 50.0)
    assert e[1] < 0.15 * e[2], (f, e)


def test_weak_levee_erodes_its_crest_from_the_start(levees):
    f, e = first_frame_eroding(levees[1.2], 50.0)
    assert e[1] > e[2], (f, e)


def test_ground_taken_is_sediment_carried_laid_and_drained_every_frame(levees):
    cache = levees[1.2]
    values, origin, voxel = ground(cache, 1)
    v0 = values.sum() * voxel ** 3
    for f in cache.frames("budget"):
        b = cache.read_particles("budget", f)
        values, _, _ = ground(cache, f)
        taken = v0 - values.sum() * voxel ** 3
        eroded, laid, carried, drained = (float(b[k][0]) for k in ("eroded", "deposited", "suspended", "drained"))
        tol = 0.01 * max(eroded, 1e-9)
        assert abs(taken - (carried + drained)) <= tol, (f, taken, carried, drained)
        assert abs(eroded - (carried + laid + drained)) <= tol
        assert abs(cache.read_particles("fluid", f)["sediment"].astype(np.float64).sum() - carried) <= tol
    assert eroded > 1e-4 and laid > 0.0  # it did wear, and some settled


def test_without_erosion_the_ground_never_changes(tmp_path):
    cache = tsubu.bake(levee(12, 6.0, 0.0), str(tmp_path / "c"))
    first = open(cache.path("terrain", 1), "rb").read()
    for f in cache.frames("terrain"):
        assert open(cache.path("terrain", f), "rb").read() == first, f
    assert cache.read_particles("fluid", 12).count > cache.read_particles("fluid", 1).count  # water did flow in


def hillside(frames, **settings):
    """Rain over a 1 m slope of 30 cm rise; the water runs off its low edge."""
    ground = heightfield("Hill", "terrain", np.linspace(0, 1, 21), np.linspace(0, 0.4, 9),
                         lambda X, Y: 0.1 + 0.3 * (1 - X) + 0.02 * np.sin(7 * Y))
    cloud = heightfield("Cloud", "rain", [0.05, 0.6], [0.05, 0.35], lambda X, Y: 0.6 + 0 * X, emit_start=1,
                        emit_end=frames)
    params = {"particle_radius": 0.01, "voxel_size": 0.02, "rain_rate": 200000.0}
    params.update(settings)
    return tsubu.SceneDescription("erosion", params, 1, frames, 24.0, 3, [ground, cloud])


def test_rain_falls_at_the_rate_asked_and_runs_off(tmp_path):
    frames = 12
    cache = tsubu.bake(hillside(frames), str(tmp_path / "c"))
    last = cache.read_particles("fluid", frames)
    emitted = int(last["id"].max()) + 1 if last.count else 0
    asked = 200000.0 / 3.6e6 * 0.55 * 0.3 * (frames - 1) / 24.0 / 0.02 ** 3  # mm/h over 0.165 m^2, in particles
    assert 0.9 * asked < emitted < 1.1 * asked, (emitted, asked)
    z = last["position"][:, 2]
    assert z.min() > 0.05 and np.isfinite(last["velocity"]).all()


def test_same_bytes_on_one_or_two_threads(tmp_path):
    code = "from erosion_scenes import levee\nd = levee(6, 1.2, 0.05)"
    assert_same_bytes_with_one_or_two_threads(tmp_path, code, ["fluid", "budget", "terrain"], range(1, 7))


def test_resume_matches_an_uninterrupted_bake(tmp_path, checkpoint_every_frame):
    whole = tsubu.bake(hillside(10, critical_shear=1.0, erosion_strength=0.2), str(tmp_path / "whole"))
    folder = str(tmp_path / "part")
    with pytest.raises(tsubu.CancelledError):
        tsubu.bake(hillside(10, critical_shear=1.0, erosion_strength=0.2), folder, progress=lambda p: p.frame >= 6)
    part = tsubu.Cache(folder)
    assert part.checkpoint_frame() == 5
    tsubu.bake(hillside(10, critical_shear=1.0, erosion_strength=0.2), folder, resume=True)
    for f in range(1, 11):
        for stream in ("fluid", "budget", "terrain"):
            with open(whole.path(stream, f), "rb") as a, open(part.path(stream, f), "rb") as b:
                assert a.read() == b.read(), (stream, f)
    assert float(whole.read_particles("budget", 10)["eroded"][0]) > 0.0


def test_bad_scenes_are_refused_before_baking(tmp_path):
    from tsubu.shapes import box
    v, t = box((0.2, 0.2, 0.1), (0.4, 0.4, 0.3))
    flat = heightfield("Flat", "rain", [0.1, 0.2], [0.1, 0.1], lambda X, Y: 0.5 + 0 * X)
    cases = [
        ("voxel_size", hillside(3, voxel_size=0.0), "voxel_size"),
        ("nan", hillside(3, critical_shear=float("nan")), "critical_shear"),
        ("coarse", hillside(3, voxel_size=0.2), "voxel_size"),
        ("Flat", tsubu.SceneDescription("erosion", {}, 1, 3, 24.0, 0, [hillside(3).objects[0], flat]), "Flat"),
        ("Leaky", tsubu.SceneDescription("erosion", {}, 1, 3, 24.0, 0, [
            tsubu.SceneObject("Leaky", "terrain", v, np.concatenate([t[:2], t[4:]])), hillside(3).objects[1]]),
         "Leaky"),  # a box without its top: open, and not a heightfield (one without its bottom is one)
        ("Dry", tsubu.SceneDescription("erosion", {}, 1, 3, 24.0, 0, [hillside(3).objects[0]]), "Rain"),
    ]
    for name, desc, words in cases:
        with pytest.raises(ValueError) as e:
            tsubu.bake(desc, str(tmp_path / name))
        assert words in str(e.value), str(e.value)
        assert not os.path.exists(tmp_path / name)
    assert block  # the scene helpers load


def test_presets_load_and_the_levee_one_is_the_papers():
    from tsubu import presets
    found = presets.available("erosion")
    assert set(found) >= {"Rain on a Hillside", "River through a Canyon", "Levee Overtopping (paper)"}
    assert presets.problems("erosion") == []
    levee_preset = presets.load(found["Levee Overtopping (paper)"])["parameters"]
    assert (levee_preset["critical_shear"], levee_preset["erosion_strength"]) == (6.0, 2.0)
    assert levee_preset["keep_sediment"] is False


def test_sinks_remove_water_with_its_sediment_and_discarding_keeps_none(tmp_path):
    """A sink over the foot of the hillside takes the runoff (and what it carries); with keep_sediment off,
    all that erodes is discarded, as in the paper."""
    desc = hillside(16, critical_shear=1.0, erosion_strength=0.2, keep_sediment=False)
    desc.objects.append(block("Drain", "sink", (0.75, -0.1, 0.0), (1.1, 0.5, 0.3)))
    cache = tsubu.bake(desc, str(tmp_path / "c"))
    for f in cache.frames("fluid")[1:]:
        p = cache.read_particles("fluid", f)["position"]
        inside = np.all((p > [0.75, -0.1, 0.0]) & (p < [1.1, 0.5, 0.3]), axis=1)
        assert not inside.any(), f
    b = cache.read_particles("budget", 16)
    eroded, discarded = float(b["eroded"][0]), float(b["discarded"][0])
    assert eroded > 0.0 and discarded == eroded
    assert float(b["suspended"][0]) == 0.0 and float(b["deposited"][0]) == 0.0
    stats = cache.manifest()["stats"]
    assert stats["removed"] > 0 and stats["discarded"] == stats["eroded"]
