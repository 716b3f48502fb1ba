"""The effects Tsubu knows: importing this package registers their schemas.

One module per effect declares its parameters and object roles (data only);
its solver lives in csrc/core/<effect>.c and its scene-to-solver glue in
tsubu/baking.py's runner table.
"""
from . import elastoplastic, erosion, fracture, sand, water  # noqa: F401
