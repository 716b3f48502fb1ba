"""The compiled core, from wherever this install has it.

A source build (`make build`) and the legacy add-on zip put it beside this file as tsubu/_core; the
Blender Extension carries it as tsubu_core._core in the tsubu-core wheels (make wheels), one per Python
version. Where neither loads, CoreUnavailable says which Python this is, which builds are there and
what to install: the add-on shows that one message in Blender instead of an import traceback.
"""
import glob
import importlib.util
import os
import sys


class CoreUnavailable(ImportError):
    """The compiled core does not load in this Python."""


def _builds_beside(folder):
    """Python tags (cp311, ...) of the builds of the core in a folder (_core.cpython-311-x86_64-linux-gnu.so)."""
    names = glob.glob(os.path.join(folder, "_core.*.so")) + glob.glob(os.path.join(folder, "_core.*.pyd"))
    return [os.path.basename(p).split(".")[1].replace("cpython-", "cp").split("-")[0] for p in names]


def _explain(errors):
    here = os.path.dirname(os.path.abspath(__file__))
    builds = _builds_beside(here)
    spec = importlib.util.find_spec("tsubu_core")
    if spec and spec.submodule_search_locations:
        builds += _builds_beside(list(spec.submodule_search_locations)[0])
    # a Blender Extension carries one wheel per Python; Blender installs only the one for its own
    builds += sorted(os.path.basename(p).split("-")[2] for p in glob.glob(os.path.join(here, "wheels", "*.whl")))
    python = f"Python {sys.version_info.major}.{sys.version_info.minor}"
    if not builds:
        what = "no build of it is installed"
    elif f"cp{sys.version_info.major}{sys.version_info.minor}" not in builds:
        what = f"it is built only for {', '.join(sorted(set(builds)))}"
    else:  # built for this Python, yet it did not load: a missing library or a damaged file
        reasons = [e for e in errors if not isinstance(e, ModuleNotFoundError)] or errors
        what = f"it did not load: {reasons[0]}"
    return (f"Tsubu's compiled core does not run on {python} ({sys.platform}): {what}. Install the Tsubu "
            f"package made for this Blender version, or build it from source (make build)")


# libgomp (OpenMP) reads this as it loads. At each barrier a thread spins 300,000 times before it sleeps; on
# a busy machine, one spinning for its descheduled partner holds the core that partner needs. Beside two
# busy processes on 2 cores, a water bake with 2 threads then ran 2-4x slower than with 1; spinning 1,000
# times (what libgomp chooses itself when it knows threads outnumber cores), 2 threads ran 1.3x faster
# than 1, and on an idle machine as fast as before (docs/performance.md). Where libgomp is loaded already
# (Blender 3.4 and 4.2 link it; the Extension's wheels bring their own copy, which reads this), it comes
# too late, and the thread tuner alone keeps a busy bake from slowing down.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "1000")

try:
    from . import _core  # noqa: F401  (a source build or the legacy zip)
except ImportError as local_error:
    try:
        from tsubu_core import _core  # noqa: F401  (the wheel the Blender Extension carries)
    except ImportError as wheel_error:
        raise CoreUnavailable(_explain([local_error, wheel_error])) from None
