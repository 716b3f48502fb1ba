"""Pack the add-on for Blender's Install button: dist/tsubu-<version>-legacy.zip holding
tsubu/ (with the built extension _core*.so) and tsubu/presets/."""
import os
import re
import sys
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PACKAGE = os.path.join(ROOT, "addon", "tsubu")


def main():
    version = re.search(r'__version__ = "([^"]+)"', open(os.path.join(PACKAGE, "__init__.py")).read()).group(1)
    if not any(n.startswith("_core") and n.endswith(".so") for n in os.listdir(PACKAGE)):
        sys.exit("make_addon_zip: build the extension first (make build)")
    os.makedirs(os.path.join(ROOT, "dist"), exist_ok=True)
    out = os.path.join(ROOT, "dist", f"tsubu-{version}-legacy.zip")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for source, prefix in ((PACKAGE, "tsubu"), (os.path.join(ROOT, "presets"), "tsubu/presets")):
            for folder, dirs, files in os.walk(source):
                dirs[:] = [d for d in dirs if d != "__pycache__"]
                for name in files:
                    path = os.path.join(folder, name)
                    z.write(path, os.path.join(prefix, os.path.relpath(path, source)))
    print(out)


if __name__ == "__main__":
    main()
