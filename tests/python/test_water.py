"""The water effect, physically: a resting column keeps its density and
level, a dam break conserves particles and never gains energy, a light box
floats half under and a dense stone sinks, a moving cup carries its liquid,
bakes are deterministic across thread counts, resumable, and bad scenes are
refused before baking with the object named."""
import os

import numpy as np
import pytest

import tsubu
from helpers import assert_same_bytes_with_one_or_two_threads
from water_scenes import meshed_level, moving_cup, obj, tank



def bake(desc, tmp_path, name="c"):
    return tsubu.bake(desc, str(tmp_path / name))


def test_hydrostatic_column_holds_density_and_level(tmp_path):
    """A resting column: bulk density within 1% of rest, and once the starting
    cubic lattice has relaxed into SPH's own packing (about 1.5 s), the free
    surface holds still for the next 1.5 s."""
    cache = bake(tank(72), tmp_path)  # 3 s
    frames = [cache.read_particles("fluid", f) for f in cache.frames("fluid")]
    assert all(f.count == frames[0].count for f in frames)
    h = 4 * 0.025
    last = frames[-1]
    z = last["position"][:, 2]
    bulk = z < z.max() - h  # away from the free surface, where SPH density is naturally low
    assert abs(last["density"][bulk].mean() / 1000.0 - 1.0) < 0.01
    top_early = np.sort(frames[36]["position"][:, 2])[-50:].mean()
    top_late = np.sort(z)[-50:].mean()
    assert abs(top_late - top_early) < 0.003, (top_early, top_late)  # no drift of the free surface
    assert np.linalg.norm(last["velocity"], axis=1).mean() < 0.05  # settled


def test_dam_break_conserves_particles_and_never_gains_energy(tmp_path):
    desc = tank(36, size=(1.0, 0.3, 0.8), depth=0.5)
    desc.objects[1] = obj("Water", "fluid", (0, 0, 0), (0.35, 0.3, 0.5))
    cache = bake(desc, tmp_path)
    energies, count = [], None
    for f in cache.frames("fluid"):
        fr = cache.read_particles("fluid", f)
        p, v = fr["position"].astype(np.float64), fr["velocity"].astype(np.float64)
        count = count or fr.count
        assert fr.count == count
        assert (p >= 0).all() and (p <= [1.0, 0.3, 0.8]).all()
        energies.append((0.5 * (v * v).sum(axis=1) + 9.81 * p[:, 2]).mean())  # per unit mass
    e0 = energies[0]
    assert max(energies) <= e0 * 1.002
    assert all(b <= a + 0.002 * e0 for a, b in zip(energies, energies[1:]))
    assert cache.read_particles("fluid", 36)["position"][:, 0].max() > 0.9  # it did break and run


def body_points(cache, name, frame, lo, hi, n=20):
    """World positions of a grid of points filling a box body [lo, hi] at a frame."""
    t = (np.arange(n) + 0.5) / n
    local = np.array([[lo[k] + (hi[k] - lo[k]) * c for k, c in enumerate((a, b, c))] for a in t for b in t for c in t])
    m = cache.read_transforms("rigid", frame)[name]
    return (np.c_[local, np.ones(len(local))] @ m.T)[:, :3]


