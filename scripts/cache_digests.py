"""sha256 of every output file a set of scenes bakes to: what a refactor of the
solvers must not change (checkpoints, which are not outputs, are left out).

    PYTHONPATH=addon python3 scripts/cache_digests.py > before.txt
    ... change the solvers, make build ...
    PYTHONPATH=addon python3 scripts/cache_digests.py | diff before.txt -

The scenes: the three demos (shortened) and scenes of the Python tests
(water with a body and an inflow, a moving cup, sand drops, fracture).
"""
import hashlib
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))

import numpy as np  # noqa: E402

import tsubu  # noqa: E402
from tsubu import demos  # noqa: E402


def scenes():
    import sand_scenes
    import water_scenes
    yield "demo-water", demos.water_scene(radius=0.025, frames=12)
    yield "demo-sand", demos.sand_scene(frames=24)
    yield "demo-fracture", demos.fracture_scene(frames=30)
    yield "water-moving-cup", water_scenes.moving_cup(8)[0]
    extra = (water_scenes.obj("Box", "rigid", (0.15, 0.15, 0.3), (0.3, 0.3, 0.45), density=600.0),
             water_scenes.obj("Tap", "inflow", (0.3, 0.3, 0.5), (0.4, 0.4, 0.58), velocity=(0, 0, -1.0),
                              emit_start=1, emit_end=6))
    yield "water-tank", water_scenes.tank(8, depth=0.2, extra=extra)
    yield "sand-drop", sand_scenes.drop(2.0, frames=10)
    yield "sand-press", sand_scenes.press_box(frames=12)
    import erosion_scenes
    yield "demo-erosion", demos.erosion_scene(radius=0.025, frames=12)
    yield "erosion-levee", erosion_scenes.levee(12, 1.2, 0.05)


def digests(folder):
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        if os.path.basename(root) == "state":
            continue
        for name in sorted(files):
            if name.endswith(".json"):
                continue  # the manifest holds times and versions
            path = os.path.join(root, name)
            h = hashlib.sha256()  # .vdb files too: their UUID is a hash of their content (tsvdb_write)
            with open(path, "rb") as f:
                h.update(f.read())
            yield os.path.relpath(path, folder), h.hexdigest()


def resumed(scene, folder):
    """Cancel half-way with a checkpoint every frame, then resume: the same bytes as a whole bake."""
    tsubu.baking.CHECKPOINT_SECONDS = 0.0
    middle = (scene.frame_start + scene.frame_end) // 2
    try:
        tsubu.bake(scene, folder, progress=lambda p: p.frame > middle)
    except tsubu.CancelledError:
        pass
    tsubu.bake(scene, folder, resume=True)


def main():
    only = sys.argv[1:]
    for name, scene in scenes():
        if only and name not in only:
            continue
        for how in ("whole", "resumed"):
            with tempfile.TemporaryDirectory() as tmp:
                if how == "whole":
                    tsubu.bake(scene, tmp)
                else:
                    resumed(scene, tmp)
                for rel, h in digests(tmp):
                    print(f"{name} {rel} {h}", flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
