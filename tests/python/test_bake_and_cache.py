"""The bake driver and cache folders: manifest and status, progress and
cancel leave whole frames, resume goes on from the last whole frame, a
failure keeps what was written, free removes only the cache's own files."""
import functools
import json
import os

import numpy as np
import pytest

import fake_runner
import tsubu
from helpers import box
from tsubu import baking as bakelib
from tsubu.errors import CancelledError, CorruptFileError, UnstableError, ValidationError


@pytest.fixture
def runner(monkeypatch):
    monkeypatch.setitem(bakelib.RUNNERS, "water", fake_runner.RUNNER)
    return fake_runner


def scene(frames=10):
    v, t = box((0, 0, 0), (0.2, 0.2, 0.2))
    dv, dt = box((-1, -1, -1), (1, 1, 1))
    return tsubu.SceneDescription("water", {}, 1, frames, 24.0, 0, [tsubu.SceneObject("Water", "fluid", v, t),
                                                                     tsubu.SceneObject("Domain", "domain", dv, dt)])


def test_complete_bake_and_read_back(runner, tmp_path):
    seen = []
    cache = tsubu.bake(scene(), str(tmp_path / "c"), progress=lambda p: seen.append(p.fraction))
    m = cache.manifest()
    assert m["status"] == "complete" and m["last_frame"] == 10 and m["effect"] == "water"
    assert cache.frames("points") == list(range(1, 11)) and cache.last_whole_frame() == 10
    assert seen == sorted(seen) and seen[-1] == 1.0
    f = cache.read_particles("points", 4)
    assert np.array_equal(f["position"], fake_runner.state_at(4, 24.0)) and f.count == 10
    mats = cache.read_transforms("rigid", 7)
    assert np.allclose(mats["Crate"], np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 7], [0, 0, 0, 1]]))
    text = cache.info()
    assert "complete" in text and "points (particles): 10 frames 1-10" in text


def test_cancel_keeps_frames_then_resume_finishes(runner, tmp_path):
    folder = str(tmp_path / "c")
    with pytest.raises(CancelledError, match="frames 1-4"):
        tsubu.bake(scene(), folder, progress=lambda p: p.frame == 4)
    cache = tsubu.Cache(folder)
    assert cache.manifest()["status"] == "cancelled" and cache.last_whole_frame() == 4
    for frame in range(1, 5):
        cache.read_particles("points", frame)  # whole and readable
    starts = []
    original = runner.RUNNER.run
    bakelib.RUNNERS["water"] = bakelib.Runner(runner.streams, lambda d, c, r, first, ready: (starts.append(first),
                                                                                       original(d, c, r, first, ready)))
    tsubu.bake(scene(), folder, resume=True)
    assert starts == [4]
    assert cache.manifest()["status"] == "complete" and cache.frames("points") == list(range(1, 11))
    # resuming a different scene is refused rather than mixing two bakes
    other = scene()
    other.parameters = {"viscosity": 1.0}
    with pytest.raises(ValidationError, match="different"):
        tsubu.bake(other, folder, resume=True)


def test_resume_refuses_an_older_checkpoint_and_keeps_the_frames(runner, tmp_path):
    """Tsubu 0.1 saved the state as one particle frame (state/checkpoint.tspf); it is never
    misread as the sectioned checkpoint: resuming says to bake from the start, and keeps the frames."""
    folder = str(tmp_path / "c")
    with pytest.raises(CancelledError):
        tsubu.bake(scene(), folder, progress=lambda p: p.frame == 4)
    os.remove(os.path.join(folder, "state", "checkpoint.tsck"))
    tsubu.cache.write_particles(os.path.join(folder, "state", "checkpoint.tspf"), 4, 0.0,
                                {"state": np.zeros((3, 16))})
    with pytest.raises(ValidationError, match="earlier Tsubu.*bake from the start"):
        tsubu.bake(scene(), folder, resume=True)
    assert tsubu.Cache(folder).frames("points") == [1, 2, 3, 4]