@pytest.mark.physics_long
def test_light_box_floats_half_under_and_stone_sinks(tmp_path):
    size = (1.2, 1.2, 1.0)
    crate_lo, crate_hi = (0.15, 0.45, 0.5), (0.45, 0.75, 0.8)
    stone_lo, stone_hi = (0.75, 0.45, 0.55), (0.95, 0.65, 0.75)
    extra = [obj("Crate", "rigid", crate_lo, crate_hi, density=500.0),
             obj("Stone", "rigid", stone_lo, stone_hi, density=3000.0)]
    cache = bake(tank(96, size=size, depth=0.45, extra=extra), tmp_path)
    last = cache.frames("fluid")[-1]
    fluid = cache.read_particles("fluid", last)["position"]
    far = (fluid[:, 0] > 0.5) & (fluid[:, 0] < 0.7)  # between the bodies
    surface = np.sort(fluid[far, 2])[-20:].mean() + 0.025  # particle centres sit a radius below the surface
    # Archimedes: the submerged share of the volume is the density ratio, whatever the body's tilt
    # (a cube of half water's density floats tilted, so its volume, not its height, is what to measure)
    submerged = (body_points(cache, "Crate", last, crate_lo, crate_hi)[:, 2] < surface).mean()
    assert 0.425 <= submerged <= 0.575, f"crate {submerged:.2f} submerged"
    stone = body_points(cache, "Stone", last, stone_lo, stone_hi)[:, 2].min()
    assert stone < 0.03, f"stone bottom at {stone:.3f} m"
    centre = body_points(cache, "Crate", last, crate_lo, crate_hi).mean(axis=0)
    centre_before = body_points(cache, "Crate", last - 12, crate_lo, crate_hi).mean(axis=0)
    # at rest over the last half second: a slight bob (< 4 cm/s), and no more than the slow drift
    # the liquid's lingering slosh gives a floating body (2-3 cm here; it fell in at 2 m/s)
    moved = centre - centre_before
    assert abs(moved[2]) < 0.02, f"crate still bobbing: {moved[2]:+.3f} m in 12 frames"
    assert np.hypot(moved[0], moved[1]) < 0.04, f"crate still moving: {moved} m in 12 frames"


def test_moving_cup_carries_its_liquid(tmp_path):
    desc, lo, hi = moving_cup(30)
    cache = bake(desc, tmp_path)
    first, last = cache.read_particles("fluid", 1), cache.read_particles("fluid", 30)
    assert last.count == first.count  # nothing spilled or leaked out of the domain
    p = last["position"]
    inside = ((p[:, 0] > lo[0] + 0.3 - 0.01) & (p[:, 0] < hi[0] + 0.3 + 0.01) &
              (p[:, 1] > lo[1] - 0.01) & (p[:, 1] < hi[1] + 0.01) & (p[:, 2] > lo[2] - 0.01))
    assert inside.all(), f"{(~inside).sum()} particles passed through the cup's walls"
    moved = p[:, 0].mean() - first["position"][:, 0].mean()
    assert abs(moved - 0.3) < 0.05


def test_same_bytes_with_one_or_two_threads(tmp_path):
    assert_same_bytes_with_one_or_two_threads(tmp_path, ("from water_scenes import tank, obj\n"
        "d = tank(6, extra=[obj('Crate', 'rigid', (0.1, 0.1, 0.45), (0.3, 0.3, 0.55), density=400.0)])\n"
        "d.parameters['write_surface'] = True"), ("fluid", "rigid"), range(1, 7))


@pytest.mark.parametrize("solver", ["wcsph", "muller"])
def test_avx2_and_portable_loops_give_the_same_bytes(tmp_path, solver):
    """The SPH inner loops' two forms (sph_loops.c) round alike: a splashing tank with a
    floating crate, surface tension on, bakes to the same bytes with either."""
    from tsubu import _core
    if _core.sph_simd() != "avx2":
        pytest.skip("this CPU has no AVX2: only the portable form runs here")
    extra = [obj("Crate", "rigid", (0.1, 0.1, 0.45), (0.3, 0.3, 0.55), density=400.0)]
    folders = []
    try:
        for allow in (True, False):
            _core.sph_simd(allow)
            desc = tank(8, size=(0.6, 0.3, 0.6), depth=0.3, extra=extra, solver=solver, surface_tension=0.5)
            desc.objects[1].params["initial_velocity"] = (2.0, 0.0, -1.0)
            bake(desc, tmp_path, f"simd_{allow}")
            folders.append(tmp_path / f"simd_{allow}")
    finally:
        _core.sph_simd(True)
    for stream in ("fluid", "rigid"):
        for f in range(1, 9):
            name = os.path.join(stream, f"{stream}_{f:06d}.tspf")
            assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name


