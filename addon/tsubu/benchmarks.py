"""Benchmarks run from Python (`python3 -m tsubu bench EFFECT`): figures, never assertions.

'core' measures the cache and VDB paths the binding exposes; each effect adds
its own as it arrives. The last line is always "EFFECT: <number> <unit>".
The C-only core benchmark (grid, density sum) is `make bench`.
"""
import os
import tempfile
import time

import numpy as np

from . import _core


def _block(n, spacing=0.01, seed=1):
    side = int(np.ceil(n ** (1 / 3)))
    i = np.arange(n)
    p = np.stack([i % side, (i // side) % side, i // side // side], axis=1).astype(np.float32) * spacing
    p += np.random.default_rng(seed).uniform(0, 0.2 * spacing, p.shape).astype(np.float32)
    return p


def bench_core():
    n = 1_000_000
    pos = _block(n)
    vel = np.stack([0.1 * pos[:, 1], -0.1 * pos[:, 0], -np.ones(n, np.float32)], axis=1)
    ids = np.arange(n, dtype=np.uint32)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.tspf")
        t = time.perf_counter()
        _core.write_frame(path, 1, 0.0, [("position", pos), ("velocity", vel), ("id", ids)], 1)
        write = time.perf_counter() - t
        t = time.perf_counter()
        _core.read_frame(path)
        read = time.perf_counter() - t
        mb = n * 28 / 1e6
        print(f"cache n={n}: write {mb / write:.1f} MB/s, read {mb / read:.1f} MB/s "
              f"({mb:.1f} MB raw, {os.path.getsize(path) / 1e6:.1f} MB on disk)")
    m = 200_000
    t = time.perf_counter()
    _core.particles_to_level_set(_block(m), 0.01, 0.005)
    rate = m / (time.perf_counter() - t)
    print(f"vdb n={m}: particles -> level set {rate:.0f} particles/s")
    print(f"core: {rate:.0f} particles/s")


def _dam_break(n):
    """Particle-steps per second of the water solver on a dam break of about n particles.

    The bake runs a few frames of 12 substeps each; the time between the first and the
    last progress call covers only substeps (no set-up, no file output)."""
    import json

    from . import effects  # noqa: F401
    from .effects import water
    from .scene import SceneDescription, SceneObject
    from .shapes import box

    radius = 0.01
    d = 2 * radius
    side = (n / 2.0) ** (1 / 3) * d  # column w x w x 2w holding n particles
    params = {"particle_radius": radius, "domain_walls": True, "write_surface": False, "max_particles": 4 * n}

    def obj(name, role, lo, hi):
        v, t = box(lo, hi)
        return SceneObject(name, role, v, t)

    desc = SceneDescription("water", params, 1, 3, 24.0, 0, [
        obj("Domain", "domain", (0, 0, 0), (4 * side, side, 3 * side)),
        obj("Water", "fluid", (0, 0, 0), (side, side, 2 * side))]).validate()
    settings, objects = water.solver_input(desc)
    # a frame long enough for 12 CFL-sized substeps: the cap then fixes the count
    fps = 1.0 / (12 * 0.4 * 2 * d / (desc.parameters["speed_of_sound"] + 5.0))
    stamps = {}  # frame -> times of its substeps' ends
    with tempfile.TemporaryDirectory() as folder:
        stats = _core.water_bake(settings, objects, folder, 1, 3, fps, max_substeps=12,
                                 progress=lambda frame, *a: stamps.setdefault(frame, []).append(time.perf_counter()))
    # between the first and last substep of each frame: no set-up, no output writing
    elapsed = sum(t[-1] - t[0] for t in stamps.values())
    steps = sum(len(t) - 1 for t in stamps.values())
    count = stats["fluid_particles"]
    rate = count * steps / elapsed
    print(json.dumps({"particles": count, "steps": steps, "seconds": elapsed, "rate": rate}))


def bench_water():
    """Dam breaks of 50k, 200k and 1M particles with 1 and 2 threads, each in its own process."""
    import json
    import subprocess
    import sys
    rows = []
    for n in (50_000, 200_000, 1_000_000):
        for threads in (1, 2):
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))
            code = f"from tsubu.benchmarks import _dam_break; _dam_break({n})"
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"water benchmark at {n} particles failed: {out.stderr.strip()[-500:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append((r["particles"], threads, r["rate"]))
            print(f"water dam break n={r['particles']:>8} threads={threads}: {r['rate'] / 1e6:6.2f} M particle-steps/s "
                  f"({1e9 / r['rate']:6.0f} ns per particle-step, {r['steps']} steps in {r['seconds']:.2f} s)",
                  flush=True)
    m = 200_000
    pos = _block(m, spacing=0.02)
    t = time.perf_counter()
    g = _core.particles_to_level_set(pos, 0.02, 0.005)
    raster = time.perf_counter() - t
    g.smooth(4, 0.005)
    total = time.perf_counter() - t
    print(f"water surface n={m}: particles -> level set {raster:.2f} s, smoothed {total:.2f} s per frame "
          f"({g.active_voxels} voxels)")
    middle = sorted({n for n, _, _ in rows})[1]  # the ~200k dam break
    best = max(rate for n, threads, rate in rows if threads == 2 and n == middle)
    print(f"water: {best / 1e6:.2f} M particle-steps/s")


def run(effect):
    table = {"core": bench_core}
    table.update(_effect_benchmarks())
    if effect not in table:
        raise ValueError(f"no benchmark for '{effect}' (have: {', '.join(table)})")
    table[effect]()


def _effect_benchmarks():
    return {"water": bench_water}
