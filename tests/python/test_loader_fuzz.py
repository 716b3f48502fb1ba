"""The scene and preset loaders against mutated files: every input either loads and validates, or
is refused with ValueError (ValidationError, CorruptFileError) or OSError naming the file - never
another exception, a hang or a crash. A seeded mutation fuzzer, a few seconds here; `make fuzz`
runs it longer (TSUBU_FUZZ_SECONDS). A failing input is kept under the test's tmp_path."""
import json
import os
import random
import shutil
import time

import numpy as np

import tsubu
from tsubu import presets

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SECONDS = float(os.environ.get("TSUBU_FUZZ_SECONDS", "4"))
EXTREMES = [b"1e999", b"-1", b"9" * 60, b"null", b"[]", b"{}", b'"x"', b"true", b"NaN", b"-0", b"1.5",
            b"2147483648", b"[" * 50, b'"' + b"a" * 300 + b'"']


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(5)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            data[min(at, len(data) - 1)] ^= 1 << rng.randrange(8)
        elif op == 1:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 2:
            del data[at:at + rng.randint(1, 16)]
        elif op == 3:  # a value replaced by an extreme one
            end = at
            while end < len(data) and data[end:end + 1] not in (b",", b"}", b"]"):
                end += 1
            data[at:end] = rng.choice(EXTREMES)
        else:
            piece = data[at:at + rng.randint(1, 32)]
            data[at:at] = piece
    return bytes(data)


def fuzz(tmp_path, seed_bytes, load, name):
    rng = random.Random(1)
    path = str(tmp_path / name)
    deadline, runs = time.monotonic() + SECONDS, 0
    while time.monotonic() < deadline:
        data = mutate(rng, seed_bytes)
        with open(path, "wb") as f:
            f.write(data)
        try:
            load(path)
        except (ValueError, OSError) as e:
            assert str(e), "an empty message"
        except BaseException:
            shutil.copy(path, path + ".failing")
            raise
        runs += 1
    assert runs > 10


def test_scene_loader(tmp_path):
    from water_scenes import tank
    saved = tank(2).save(str(tmp_path / "scene.json"))
    shutil.copy(str(tmp_path / "scene.npz"), str(tmp_path / "fuzzed.npz"))
    doc = json.loads(open(saved).read())
    doc["arrays_file"] = "fuzzed.npz"
    fuzz(tmp_path, json.dumps(doc).encode(), lambda p: tsubu.SceneDescription.load(p).validate(), "fuzzed.json")


def test_preset_loader(tmp_path):
    seed = open(os.path.join(ROOT, "presets", "water", "honey.json"), "rb").read()
    fuzz(tmp_path, seed, presets.load, "fuzzed_preset.json")


def test_scene_arrays_loader(tmp_path):
    """The .npz beside a scene, mutated: refused as a damaged arrays file, never another error."""
    from water_scenes import tank
    saved = tank(2).save(str(tmp_path / "scene.json"))
    npz = open(str(tmp_path / "scene.npz"), "rb").read()
    rng = random.Random(2)
    deadline = time.monotonic() + SECONDS / 2
    while time.monotonic() < deadline:
        with open(str(tmp_path / "scene.npz"), "wb") as f:
            f.write(mutate(rng, npz))
        try:
            tsubu.SceneDescription.load(saved).validate()
        except (ValueError, OSError):
            pass
    assert np.__version__