def test_resume_matches_an_uninterrupted_bake(tmp_path, checkpoint_every_frame):
    extra = [obj("Crate", "rigid", (0.1, 0.1, 0.45), (0.3, 0.3, 0.55), density=400.0)]
    whole = bake(tank(10, extra=extra), tmp_path, "whole")
    folder = str(tmp_path / "part")
    with pytest.raises(tsubu.CancelledError):
        tsubu.bake(tank(10, extra=extra), folder, progress=lambda p: p.frame >= 6)
    part = tsubu.Cache(folder)
    assert part.manifest()["status"] == "cancelled" and part.last_whole_frame() == 5
    assert part.checkpoint_frame() == 5
    tsubu.bake(tank(10, extra=extra), folder, resume=True)
    for f in range(1, 11):
        a, b = whole.read_particles("fluid", f), part.read_particles("fluid", f)
        assert np.array_equal(a["position"], b["position"]) and np.array_equal(a["id"], b["id"]), f
        assert np.array_equal(whole.read_particles("rigid", f)["position"], part.read_particles("rigid", f)["position"])


def tap_scene(**walls):
    return tsubu.SceneDescription("water", {"particle_radius": 0.025, "write_surface": False, **walls}, 1, 24, 24.0,
                                  0, [obj("Domain", "domain", (0, 0, 0), (1.0, 1.0, 1.0)),
                                      obj("Tap", "inflow", (0.4, 0.4, 0.8), (0.6, 0.6, 0.9), velocity=[0.0, 0.0, -1.0],
                                          emit_start=1, emit_end=12)])


def test_inflow_emits_and_the_domain_removes(tmp_path):
    from tsubu.effects.water import OPEN
    cache = bake(tap_scene(**OPEN), tmp_path)
    counts = [cache.read_particles("fluid", f).count for f in cache.frames("fluid")]
    assert counts[0] == 0 and max(counts) > 100
    assert counts[12] >= counts[5]  # keeps emitting while on
    ids = cache.read_particles("fluid", 12)["id"]
    assert len(np.unique(ids)) == len(ids)
    assert counts[-1] < max(counts)  # the open domain drops what falls out of it


def test_a_new_domain_is_a_tank_that_holds_its_liquid(tmp_path):
    """Default walls: every side but the top, so liquid poured into a new domain stays; the top is open."""
    from tsubu.effects.water import WATER
    assert {k: v for k, v in WATER.defaults().items() if k.startswith("wall_") and k != "wall_friction"} == {
        "wall_left": True, "wall_right": True, "wall_front": True, "wall_back": True, "wall_bottom": True,
        "wall_top": False}
    cache = bake(tap_scene(), tmp_path)
    counts = [cache.read_particles("fluid", f).count for f in cache.frames("fluid")]
    assert counts[-1] == max(counts) > 100 and cache.manifest()["stats"]["removed"] == 0, cache.manifest()["stats"]
    last = cache.read_particles("fluid", 24)["position"]
    assert last.min() >= 0.0 and last[:, :2].max() <= 1.0  # on the floor, between the sides


def test_bad_scenes_are_refused_before_baking(tmp_path):
    from tsubu.shapes import box
    v, t = box((0.1, 0.1, 0.1), (0.3, 0.3, 0.3))
    cases = [
        ("Leaky", tsubu.SceneObject("Leaky", "fluid", v, t[:-1]), "open"),
        ("Nothing", tsubu.SceneObject("Nothing", "fluid", np.zeros((0, 3)), np.zeros((0, 3))), "empty"),
        ("Stone", obj("Stone", "rigid", (0.1, 0.1, 0.1), (0.2, 0.2, 0.2), density=0.0), "density"),
    ]
    for name, bad, words in cases:
        desc = tank(3)
        desc.objects.append(bad)
        with pytest.raises(ValueError) as e:
            tsubu.bake(desc, str(tmp_path / name))
        assert name in str(e.value) and words in str(e.value), str(e.value)
        assert not os.path.exists(tmp_path / name)
    outside = tank(3)
    outside.objects[1] = obj("Water", "fluid", (2, 2, 2), (2.5, 2.5, 2.5))
    with pytest.raises(ValueError, match="no liquid inside the domain"):
        tsubu.bake(outside, str(tmp_path / "outside"))
    big = tank(3, max_particles=100)
    with pytest.raises(MemoryError, match="max_particles"):
        tsubu.bake(big, str(tmp_path / "big"))
    for name in ("outside", "big"):  # refused by the solver's own checks: nothing was written
        assert not os.path.exists(tmp_path / name)


