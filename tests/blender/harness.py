"""A tiny harness for tests that run inside Blender (the executable or the bpy
module): finds test_* functions in the calling module, runs each, prints
ok/FAIL lines and a closing count, and exits non-zero on any failure."""
import os
import sys
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
for p in (os.path.join(ROOT, "addon"), os.path.join(ROOT, "tests", "python"), os.path.dirname(__file__)):
    if p not in sys.path:
        sys.path.insert(0, p)


def run(namespace, label):
    import bpy
    tests = [(k, v) for k, v in namespace.items() if k.startswith("test_") and callable(v)]
    only = os.environ.get("TSUBU_TEST")
    failed = 0
    for name, fn in tests:
        if only and only not in name:
            continue
        bpy.ops.wm.read_factory_settings(use_empty=True)
        try:
            fn()
            print(f"ok   {label}: {name}")
        except Exception:
            failed += 1
            print(f"FAIL {label}: {name}")
            traceback.print_exc()
    version = ".".join(map(str, bpy.app.version))
    print(f"blender {version} {label}: {len(tests) - failed} passed, {failed} failed")
    sys.stdout.flush()
    if failed:
        os._exit(1)  # the Blender executable ignores sys.exit from --python scripts without --python-exit-code
