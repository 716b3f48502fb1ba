"""Shared by the Python tests: the package's own shapes, and baking one scene with one
and with two threads (each in its own process, since OpenMP reads OMP_NUM_THREADS once)."""
import os
import subprocess
import sys

from tsubu.shapes import box, mesh_volume, open_box_walls  # noqa: F401

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def assert_same_bytes_with_one_or_two_threads(tmp_path, scene_code, streams, frames):
    """scene_code (run with tests/python importable) sets `d`, a scene description; bake it
    with 1 and with 2 threads and check that every frame file of `streams` is the same."""
    script = "import sys; sys.path[:0] = [sys.argv[2], sys.argv[3]]\nimport tsubu\n" + scene_code + \
        "\ntsubu.bake(d, sys.argv[1])\n"
    folders = []
    for threads in (1, 2):
        folder = str(tmp_path / f"t{threads}")
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        out = subprocess.run([sys.executable, "-c", script, folder, os.path.join(ROOT, "addon"),
                              os.path.dirname(__file__)], env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        folders.append(folder)
    for stream in streams:
        for f in frames:
            name = os.path.join(stream, f"{stream}_{f:06d}.tspf")
            if not os.path.exists(os.path.join(folders[0], name)):  # a volume stream
                name = name[:-len("tspf")] + "vdb"
            with open(os.path.join(folders[0], name), "rb") as a, open(os.path.join(folders[1], name), "rb") as b:
                assert a.read() == b.read(), name