@pytest.mark.physics_long
@pytest.mark.parametrize("drop", [0.35, 0.36])
def test_bodies_collide_and_stack_without_passing_through(tmp_path, drop):
    """Two stones dropped one above the other into shallow water: the upper lands on the
    lower and stays above it; both end on the bottom of the tank. Two drop heights: at 2.5 cm
    particles (stones two spacings thick) whether the upper stayed on was a matter of luck, at
    1.25 cm it stays from either height."""
    lower_lo, lower_hi = (0.15, 0.15, 0.05), (0.35, 0.35, 0.15)
    upper_lo, upper_hi = (0.17, 0.17, drop), (0.33, 0.33, drop + 0.1)
    extra = [obj("Lower", "rigid", lower_lo, lower_hi, density=2500.0),
             obj("Upper", "rigid", upper_lo, upper_hi, density=2500.0)]
    cache = bake(tank(36, size=(0.5, 0.5, 0.6), depth=0.1, radius=0.0125, extra=extra), tmp_path)
    last = cache.frames("rigid")[-1]
    lower = body_points(cache, "Lower", last, lower_lo, lower_hi, n=8)
    upper = body_points(cache, "Upper", last, upper_lo, upper_hi, n=8)
    assert lower[:, 2].min() < 0.03  # on the bottom
    assert upper[:, 2].min() > lower[:, 2].max() - 0.02, "the upper stone sank into the lower one"
    assert upper[:, 2].min() > 0.08  # resting on it, not beside it on the floor


def test_a_refused_rebake_leaves_the_previous_cache_as_it_was(tmp_path):
    """The solver's own checks (a flat body, too many particles) run before the old cache is touched."""
    folder = str(tmp_path / "c")
    tsubu.bake(tank(3), folder)
    cache = tsubu.Cache(folder)
    before = {f: open(os.path.join(folder, "fluid", f), "rb").read() for f in os.listdir(os.path.join(folder, "fluid"))}
    manifest = cache.manifest()
    flat = tank(3)
    v = np.array([[0.1, 0.1, 0.1], [0.3, 0.1, 0.1], [0.3, 0.3, 0.1], [0.1, 0.3, 0.1]], np.float32)
    t = np.array([[0, 1, 2], [0, 2, 3], [0, 2, 1], [0, 3, 2]], np.int32)  # closed, but of no volume
    flat.objects.append(tsubu.SceneObject("Flat", "rigid", v, t, params={"density": 500.0}))
    for bad, error, words in ((flat, ValueError, "Flat"), (tank(3, max_particles=100), MemoryError, "max_particles")):
        with pytest.raises(error, match=words):
            tsubu.bake(bad, folder)
        assert cache.manifest() == manifest
        assert {f: open(os.path.join(folder, "fluid", f), "rb").read()
                for f in os.listdir(os.path.join(folder, "fluid"))} == before


