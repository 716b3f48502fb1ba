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
    assert out.returncode == 2 and "ok" in out.stdout and "FAIL" in out.stdout and "viscosity" in out.stdout
    out = tsubu("presets", "list")
    assert out.returncode == 0 and "Honey" in out.stdout
    out = tsubu("bake", str(tmp_path / "missing.json"), "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and "missing.json" in out.stderr


def test_bench_core_last_line():
    out = tsubu("bench", "core")
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    name, number, unit = last.split()[:3]
    assert name == "core:" and float(number) > 0 and unit == "particles/s"


def test_hostile_scene_files_get_one_line_and_status_2(tmp_path):
    """Each damaged or hostile scene file: exit status 2, a message naming the cause in a bounded
    line, no traceback, no warning printed before it, and nothing baked."""
    from water_scenes import tank
    base = tank(2).save(str(tmp_path / "good.json"))
    good = json.loads(open(base).read())

    def variant(name, change):
        doc = json.loads(json.dumps(good))
        text = change(doc)
        path = tmp_path / f"{name}.json"
        path.write_text(text if isinstance(text, str) else json.dumps(doc))
        return str(path)

    cases = {
        "nested": (lambda d: "[" * 100000 + "]" * 100000, "nested too deeply"),
        "digits": (lambda d: json.dumps(d).replace('"seed": 0', '"seed": ' + "9" * 401), "401 digits"),
        "text_frame": (lambda d: d.update(frame_start="1"), "'frame_start' must be a whole number"),
        "huge_frame": (lambda d: d.update(frame_end=2 ** 31), "'frame_end' must be within"),
        "seed": (lambda d: d.update(seed=10 ** 30), "'seed' must be a whole number from 0"),
        "unknown": (lambda d: d.update(paramters={}), "'paramters' is not a known key (did you mean 'parameters'?)"),
        "object_key": (lambda d: d["objects"][1].update(param={"density": 9}), "'param' is not a known key (did you mean 'params'?)"),
        "parameters": (lambda d: d.update(parameters="abc"), "'parameters' must be a mapping"),
        "objects": (lambda d: d.update(objects="x"), "'objects' must be a list"),
        "long_value": (lambda d: d["parameters"].update(viscosity=list(range(2_000_000))), "'viscosity' must be a number"),
    }
    for name, (change, words) in cases.items():
        out = tsubu("bake", variant(name, change), "--out", str(tmp_path / ("out_" + name)))
        assert out.returncode == 2, (name, out.returncode, out.stderr[-500:])
        assert words in out.stderr, (name, out.stderr[:500])
        assert "Traceback" not in out.stderr and "Warning" not in out.stderr, (name, out.stderr[:500])
        assert len(out.stderr) < 2000, (name, len(out.stderr))
        assert not os.path.exists(tmp_path / ("out_" + name))


def test_arrays_larger_than_memory_are_refused_before_loading(tmp_path):
    """A small .npz that declares a huge array is refused from its header (status 2), not loaded."""
    import zipfile
    from water_scenes import tank
    path = tank(2).save(str(tmp_path / "s.json"))
    npz = str(tmp_path / "s.npz")
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float64))
    header["shape"] = (1 << 40,)
    with zipfile.ZipFile(npz, "a") as z, z.open("giant.npy", "w") as f:
        np.lib.format.write_array_header_1_0(f, header)
    out = tsubu("bake", path, "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and "declare" in out.stderr and "memory" in out.stderr, out.stderr[-500:]


def test_openmp_waits_briefly_unless_the_user_chose():
    """Importing tsubu before the OpenMP runtime loads sets libgomp's spin count low (a thread that spins
    for a descheduled partner on a busy machine holds the core that partner needs), and keeps a user's
    own GOMP_SPINCOUNT or OMP_WAIT_POLICY."""
    probe = "import os, tsubu; print(os.environ.get('GOMP_SPINCOUNT'))"
    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")}
    base["PYTHONPATH"] = os.path.join(ROOT, "addon")
    for extra, expected in (({}, "1000"), ({"GOMP_SPINCOUNT": "20000"}, "20000"),
                            ({"OMP_WAIT_POLICY": "active"}, "None")):
        out = subprocess.run([sys.executable, "-c", probe], env={**base, **extra}, capture_output=True, text=True,
                             check=True)
        assert out.stdout.strip() == expected, (extra, out.stdout, out.stderr)
