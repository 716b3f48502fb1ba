"""Pack the add-on as a Blender Extension (Blender 4.2 and newer; Install from Disk, no internet):
dist/tsubu-<version>.zip holding the add-on, its presets, blender_manifest.toml and the core's
manylinux wheels for every Python a supported Blender runs (dist/wheels/, from make wheels).

    /usr/bin/python3 scripts/make_extension.py       (make extension)

The package is validated and built by Blender's own extension tool (`blender --command extension
build` is this script: bl_pkg/cli/blender_ext.py, run here from the bpy 5.0 module, which needs no
window or display). Blender installs the wheel matching its Python when the extension is installed.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PACKAGE = os.path.join(ROOT, "addon", "tsubu")
STAGE = os.path.join(ROOT, "build", "extension", "tsubu")
# Blender 4.2 to 5.0 run Python 3.11, Blender 5.1 and newer Python 3.13
PYTHON_TAGS = ("cp311", "cp313")
EXTENSION_TOOL = glob.glob(os.path.join(ROOT, ".venv", "bpy-5.0", "lib", "python3.11", "site-packages", "bpy",
                                        "5.0", "scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py"))

MANIFEST = """\
schema_version = "1.0.0"

id = "tsubu"
version = "{version}"
name = "Tsubu"
tagline = "Water, sand, erosion, fracture, jelly and clay from particles"
maintainer = "Tsubu developers"
type = "add-on"
website = "https://github.com/tsubu/tsubu"
tags = ["Physics", "Simulation"]

blender_version_min = "4.2.0"
license = ["SPDX:GPL-2.0-or-later"]
platforms = ["linux-x64"]
wheels = [
{wheels}
]

[permissions]
files = "Read scene meshes and images, write the simulation cache"
"""


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"make_extension: {' '.join(cmd)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return result.stdout


def main():
    version = re.search(r'__version__ = "([^"]+)"', open(os.path.join(PACKAGE, "__init__.py")).read()).group(1)
    wheels = []
    for tag in PYTHON_TAGS:
        found = glob.glob(os.path.join(ROOT, "dist", "wheels", f"tsubu_core-{version}-{tag}-{tag}-manylinux_*.whl"))
        if len(found) != 1:
            sys.exit(f"make_extension: the core's {tag} wheel is missing from dist/wheels: run make wheels")
        wheels += found
    if not EXTENSION_TOOL:
        sys.exit("make_extension: Blender's extension tool comes with .venv/bpy-5.0: run make setup")
    shutil.rmtree(STAGE, ignore_errors=True)
    # the add-on without its in-place builds of the core: the wheels carry it
    shutil.copytree(PACKAGE, STAGE, ignore=shutil.ignore_patterns("__pycache__", "_core.*.so", "_core.*.pyd"))
    shutil.copytree(os.path.join(ROOT, "presets"), os.path.join(STAGE, "presets"))
    os.makedirs(os.path.join(STAGE, "wheels"))
    for wheel in wheels:
        shutil.copy(wheel, os.path.join(STAGE, "wheels"))
    listed = ",\n".join(f'  "./wheels/{os.path.basename(w)}"' for w in wheels)
    with open(os.path.join(STAGE, "blender_manifest.toml"), "w") as f:
        f.write(MANIFEST.format(version=version, wheels=listed))
    out = os.path.join(ROOT, "dist", f"tsubu-{version}.zip")
    tool = [sys.executable, EXTENSION_TOOL[0]]
    run(tool + ["validate", STAGE])
    run(tool + ["build", "--source-dir", STAGE, "--output-filepath", out])
    run(tool + ["validate", out])
    print(out)


if __name__ == "__main__":
    main()