def test_no_liquid_starts_inside_a_thick_body(tmp_path):
    """A body many spacings thick in a full tank starts empty inside: the fill skips its whole inside,
    not only the band its particles cover (liquid left inside burst out and threw the body)."""
    lo, hi = (0.15, 0.15, 0.05), (0.45, 0.45, 0.35)  # 7.5 spacings across at radius 0.02
    desc = tank(1, size=(0.6, 0.6, 0.6), depth=0.5, radius=0.02,
                extra=[obj("Crate", "rigid", lo, hi, density=500.0)])
    cache = tsubu.bake(desc, str(tmp_path / "c"))
    p = cache.read_particles("fluid", 1)["position"]
    margin = 0.5 * 0.04  # the contact distance: half a spacing
    inside = np.all((p > np.array(lo) + margin) & (p < np.array(hi) - margin), axis=1)
    assert inside.sum() == 0, f"{inside.sum()} fluid particles start inside the body"
    near = np.all((p > np.array(lo) - 0.1) & (p < np.array(hi) + 0.1), axis=1)
    assert near.sum() > 100  # the liquid is all around it


def test_estimate_measures_the_first_frame_and_touches_no_cache(tmp_path):
    desc = tank(6, write_surface=True)
    e = tsubu.estimate(desc)
    cache = bake(desc, tmp_path)
    first = cache.read_particles("fluid", 1).count
    assert e.what == "particles" and e.count == first and e.up_to == e.count and e.frames == 6
    sizes = [os.path.getsize(cache.path(s, 1)) for s in ("fluid", "surface")]
    assert e.disk_per_frame == sum(sizes) and e.disk_total == 6 * e.disk_per_frame
    assert e.memory is None or e.memory >= 0
    assert "particles" in e.summary() and "MB for 6 frames" in e.summary()
    # an inflow's liquid is still to come: the count says up to the capacity the solver reserves
    tap = tap_scene()
    e = tsubu.estimate(tap)
    assert e.count == 0 and e.up_to > 100 and e.disk_per_frame > 32 * e.up_to


@pytest.mark.physics_long
def test_resting_bodies_lift_off_as_an_inflow_fills_the_tank(tmp_path):
    """A light ball resting in a corner of a dry tank - on the floor, against two sides - lifts off and floats
    as a tap fills the tank around it, and a stone stays down. Liquid cannot get between a body and a wall
    closer than a particle (the film, film.h, carries the liquid's pressure there): before it, the ball
    stayed on the floor, held down by the liquid on its top and pressed onto the sides."""
    from tsubu.shapes import uv_sphere
    R = 0.08   # 6.4 spacings across
    v, t = uv_sphere((R, R, R), R, rings=24, segments=48)
    ball = tsubu.SceneObject("Ball", "rigid", v, t, params={"density": 500.0})
    stone = obj("Stone", "rigid", (0.3, 0.3, 0.0), (0.42, 0.42, 0.12), density=2500.0)
    tap = obj("Tap", "inflow", (0.3, 0.05, 0.45), (0.45, 0.2, 0.5), velocity=[0.0, 0.0, -1.5], emit_start=1,
              emit_end=40)
    desc = tsubu.SceneDescription("water", {"particle_radius": 0.0125, "write_surface": False}, 1, 72, 24.0, 0,
                                  [obj("Domain", "domain", (0, 0, 0), (0.5, 0.5, 0.6)), tap, ball, stone])
    cache = bake(desc, tmp_path)
    heights = []
    for f in cache.frames("rigid")[-12:]:
        fluid = cache.read_particles("fluid", f)["position"]
        level = np.sort(fluid[:, 2])[-100:].mean() + 0.0125
        heights.append((cache.read_transforms("rigid", f)["Ball"] @ [R, R, R, 1.0])[2] - level)
        assert abs(cache.read_transforms("rigid", f)["Stone"][2, 3]) < 0.005   # the stone stays where it stood
    assert level > 0.19, level
    # floating: its centre near the surface (a ball of half water's density floats half under), far off the floor
    assert -0.045 < np.mean(heights) < 0.02, heights


