"""The VDB layer from Python: particle and mesh level sets enclose the right
volume, fog grids keep their values, .vdb files keep grid names."""
import math

import numpy as np
import pytest

from helpers import box, mesh_volume
from tsubu import _core
from tsubu.errors import CorruptFileError


def test_particle_surface_and_mesh_volume(tmp_path):
    g = _core.particles_to_level_set(np.array([[0.0, 0.0, 0.0]], np.float32), 0.4, 0.02)
    assert g.is_level_set and g.name == "surface" and g.voxel_size == pytest.approx(0.02)
    assert g.sample((0.4, 0, 0)) == pytest.approx(0.0, abs=0.01)
    v, t = g.to_mesh()
    assert mesh_volume(v, t) == pytest.approx(4 / 3 * math.pi * 0.4 ** 3, rel=0.02)
    bv, bt = box((0, 0, 0), (1, 2, 0.5))
    mg = _core.mesh_to_level_set(bv, bt, 0.05)
    v, t = mg.to_mesh()
    assert mesh_volume(v, t) == pytest.approx(1.0, rel=0.02)


def test_particle_level_set_is_a_narrow_band():
    """A block of overlapping particles: only a band of 3 voxels each side of the surface
    stays active (the spheres' own bands would fill the whole block: 3x as many voxels),
    the deep inside reads -3 voxels, and the meshed surface is the block grown by about a
    particle radius."""
    spacing, radius, voxel = 0.02, 0.02, 0.005
    side = 30
    i = np.arange(side ** 3)
    pos = np.stack([i % side, i // side % side, i // side // side], axis=1).astype(np.float32) * spacing
    g = _core.particles_to_level_set(pos, radius, voxel)
    block = (side - 1) * spacing
    shell = 6 * (block + 2 * radius) ** 2 * 6 * voxel / voxel ** 3  # six faces, 6 voxels thick
    assert g.active_voxels < 1.3 * shell, g.active_voxels
    centre = block / 2
    assert g.sample((centre, centre, centre)) == pytest.approx(-3 * voxel)
    v, t = g.to_mesh()
    grown = (mesh_volume(v, t) ** (1 / 3) - block) / 2
    assert 0.75 * radius < grown < 1.0 * radius, grown


def test_fog_and_files(tmp_path):
    values = np.zeros((4, 5, 6), np.float32)
    values[1:3, 2:4, 1:5] = np.arange(16, dtype=np.float32).reshape(2, 2, 4) + 1
    fog = _core.dense_to_grid(values, (1.0, 2.0, 3.0), 0.5)
    fog.name = "density"
    assert not fog.is_level_set and fog.active_voxels == 16
    surface = _core.particles_to_level_set(np.zeros((1, 3), np.float32), 0.2, 0.05)
    path = str(tmp_path / "f.vdb")
    _core.write_vdb(path, [surface, fog])
    back = {g.name: g for g in _core.read_vdb(path)}
    assert set(back) == {"surface", "density"} and back["surface"].is_level_set
    dense, origin, voxel = back["density"].to_dense()
    assert dense.sum() == pytest.approx(values.sum())
    assert origin == pytest.approx((1.0 + 0.5, 2.0 + 1.0, 3.0 + 0.5)) and voxel == 0.5
    assert back["density"].sample((1.0 + 0.5 * 1, 2.0 + 0.5 * 2, 3.0 + 0.5 * 1)) == pytest.approx(values[1, 2, 1])
    with open(path, "wb") as f:
        f.write(b"broken")
    with pytest.raises(Exception, match="f.vdb"):
        _core.read_vdb(path)


def test_bad_input_is_an_error_not_a_crash():
    with pytest.raises(ValueError, match="voxel"):
        _core.particles_to_level_set(np.zeros((1, 3), np.float32), 0.2, -1.0)
    with pytest.raises(ValueError, match="positions"):
        _core.particles_to_level_set(np.zeros((5, 2), np.float32), 0.2, 0.1)
    v, t = box()
    t[0, 0] = 42
    with pytest.raises(ValueError, match="vertex"):
        _core.mesh_to_level_set(v, t, 0.1)
    with pytest.raises(TypeError):
        _core.write_vdb("/tmp/x.vdb", [1, 2])
    assert CorruptFileError.__mro__[1] is ValueError


def test_smoothing_keeps_a_sphere_and_erodes_by_the_offset():
    def radius_after(offset):
        g = _core.particles_to_level_set(np.zeros((1, 3), np.float32), 0.4, 0.02)
        g.smooth(4, offset)
        assert g.is_level_set and g.name == "surface"
        v, t = g.to_mesh()
        return (mesh_volume(v, t) * 3 / (4 * math.pi)) ** (1 / 3)

    kept, eroded = radius_after(0.0), radius_after(0.05)
    assert kept == pytest.approx(0.4, abs=0.02)  # Gaussian passes shrink a sphere by under a voxel
    assert kept - eroded == pytest.approx(0.05, abs=0.01)
    with pytest.raises(ValueError, match="iterations"):
        _core.particles_to_level_set(np.zeros((1, 3), np.float32), 0.4, 0.02).smooth(-1)


def test_damaged_files_are_refused_never_crash(tmp_path):
    """Every voxel buffer is read inside the reader (no delayed loading from a memory map, where
    OpenVDB's errors cannot be caught): flipped bytes anywhere, truncation, empty and foreign files
    give CorruptFileError naming the file, or values, never a crash (each read in a child process)."""
    import subprocess
    import sys
    rng = np.random.default_rng(3)
    grid = _core.particles_to_level_set(rng.uniform(0, 1, (300, 3)).astype(np.float32), 0.05, 0.02)
    path = str(tmp_path / "ok.vdb")
    _core.write_vdb(path, [grid])
    whole = open(path, "rb").read()
    damaged = [whole[: len(whole) // 2], b"", b"foreign" * 30]
    for at in range(0, len(whole), max(1, len(whole) // 120)):
        b = bytearray(whole)
        b[at] ^= 0xFF
        damaged.append(bytes(b))
    script = ("import sys\nfrom tsubu import _core\nfrom tsubu.errors import CorruptFileError\n"
              "for p in sys.argv[1:]:\n"
              "    try:\n"
              "        [g.to_dense() for g in _core.read_vdb(p)]\n"
              "    except CorruptFileError as e:\n"
              "        assert p in str(e), str(e)\n"
              "    except (ValueError, MemoryError):\n"
              "        pass\n"
              "print('read all')\n")
    paths = []
    for k, data in enumerate(damaged):
        paths.append(str(tmp_path / f"d{k}.vdb"))
        with open(paths[-1], "wb") as f:
            f.write(data)
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0 and "read all" in out.stdout, (out.returncode, out.stderr[-2000:])
