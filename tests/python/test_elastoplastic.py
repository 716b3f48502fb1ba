"""The elastoplastic effect in metres, with the presets unchanged: a 10 cm cube of soft jelly at the default
resolution and a 2 m block of soft clay both settle stably at the default time-step rule (the jelly in its own
shape, the clay flattened and resting); the bake is the same bytes on 1 and 2 threads and after a resume; bad
scenes are refused before baking with the object or parameter named."""
import os

import numpy as np
import pytest

import tsubu
from helpers import assert_same_bytes_with_one_or_two_threads
from tsubu import presets
from tsubu.shapes import box


def cube(size, z0, frames, preset=None, **settings):
    v, t = box((-size / 2, -size / 2, z0), (size / 2, size / 2, z0 + size))
    params = dict(presets.load(presets.available("elastoplastic")[preset])["parameters"]) if preset else {}
    params.update(write_surface=False)
    params.update(settings)
    body = tsubu.SceneObject("Block", "body", v, t, params={"initial_velocity": [0.0, 0.0, 0.0]})
    return tsubu.SceneDescription("elastoplastic", params, 1, frames, 24.0, 0, [body])


def extent(frame):
    p = frame["position"]
    return p.max(axis=0) - p.min(axis=0), p[:, 2].min()


def test_a_jelly_cube_of_10_cm_settles_in_its_own_shape(tmp_path):
    cache = tsubu.bake(cube(0.1, 0.05, 24, "Soft Jelly"), str(tmp_path / "c"))  # default radius: 5 mm
    first, last = cache.read_particles("masters", 1), cache.read_particles("masters", 24)
    size0, _ = extent(first)
    size, bottom = extent(last)
    assert np.allclose(size, size0, rtol=0.01), (size, size0)
    assert 0.0 < bottom < 0.01
    assert np.linalg.norm(last["velocity"], axis=1).max() < 0.05
    assert abs(last["J"].astype(np.float64).mean() - 1.0) < 0.005
    stats = cache.manifest()["stats"]
    # at rest the CG, starting from the last step's correction, converges in a few iterations (it ran to its cap
    # of 50 from v*, ending at about the tolerance, before 2026-11-29). How many varies from step to step with the
    # rounding, as the residual ends near the tolerance: 6-13 at the last steps of 18-30 frames
    assert stats["cg_residual"] <= 1e-4 and stats["cg_iterations"] < 20 and stats["slaves_added"] == 0


def test_a_clay_block_of_2_m_settles_flattened(tmp_path):
    desc = cube(2.0, 1.0, 36, "Soft Clay", particle_radius=0.1)
    cache = tsubu.bake(desc, str(tmp_path / "c"))
    size0, _ = extent(cache.read_particles("masters", 1))
    last = cache.read_particles("masters", 36)
    size, bottom = extent(last)
    assert size[2] < 0.9 * size0[2] and size[0] > size0[0]  # it slumped and spread
    # its masters still span its volume (the box round them 1.03 of the starting one; 0.68 when they piled up on
    # the ground, test_a_clay_block_set_on_the_ground_slumps_keeping_its_volume)
    assert np.prod(size) > 0.9 * np.prod(size0), (size, size0)
    assert bottom >= 0.0 and np.isfinite(last["position"]).all()
    assert last["plastic_strain"].max() > 0.01
    assert np.linalg.norm(last["velocity"], axis=1).max() < 0.5


def occupancy(frame, spacing):
    """The share of masters with a cell of the lattice spacing to themselves: 1 on the starting lattice, about
    0.7-0.9 in a flowed body, small where masters pile up in one place."""
    cells = np.floor(frame["position"].astype(np.float64) / spacing).astype(np.int64)
    return len(np.unique(cells, axis=0)) / len(cells)


def test_a_clay_block_set_on_the_ground_slumps_keeping_its_volume(tmp_path):
    """A 25 cm block of Soft Clay set on the ground slumps and spreads - its yield stress, about 0.5 kPa, is well
    under the 4.4 kPa it presses on its base - with its masters spread through its volume. Until 2026-11-29 the
    masters were held a radius off the ground while the slaves went on to half a radius: the masters above came
    down onto the held ones, and after 3 s the block was one layer of masters on the ground 2 mm thick (occupancy
    0.20, J still 1); now 40 x 40 x 14 cm."""
    r = 0.0125
    cache = tsubu.bake(cube(0.25, 0.003, 72, "Soft Clay", particle_radius=r), str(tmp_path / "c"))
    first, last = cache.read_particles("masters", 1), cache.read_particles("masters", 72)
    size0, _ = extent(first)
    size, bottom = extent(last)
    assert size[2] < 0.8 * size0[2] and size[0] > 1.2 * size0[0], (size, size0)   # slumped and spread
    assert occupancy(last, 2 * r) > 0.5, occupancy(last, 2 * r)                    # 0.72 (0.20 piled up)
    assert np.prod(size) > np.prod(size0), (size, size0)                           # a dome, not a layer
    assert bottom > 0.0