def test_resume_refuses_a_cache_of_another_tsubu_version(runner, tmp_path):
    """Even a complete one: it is not returned as if it were this version's bake."""
    folder = str(tmp_path / "c")
    for cancel_at in (4, None):
        try:
            tsubu.bake(scene(), folder, progress=lambda p: p.frame == cancel_at)
        except CancelledError:
            assert cancel_at
        cache = tsubu.Cache(folder)
        cache.update(tsubu_version="0.0.9")
        with pytest.raises(ValidationError, match="Tsubu 0.0.9, this is 0.1.0.*bake from the start"):
            tsubu.bake(scene(), folder, resume=True)
        assert cache.frames("points") == list(range(1, (cancel_at or 10) + 1))


def test_a_scene_refused_by_the_solver_leaves_the_old_cache(runner, tmp_path, monkeypatch):
    """The solver's own checks run before the old cache is touched: manifest and frames stay."""
    folder = str(tmp_path / "c")
    tsubu.bake(scene(), folder)
    cache = tsubu.Cache(folder)
    manifest, frames = cache.manifest(), cache.frames("points")
    monkeypatch.setitem(bakelib.RUNNERS, "water", bakelib.Runner(
        runner.streams, functools.partial(runner.run, refuse="'Crate' is flat: it has no volume")))
    with pytest.raises(ValidationError, match="Crate"):
        tsubu.bake(scene(), folder)
    assert cache.manifest() == manifest and cache.frames("points") == frames == list(range(1, 11))


def test_failure_keeps_written_frames(runner, tmp_path, monkeypatch):
    monkeypatch.setitem(bakelib.RUNNERS, "water", bakelib.Runner(
        runner.streams, functools.partial(runner.run, fail_at=6)))
    folder = str(tmp_path / "c")
    with pytest.raises(UnstableError, match="frame 6"):
        tsubu.bake(scene(), folder)
    m = tsubu.Cache(folder).manifest()
    assert m["status"] == "failed" and "frame 6" in m["message"] and m["last_frame"] == 5


def test_invalid_scene_writes_nothing(runner, tmp_path):
    s = scene()
    s.objects[0].triangles = s.objects[0].triangles[:-2]
    with pytest.raises(ValidationError, match="Water"):
        tsubu.bake(s, str(tmp_path / "c"))
    assert not os.path.exists(tmp_path / "c")


def test_free_and_foreign_folders(runner, tmp_path):
    folder = tmp_path / "c"
    cache = tsubu.bake(scene(3), str(folder))
    (folder / "notes.txt").write_text("mine")
    cache.free()
    assert sorted(os.listdir(folder)) == ["notes.txt"]  # only the cache's own files went
    with pytest.raises(OSError, match="other files"):
        tsubu.bake(scene(3), str(folder))
    with pytest.raises(OSError, match="no Tsubu cache"):
        tsubu.Cache(str(folder)).manifest()


def test_damaged_manifest(runner, tmp_path):
    cache = tsubu.bake(scene(2), str(tmp_path / "c"))
    with open(cache.manifest_path, "w") as f:
        f.write("{")
    with pytest.raises(CorruptFileError, match="manifest.json"):
        cache.manifest()
    with open(cache.manifest_path, "w") as f:
        json.dump({"format": "tsubu-cache", "format_version": 9}, f)
    with pytest.raises(CorruptFileError, match="bake again"):
        cache.manifest()


def test_files_follow_the_umask(runner, tmp_path):
    """manifest.json, presets and scene files are made as open() makes files (0644 under umask 022),
    like the frames, not 0600."""
    old = os.umask(0o022)
    try:
        tsubu.bake(scene(), str(tmp_path / "c"))
        saved = scene().save(str(tmp_path / "s.json"))
        for path in (os.path.join(str(tmp_path / "c"), "manifest.json"), saved,
                     tsubu.cache.frame_path(str(tmp_path / "c"), "points", 1)):
            assert os.stat(path).st_mode & 0o777 == 0o644, (path, oct(os.stat(path).st_mode))
        os.umask(0o077)
        tsubu.bake(scene(), str(tmp_path / "d"))
        assert os.stat(os.path.join(str(tmp_path / "d"), "manifest.json")).st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