def test_bodies_that_hit_each_other_part_slower_than_they_met(tmp_path):
    """Two 10 cm crates thrown at each other at 2 m/s above a shallow pool meet and part at about a tenth of the
    4 m/s they met with (restitution 0.1), their summed momentum kept. Each used to take the other for a wall: they
    parted at 1.2 times the speed they met with, gaining energy at every hit."""
    crates = [obj("Left", "rigid", (0.30, 0.15, 0.30), (0.40, 0.25, 0.40), density=500.0, initial_velocity=[2.0, 0, 0]),
              obj("Right", "rigid", (0.60, 0.15, 0.30), (0.70, 0.25, 0.40), density=500.0,
                  initial_velocity=[-2.0, 0, 0])]
    desc = tank(12, size=(1.0, 0.4, 0.6), depth=0.06, radius=0.02, extra=crates)
    desc.fps = 96.0
    cache = bake(desc, tmp_path)
    centres = {"Left": [0.35, 0.2, 0.35, 1.0], "Right": [0.65, 0.2, 0.35, 1.0]}  # at rest; their origins are 0
    x = np.array([[(cache.read_transforms("rigid", f)[n] @ c)[0] for n, c in centres.items()] for f in range(1, 13)])
    closing = -np.diff(x[:, 1] - x[:, 0]) * desc.fps   # > 0 while they close in
    assert closing[0] > 3.5, closing                   # they came at each other at 4 m/s
    assert 0.0 < -closing[-1] < 0.8, closing           # and part at a fifth of that at most
    assert min(x[:, 1] - x[:, 0]) > 0.08, x            # without passing into each other (to the particles' 2 cm)
    assert abs((x[-1] - x[-2]).sum() * desc.fps) < 0.3, x   # the two move as one would: momentum kept (equal masses)


@pytest.mark.physics_long
def test_a_ball_of_the_liquids_density_hangs_where_it_is(tmp_path):
    """Buoyancy equals the weight of the liquid displaced: a ball of water's own density, 6.4 spacings across,
    let go in the middle of a resting tank stays within a few centimetres of where it was over two seconds.
    Before rigid bodies took their wall weight from their own shape (wall_field.h), the liquid around a ball
    read as compressed or thinned by its sampling, and this ball sank to the floor."""
    from tsubu.shapes import uv_sphere
    R = 0.08
    v, t = uv_sphere((0.25, 0.25, 0.2), R, rings=24, segments=48)
    ball = tsubu.SceneObject("Ball", "rigid", v, t, params={"density": 1000.0})
    cache = bake(tank(48, size=(0.5, 0.5, 0.6), depth=0.4, radius=0.0125, extra=[ball]), tmp_path)
    heights = [(cache.read_transforms("rigid", f)["Ball"] @ [0.25, 0.25, 0.2, 1.0])[2] for f in cache.frames("rigid")]
    assert max(abs(z - 0.2) for z in heights) < 0.05, heights
    assert abs(heights[-1] - heights[-13]) < 0.01, heights  # it holds over the last half second: not sinking