def test_same_bytes_on_one_or_two_threads(tmp_path):
    code = ("from test_elastoplastic import cube\n"
            "d = cube(0.1, 0.05, 4, 'Soft Clay')")
    assert_same_bytes_with_one_or_two_threads(tmp_path, code, ["masters"], range(1, 5))


def test_resume_matches_an_uninterrupted_bake(tmp_path, checkpoint_every_frame):
    whole = tsubu.bake(cube(0.1, 0.05, 8, "Soft Clay"), str(tmp_path / "whole"))
    folder = str(tmp_path / "part")
    with pytest.raises(tsubu.CancelledError):
        tsubu.bake(cube(0.1, 0.05, 8, "Soft Clay"), folder, progress=lambda p: p.frame >= 5)
    tsubu.bake(cube(0.1, 0.05, 8, "Soft Clay"), folder, resume=True)
    part = tsubu.Cache(folder)
    for f in range(1, 9):
        with open(whole.path("masters", f), "rb") as a, open(part.path("masters", f), "rb") as b:
            assert a.read() == b.read(), f
    # the bake's CG work is counted over all of it, the part before the resume included (the checkpoint keeps it)
    ran, resumed = whole.manifest()["stats"], part.manifest()["stats"]
    assert ran["steps"] > 8 and ran["cg_iterations_total"] >= ran["cg_iterations"] > 0
    assert (resumed["steps"], resumed["cg_iterations_total"]) == (ran["steps"], ran["cg_iterations_total"])


def test_bad_scenes_are_refused_before_baking(tmp_path):
    v, t = box((0, 0, 0), (0.1, 0.1, 0.1))
    cases = [
        ("nu", cube(0.1, 0.0, 2, poisson_ratio=0.5), "poisson_ratio"),
        ("E", cube(0.1, 0.0, 2, youngs_modulus=0.0), "youngs_modulus"),
        ("nan", cube(0.1, 0.0, 2, density=float("nan")), "density"),
        ("Leaky", tsubu.SceneDescription("elastoplastic", {}, 1, 2, 24.0, 0,
                                         [tsubu.SceneObject("Leaky", "body", v, t[:-2])]), "Leaky"),
    ]
    for name, desc, words in cases:
        with pytest.raises(ValueError) as e:
            tsubu.bake(desc, str(tmp_path / name))
        assert words in str(e.value), str(e.value)
        assert not os.path.exists(tmp_path / name)


def test_presets_are_the_papers_table_1():
    found = presets.available("elastoplastic")
    assert set(found) == {"Rubber", "Soft Jelly", "Soft Clay", "Very Plastic Clay", "Thin Sheet"}
    assert presets.problems("elastoplastic") == []
    rubber = presets.load(found["Rubber"])["parameters"]
    assert (rubber["youngs_modulus"], rubber["poisson_ratio"], rubber["plastic"]) == (6.9e7, 0.3, False)
    clay = presets.load(found["Soft Clay"])["parameters"]
    assert (clay["yield_stretch"], clay["yield_compression"]) == (4.5e-3, 1.5e-2)


def test_a_jelly_falling_across_an_edge_stays_stable_with_converged_solves(tmp_path):
    """The demo's jelly hits a step's edge: compressed there, the fixed-corotated stiffness is indefinite, and
    fully converged conjugate gradients once blew the body up; the stiffness is now held positive."""
    from tsubu import demos
    desc = demos.elastoplastic_scene(radius=float(np.float32(0.005)), frames=8)  # as Blender stores it
    desc.parameters.update(write_surface=False, cg_iterations=200)
    cache = tsubu.bake(desc, str(tmp_path / "c"))
    last = cache.read_particles("masters", 8)
    assert np.isfinite(last["position"]).all() and np.linalg.norm(last["velocity"], axis=1).max() < 5.0
    assert abs(last["J"].astype(np.float64).mean() - 1.0) < 0.02


def test_without_slaves_a_ball_sags_in_a_zero_energy_mode(tmp_path):
    """Fig. 7: with the stress at the masters themselves a ball dropped from 12 cm sags by about a tenth (0.135 to
    0.121 m in 1 s) while its deformation gradient stays near the identity (a zero-energy mode); with slaves, at the
    same step, it keeps its shape. (Until 2026-11-29 it fell to 2 cm, most of that the masters piling up on the
    ground, test_a_clay_block_set_on_the_ground_slumps_keeping_its_volume.)"""
    from tsubu.shapes import uv_sphere
    v, t = uv_sphere((0, 0, 0.2), 0.08, 16, 32)
    heights = {}
    for slaves in (True, False):
        params = {"particle_radius": 0.0075, "poisson_ratio": 0.35, "youngs_modulus": 1.2e6, "plastic": True,
                  "yield_stretch": 0.1, "yield_compression": 0.8, "write_surface": False, "slave_particles": slaves}
        desc = tsubu.SceneDescription("elastoplastic", params, 1, 24, 24.0, 0,
                                      [tsubu.SceneObject("Ball", "body", v, t)])
        last = tsubu.bake(desc, str(tmp_path / f"s{slaves}")).read_particles("masters", 24)
        p = last["position"]
        heights[slaves] = p[:, 2].max() - p[:, 2].min()
        assert abs(last["J"].astype(np.float64).mean() - 1.0) < 0.01  # F ~ I either way
    assert heights[True] > 0.134 and heights[False] < 0.95 * heights[True], heights  # its masters span 0.135 m


