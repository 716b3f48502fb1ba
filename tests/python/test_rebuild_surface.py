"""Rebuild Surface: surfaces made again from a cache's particles, without simulating again."""
import os

import numpy as np
import pytest

import tsubu
from tsubu import _core
from tsubu.cache import frame_path
from water_scenes import tank


def surface_files(folder):
    d = os.path.join(folder, "surface")
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def enclosed_volume(path):
    (grid,) = _core.read_vdb(path)
    v, t = grid.to_mesh(0.0)
    a, b, c = (v[t[:, k]].astype(np.float64) for k in range(3))
    return abs(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6.0


@pytest.fixture(scope="module")
def baked(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("rebuild") / "c")
    tsubu.bake(tank(4, write_surface=True), folder)
    return folder


def test_rebuilding_with_the_bakes_settings_writes_the_same_bytes(baked):
    before = surface_files(baked)
    assert len(before) == 4
    frames = tsubu.rebuild_surface(baked)
    assert frames == [1, 2, 3, 4] and surface_files(baked) == before


def test_new_settings_change_the_surface_and_the_manifest(tmp_path, baked):
    import shutil
    folder = str(tmp_path / "c")
    shutil.copytree(baked, folder)
    before = surface_files(folder)
    fluid_before = open(frame_path(folder, "fluid", 3), "rb").read()
    tsubu.rebuild_surface(folder, {"surface_voxel_ratio": 0.25})
    after = surface_files(folder)
    assert after.keys() == before.keys() and all(after[k] != before[k] for k in after)
    assert open(frame_path(folder, "fluid", 3), "rb").read() == fluid_before  # particles untouched
    m = tsubu.Cache(folder).manifest()
    assert m["parameters"]["surface_voxel_ratio"] == 0.25 and m["parameters"]["surface_smoothing"] == 4
    # the same liquid at a finer voxel: the tank's 0.1 m³ either way
    path = frame_path(folder, "surface", 1, "volume")
    fine, coarse = enclosed_volume(path), enclosed_volume(os.path.join(baked, "surface", os.path.basename(path)))
    assert fine != coarse and abs(fine - 0.1) < 0.1 * 0.1 and abs(coarse - 0.1) < 0.1 * 0.1, (fine, coarse)


def test_the_surface_method_can_be_switched_back_and_forth(tmp_path, baked):
    import shutil
    folder = str(tmp_path / "c")
    shutil.copytree(baked, folder)
    assert tsubu.Cache(folder).manifest()["parameters"]["surface_method"] == "anisotropic"  # the default
    before = surface_files(folder)
    tsubu.rebuild_surface(folder, {"surface_method": "spheres"})
    spheres = surface_files(folder)
    assert all(spheres[k] != before[k] for k in before)
    assert tsubu.Cache(folder).manifest()["parameters"]["surface_method"] == "spheres"
    # both enclose the tank's liquid, 0.5 x 0.5 x 0.4 m
    path = frame_path(folder, "surface", 1, "volume")
    assert abs(enclosed_volume(path) - 0.1) < 0.1 * 0.1
    tsubu.rebuild_surface(folder, {"surface_method": "anisotropic"})
    assert surface_files(folder) == before
    with pytest.raises(tsubu.ValidationError, match="surface_method"):
        tsubu.rebuild_surface(folder, {"surface_method": "blobs"})


def test_a_cache_baked_without_a_surface_gets_one(tmp_path):
    folder = str(tmp_path / "c")
    tsubu.bake(tank(2, write_surface=False), folder)
    assert "surface" not in tsubu.Cache(folder).manifest()["streams"]
    tsubu.rebuild_surface(folder)
    m = tsubu.Cache(folder).manifest()
    assert m["streams"]["surface"]["particles"] == "fluid" and tsubu.Cache(folder).frames("surface") == [1, 2]


def test_bad_settings_are_refused_and_nothing_is_written(baked):
    before = surface_files(baked)
    with pytest.raises(tsubu.ValidationError, match="surface_smoothing"):
        tsubu.rebuild_surface(baked, {"surface_smoothing": -1})
    with pytest.raises(tsubu.ValidationError, match="'viscosity' is not a surface setting"):
        tsubu.rebuild_surface(baked, {"viscosity": 1.0})
    assert surface_files(baked) == before


def test_cancelled_rebuild_keeps_whole_frames(tmp_path, baked):
    import shutil
    folder = str(tmp_path / "c")
    shutil.copytree(baked, folder)
    calls = []
    with pytest.raises(tsubu.CancelledError):
        tsubu.rebuild_surface(folder, {"surface_smoothing": 1}, progress=lambda f, d, t: calls.append(f),
                              cancelled=lambda: len(calls) >= 2)
    assert calls == [1, 2]
    for name in surface_files(folder):  # every frame reads whole, old or new
        assert _core.read_vdb(os.path.join(folder, "surface", name))


def test_the_command_line_rebuilds(tmp_path, baked):
    import shutil
    import subprocess
    import sys
    folder = str(tmp_path / "c")
    shutil.copytree(baked, folder)
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "addon"))
    done = subprocess.run([sys.executable, "-m", "tsubu", "surface", folder, "--set", "surface_smoothing=2"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0 and "rebuilt the surface of 4 frames" in done.stdout, done.stderr
    done = subprocess.run([sys.executable, "-m", "tsubu", "surface", folder, "--set", "smoothing"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "expected NAME=VALUE" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([sys.executable, "-m", "tsubu", "surface", folder, "--set", "surface_method=spheres"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0 and tsubu.Cache(folder).manifest()["parameters"]["surface_method"] == "spheres"
    done = subprocess.run([sys.executable, "-m", "tsubu", "surface", folder, "--set", "surface_method=blobs"],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "surface_method" in done.stderr and "Traceback" not in done.stderr


def test_free_removes_the_view_links_and_nothing_else(tmp_path, baked):
    import shutil
    folder = str(tmp_path / "c")
    shutil.copytree(baked, folder)
    os.symlink("surface", os.path.join(folder, "surface.view3"))  # what the add-on reads a rebuilt surface through
    os.symlink("elsewhere", os.path.join(folder, "surface.view4"))  # not ours: another target
    tsubu.Cache(folder).free()
    assert sorted(os.listdir(folder)) == ["surface.view4"]


def test_cache_reads_volume_frames_as_arrays(baked):
    grids = tsubu.Cache(baked).read_volume("surface", 2)
    values, origin, voxel = grids["surface"]
    assert values.dtype == np.float32 and values.ndim == 3 and values.size > 1000
    assert voxel == pytest.approx(0.025 * 0.5) and len(origin) == 3  # the tank's radius x the voxel ratio
    # inside the liquid the signed distance is negative, above it positive
    z = origin[2] + voxel * np.arange(values.shape[0])
    column = values[:, values.shape[1] // 2, values.shape[2] // 2]
    assert column[z < 0.1].min() < 0 and column[-1] > 0 and z[-1] > 0.35  # the tank's liquid is 0.4 m deep
