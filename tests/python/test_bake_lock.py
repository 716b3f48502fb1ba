"""Who is baking a cache: a live bake is told from an interrupted one; the checkpoint interval is
settable from tsubu.bake and the command line."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import tsubu
from water_scenes import tank

ADDON = os.path.join(os.path.dirname(__file__), "..", "..", "addon")


def test_a_bake_holds_a_lock_while_it_runs_and_drops_it(tmp_path):
    folder = str(tmp_path / "c")
    seen = []

    def progress(p):
        seen.append(tsubu.Cache(folder).baking_process())

    cache = tsubu.bake(tank(3), folder, progress=progress)
    assert seen and set(seen) == {os.getpid()}
    assert cache.baking_process() is None and not os.path.exists(cache.lock_path)
    assert cache.state() == "complete" and "status complete" in cache.info()


def test_an_interrupted_bake_says_so_and_a_live_one_is_not_disturbed(tmp_path):
    folder = str(tmp_path / "c")
    scene = str(tmp_path / "scene.json")
    tank(400).save(scene)
    env = dict(os.environ, PYTHONPATH=ADDON)
    baker = subprocess.Popen([sys.executable, "-m", "tsubu", "bake", scene, "--out", folder], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (os.path.exists(os.path.join(folder, "bake.lock")) and tsubu.Cache(folder).frames("fluid")):
            assert time.monotonic() < deadline and baker.poll() is None, "the bake did not start"
            time.sleep(0.05)
        cache = tsubu.Cache(folder)
        assert cache.baking_process() == baker.pid and cache.state() == f"baking (process {baker.pid})"
        with pytest.raises(tsubu.ValidationError, match=f"process {baker.pid} is baking into this folder"):
            tsubu.bake(tank(2), folder)  # a second bake into the same folder is refused, the first goes on
        assert baker.poll() is None
    finally:
        baker.send_signal(signal.SIGKILL)  # the machine went down, say
        baker.wait()
    cache = tsubu.Cache(folder)
    assert cache.manifest()["status"] == "baking" and cache.baking_process() is None
    assert cache.state().startswith("interrupted") and "status interrupted" in cache.info()
    done = subprocess.run([sys.executable, "-m", "tsubu", "info", folder], env=env, capture_output=True, text=True)
    assert "interrupted (no process is baking it: resume to go on)" in done.stdout
    # a lock written on another machine cannot be checked from here: taken as live
    with open(cache.lock_path, "w") as f:
        json.dump({"pid": 1, "host": "another-machine"}, f)
    assert cache.baking_process() == 1
    cache.free()
    assert not os.path.exists(cache.lock_path)


def test_the_checkpoint_interval_is_settable(tmp_path):
    def cancel_after(frame):
        return lambda p: p.frame > frame

    every = tsubu.Cache(str(tmp_path / "every"))
    with pytest.raises(tsubu.CancelledError):
        tsubu.bake(tank(8), every.folder, progress=cancel_after(4), checkpoint_seconds=0)
    assert every.checkpoint_frame() == every.last_whole_frame() >= 4  # a state saved at every frame
    rarely = tsubu.Cache(str(tmp_path / "rarely"))
    with pytest.raises(tsubu.CancelledError):
        tsubu.bake(tank(8), rarely.folder, progress=cancel_after(4))  # default: every 30 s
    assert rarely.checkpoint_frame() == 1 and rarely.last_whole_frame() >= 4
    for bad in (-1, float("nan"), "10", True):
        with pytest.raises(tsubu.ValidationError, match="checkpoint_seconds"):
            tsubu.bake(tank(2), str(tmp_path / "bad"), checkpoint_seconds=bad)
    assert not os.path.exists(str(tmp_path / "bad"))