@pytest.mark.physics_long
@pytest.mark.parametrize("r, density", [(0.01, 500.0), (0.01, 700.0), (0.01, 917.0), (0.02, 500.0), (0.02, 917.0)])
def test_a_ball_floats_through_the_surface_as_archimedes_says(tmp_path, r, density):
    """A ball 8 spacings across (16 cm at 1 cm particles; 30 cm, 7.5, at the default 2 cm) dropped in at its waterline
    settles with the share of its volume under the meshed surface that its density says, within 2 % of its volume,
    near-neutral ice (917 kg/m³) included. At 1 cm in a 0.6 m tank filled 0.3 m deep, against the meshed surface
    (2026-12-04): 0.507, 0.704 and 0.914; at 2 cm in a 1.125 m tank filled 0.5625 m deep, 0.514 and 0.915. The mesh
    lies 1.9 mm (0.09 spacings) above the highest particle centres + r, which this test read the level from until
    2026-12-04 (0.488, 0.685, 0.904 against it): the top layers are crowded (docs/water.md, Limits) and the mesh,
    where the particles' volume ends, counts them. Before that, on 2026-11-25, with particle shifting
    (sph_model.c): 0.494, 0.690 and 0.905; without it 0.492, 0.680 and 0.893 (the packing held a false pressure
    under the ball); before the body's virtual particles carried the hydrostatic pressure of where they are and
    the liquid rested on the body's wall pressure, 0.536, 0.773, 0.98."""
    from tsubu.shapes import uv_sphere
    scale = 1.0 if r == 0.01 else 1.875  # the ball, the tank and its depth
    radius, side, depth = 0.08 * scale, 0.6 * scale, 0.3 * scale
    centre = (side / 2, side / 2, depth + radius * (1 - 2 * density / 1000.0))
    v, t = uv_sphere(centre, radius, 24, 48)
    ball = tsubu.SceneObject("Ball", "rigid", v, t, params={"density": density})
    cache = bake(tank(144, size=(side, side, 2 * depth), depth=depth, radius=r, extra=[ball], write_surface=True),
                 tmp_path)
    shares = []
    for f in range(96, 145, 8):  # the last two seconds
        level = meshed_level(cache, f, side, centre, 0.2 * scale)
        z = (cache.read_transforms("rigid", f)["Ball"] @ np.array([*centre, 1.0]))[2]
        under = min(max(level - z + radius, 0.0), 2 * radius)  # the cap's height
        shares.append(under * under * (3 * radius - under) / (4 * radius ** 3))
    share = float(np.mean(shares))
    assert abs(share - density / 1000.0) < 0.02, f"{share:.3f} of the ball under, Archimedes says {density / 1000:.3f}"


@pytest.mark.physics_long
def test_a_flat_slab_floats_as_archimedes_says(tmp_path):
    """A 30 x 30 x 10 cm slab of 300 kg/m³ (15 spacings across, 5 thick) floats flat with its draft within 2 % of
    its volume of Archimedes' 30 mm under the meshed surface: 28.2 mm (2026-12-04). Against the highest particle
    centres + r it reads 26.5 mm, 3.5 % of its volume high, as that level sits under the mesh. Flat bottoms
    still float about 2 mm high against the mesh (docs/water.md, Limits)."""
    r, side, depth, width, height, density = 0.01, 0.8, 0.3, 0.3, 0.1, 300.0
    draft = height * density / 1000.0
    centre = (side / 2, side / 2, depth - draft + height / 2)
    lo = (centre[0] - width / 2, centre[1] - width / 2, centre[2] - height / 2)
    slab = obj("Slab", "rigid", lo, (lo[0] + width, lo[1] + width, lo[2] + height), density=density)
    cache = bake(tank(120, size=(side, side, 0.6), depth=depth, radius=r, extra=[slab], write_surface=True), tmp_path)
    drafts = []
    for f in range(96, 121, 4):  # the last second of five
        m = cache.read_transforms("rigid", f)["Slab"]
        bottom = (m @ np.array([*centre, 1.0]))[2] - height / 2
        assert abs(m[2, 2] - 1.0) < 1e-3, m  # flat
        drafts.append(meshed_level(cache, f, side, centre, 0.3) - bottom)
    measured = float(np.mean(drafts))
    assert abs(measured - draft) / height < 0.02, f"draft {1000 * measured:.1f} mm, Archimedes says {1000 * draft:.0f}"


def test_honey_rests_calm(tmp_path):
    """The Honey preset at its own 2 cm particles: a resting tank's liquid is still, under 1.5 cm/s on average
    after three seconds. Particle shifting (on by default) keeps a thin liquid's packing a liquid's at the
    price of a particle-scale jitter that viscosity does not calm (measured: 3.5 cm/s with the default 0.01,
    1.0 cm/s without); and a ball floats the same in honey with or without it (43.3 % and 43.4 % of its
    volume under), so the preset turns it off."""
    from tsubu import presets
    honey = presets.load(presets.available("water")["Honey"])["parameters"]
    cache = bake(tank(72, radius=0.02, **honey), tmp_path)
    speed = np.linalg.norm(cache.read_particles("fluid", 72)["velocity"], axis=1).mean()
    assert speed < 0.015, f"honey moves at {100 * speed:.1f} cm/s at rest"