@pytest.mark.physics_long
def test_a_thin_sheet_drapes_over_a_cross_and_tears_stably(tmp_path):
    """Fig. 12: a plastic sheet one particle thick falls onto a cross of bars: it stays finite, the bars hold its
    middle up, its corners drape below them, and where it tears slaves are added, a bounded number."""
    from tsubu.shapes import grid_plane
    v, t = grid_plane((-0.15, -0.15), (0.15, 0.15), 0.25, (6, 6))
    params = dict(presets.load(presets.available("elastoplastic")["Thin Sheet"])["parameters"])
    params.update(particle_radius=0.0075, write_surface=False)
    bars = [tsubu.SceneObject("BarX", "obstacle", *box((-0.25, -0.02, 0.0), (0.25, 0.02, 0.15))),
            tsubu.SceneObject("BarY", "obstacle", *box((-0.02, -0.25, 0.0), (0.02, 0.25, 0.15)))]
    desc = tsubu.SceneDescription("elastoplastic", params, 1, 24, 24.0, 0,
                                  [tsubu.SceneObject("Sheet", "body", v, t, params={"sheet": True})] + bars)
    cache = tsubu.bake(desc, str(tmp_path / "c"))
    first, last = cache.read_particles("masters", 1), cache.read_particles("masters", 24)
    p = last["position"]
    assert len(p) == 21 * 21 and np.isfinite(p).all() and (first["id"] == last["id"]).all()
    # by where each master started: friction holds the sheet on the bars, so what ends up beyond r = 0.15 is
    # mostly the sheet along them, not its corners
    r = np.hypot(*first["position"][:, :2].T)
    assert p[r < 0.03, 2].mean() > 0.15  # held up by the bars
    assert p[r > 0.15, 2].mean() < 0.12  # the corners draped
    stats = cache.manifest()["stats"]
    assert 0 < stats["slaves_added"] and stats["slaves"] < 3 * stats["masters"] and stats["max_plastic_strain"] > 0.05


@pytest.mark.parametrize("keep_volume", [False, True])
def test_two_bodies_merge_conserving_momentum(tmp_path, keep_volume):
    """Fig. 14: two clay blocks thrown at each other at 4 m/s in free space stick into one: nothing explodes,
    and the momentum stays what it was (zero). Keeping its volume (the default) the clay squeezes the slaves
    between the blocks together, and the crowded ones are removed; with the paper's plastic flow it compacts
    instead (by 13 % at 3 m/s, 2026-11-29), and no slave came that close."""
    from tsubu import _core

    def block(name, lo, hi, vx):
        v, t = box(lo, hi)
        return {"name": name, "role": 0, "vertices": v, "triangles": t, "motion": None, "velocity": [vx, 0.0, 0.0],
                "sheet": 0}
    settings = {"particle_radius": 0.005, "youngs_modulus": 1.4e5, "poisson_ratio": 0.2, "plastic": 1,
                "yield_stretch": 7.5e-4, "yield_compression": 2.5e-3, "ground": 0, "gravity": [0.0, 0.0, 0.0],
                "write_surface": 0, "keep_volume": int(keep_volume)}
    objects = [block("A", (-0.11, -0.04, 0.0), (-0.01, 0.04, 0.08), 4.0),
               block("B", (0.01, -0.04, 0.0), (0.11, 0.04, 0.08), -4.0)]
    stats = _core.elastoplastic_bake(settings, objects, str(tmp_path / "c"), 1, 12, 24.0)
    assert (stats["slaves_removed"] > 0 or not keep_volume) and stats["slaves"] < 3 * stats["masters"]
    volume = stats["volume"] / stats["rest_volume"]
    assert abs(volume - 1.0) < 0.01 if keep_volume else volume < 0.95, stats
    from tsubu.cache import read_particles
    frame = read_particles(str(tmp_path / "c" / "masters" / "masters_000012.tspf"))
    p, vel = frame["position"], frame["velocity"].astype(np.float64)
    mass = 1000.0 * 0.01 ** 3
    assert abs(mass * vel[:, 0].sum()) < 1e-3 * mass * 640 * 4.0  # of either block's momentum
    assert p[:, 0].max() - p[:, 0].min() < 0.2  # one body, shorter than the two were apart
