"""Built-in demo scenes (`python3 -m tsubu demo EFFECT --out DIR`), built in plain Python."""
from .baking import bake

DEMOS = {}


def bake_demo(effect, out):
    if effect not in DEMOS:
        known = ", ".join(DEMOS) or "none yet"
        raise ValueError(f"no demo scene for '{effect}' (demos: {known})")
    return bake(DEMOS[effect](), out, progress=None)
