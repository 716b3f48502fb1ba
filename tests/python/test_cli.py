"""python3 -m tsubu from a shell: info reads a cache, presets validate
reports bad files with exit status 1, errors are one line, not a traceback."""
import json
import os
import subprocess
import sys

import numpy as np

from tsubu import cache as cachelib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tsubu(*args, cwd=None):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "addon"))
    return subprocess.run([sys.executable, "-m", "tsubu", *args], capture_output=True, text=True, env=env, cwd=cwd)


def test_info_reads_a_cache(tmp_path):
    c = cachelib.Cache(str(tmp_path / "c"))
    c.create("water", {}, 1, 3, 24.0, 0, {"fluid": {"kind": "particles"}})
    for f in (1, 2):
        cachelib.write_particles(cachelib.frame_path(c.folder, "fluid", f), f, 0.0,
                                 {"position": np.zeros((5, 3), np.float32), "id": np.arange(5, dtype=np.uint32)})
    out = tsubu("info", c.folder)
    assert out.returncode == 0, out.stderr
    assert "water cache" in out.stdout and "fluid (particles): 2 frames 1-2" in out.stdout
    assert "5 rows" in out.stdout and "position float32x3" in out.stdout


def test_errors_are_messages(tmp_path):
    out = tsubu("info", str(tmp_path))
    assert out.returncode == 1 and "no Tsubu cache" in out.stderr and "Traceback" not in out.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tsubu_preset": 1, "effect": "water", "name": "x", "parameters": {"viscosity": -1}}))
    out = tsubu("presets", "validate", os.path.join(ROOT, "presets", "water", "honey.json"), str(bad))
    assert out.returncode == 1 and "ok" in out.stdout and "FAIL" in out.stdout and "viscosity" in out.stdout
    out = tsubu("presets", "list")
    assert out.returncode == 0 and "Honey" in out.stdout
    out = tsubu("bake", str(tmp_path / "missing.json"), "--out", str(tmp_path / "o"))
    assert out.returncode == 1 and "missing.json" in out.stderr


def test_bench_core_last_line():
    out = tsubu("bench", "core")
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    name, number, unit = last.split()[:3]
    assert name == "core:" and float(number) > 0 and unit == "particles/s"
