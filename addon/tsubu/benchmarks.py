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


def run(effect):
    table = {"core": bench_core}
    table.update(_effect_benchmarks())
    if effect not in table:
        raise ValueError(f"no benchmark for '{effect}' (have: {', '.join(table)})")
    table[effect]()


def _effect_benchmarks():
    return {}
