"""Tsubu: particle effect solvers for Blender, and the same as a Python library.

    import tsubu
    tsubu.schema.get("water").defaults()
    desc = tsubu.SceneDescription.load("scene.json")
    tsubu.bake(desc, "cache/")
    tsubu.Cache("cache/").read_particles("fluid", 10)["position"]

`import tsubu` never imports bpy; only tsubu.blender does, inside Blender.
As a Blender add-on, register()/unregister() hand over to tsubu.blender. Where the compiled core does
not load in Blender's Python, the add-on still enables and says so (tsubu.blender.unavailable);
outside Blender, `import tsubu` raises tsubu._native.CoreUnavailable with the same message.
"""
bl_info = {
    "name": "Tsubu",
    "author": "Tsubu developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "Properties > Physics > Tsubu",
    "description": "Particle effects: water with floating bodies, sand, erosion, fracture, elastoplastic",
    "doc_url": "https://github.com/tsubu/tsubu/blob/main/README.md",
    "category": "Physics",
}
__version__ = "0.1.0"

import sys  # noqa: E402

try:
    from ._native import _core  # noqa: E402,F401
    CORE_ERROR = ""
except ImportError as error:
    if "bpy" not in sys.modules:
        raise
    CORE_ERROR = str(error)

if not CORE_ERROR:
    from . import presets, schema  # noqa: E402
    from . import effects  # noqa: E402,F401  (registers the built-in effects and their runners)
    from .baking import bake  # noqa: E402
    from .cache import Cache  # noqa: E402
    from .errors import CancelledError, CorruptFileError, UnstableError, ValidationError  # noqa: E402
    from .scene import SceneDescription, SceneObject  # noqa: E402
    from .surface import rebuild_surface  # noqa: E402
    from .estimate import estimate  # noqa: E402

__all__ = ["bake", "estimate", "rebuild_surface", "Cache", "SceneDescription", "SceneObject", "schema", "presets", "ValidationError",
           "CorruptFileError", "CancelledError", "UnstableError"]


def register():
    if CORE_ERROR:
        from .blender import unavailable
        unavailable.register(__name__, CORE_ERROR)
        return
    from . import blender
    blender.register()


def unregister():
    if CORE_ERROR:
        from .blender import unavailable
        unavailable.unregister()
        return
    from . import blender
    blender.unregister()
