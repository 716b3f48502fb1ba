"""Where a floating body settles against Archimedes, read against the meshed surface and against the highest
particle centres + r (docs/water.md, Limits).

    PYTHONPATH=addon python3 scripts/floating.py ball 500        # a 16 cm ball in a 0.6 m tank
    PYTHONPATH=addon python3 scripts/floating.py slab 300        # a 30 x 30 x 10 cm slab in a 0.8 m tank
    PYTHONPATH=addon python3 scripts/floating.py slab 500 --thickness 0.12   # 12 cm thick: 6 spacings

Both tanks are filled 0.3 m deep at 1 cm particles (--particle-radius; --scale scales the body and the tank,
its depth too) and baked for --seconds (5); the figures are the mean of the last second, the level read away
from the body and 5 cm from the walls. Prints the share under (ball) or the
draft (slab), each with its error in per cent of the body's volume."""
import argparse
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import tsubu  # noqa: E402
from tsubu.shapes import box, uv_sphere  # noqa: E402
from water_scenes import meshed_level, tank  # noqa: E402

RADIUS, DEPTH, FPS = 0.01, 0.3, 24


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("body", choices=("ball", "slab"))
    ap.add_argument("density", type=float, help="kg/m^3")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--surface-method", default="anisotropic", choices=("anisotropic", "spheres"))
    ap.add_argument("--particle-radius", type=float, default=RADIUS, help="m (1 cm)")
    ap.add_argument("--scale", type=float, default=1.0, help="the body and the tank scaled by this")
    ap.add_argument("--thickness", type=float, default=0.1, help="the slab's, m before --scale (10 cm)")
    ap.add_argument("--ball-radius", type=float, default=0.08, help="m before --scale (8 cm)")
    a = ap.parse_args()
    r, depth = a.particle_radius, DEPTH * a.scale
    frames = int(round(a.seconds * FPS))
    if a.body == "slab":
        side, away, width, height = 0.8 * a.scale, 0.3 * a.scale, 0.3 * a.scale, a.thickness * a.scale
        centre = (side / 2, side / 2, depth - height * a.density / 1000.0 + height / 2)
        v, t = box((centre[0] - width / 2, centre[1] - width / 2, centre[2] - height / 2),
                   (centre[0] + width / 2, centre[1] + width / 2, centre[2] + height / 2))
    else:
        side, away, ball = 0.6 * a.scale, 0.2 * a.scale, a.ball_radius * a.scale
        centre = (side / 2, side / 2, depth + ball * (1 - 2 * a.density / 1000.0))
        v, t = uv_sphere(centre, ball, 24, 48)
    body = tsubu.SceneObject("Body", "rigid", v, t, params={"density": a.density})
    desc = tank(frames, size=(side, side, 2 * depth), depth=depth, radius=r, extra=[body], write_surface=True,
                surface_method=a.surface_method)
    with tempfile.TemporaryDirectory() as folder:
        cache = tsubu.bake(desc, folder)
        rows = []
        for f in range(frames - FPS, frames + 1, 4):
            p = cache.read_particles("fluid", f)["position"].astype(np.float64)
            far = np.hypot(p[:, 0] - centre[0], p[:, 1] - centre[1]) > away
            columns = int((side * side - np.pi * away * away) / (2 * r) ** 2)  # about one layer's particles
            top = np.sort(p[far, 2])[-columns:].mean() + r
            z = (cache.read_transforms("rigid", f)["Body"] @ np.array([*centre, 1.0]))[2]
            rows.append((meshed_level(cache, f, side, centre, away), top, z))
    mesh, top, z = np.mean(rows, axis=0)
    for name, level in (("the meshed surface", mesh), ("the top centres + r", top)):
        if a.body == "slab":
            draft, want = level - (z - height / 2), height * a.density / 1000.0
            print(f"slab of {a.density:g} kg/m3: draft {1000 * draft:.2f} mm under {name} (Archimedes "
                  f"{1000 * want:.1f}), {100 * (draft - want) / height:+.2f} % of its volume")
        else:
            under = min(max(level - z + ball, 0.0), 2 * ball)
            share = under * under * (3 * ball - under) / (4 * ball ** 3)
            print(f"ball of {a.density:g} kg/m3: {100 * share:.1f} % under {name} (Archimedes "
                  f"{a.density / 10:.1f} %), {100 * (share - a.density / 1000):+.2f} % of its volume")
    print(f"the mesh lies {1000 * (mesh - top):.2f} mm above the top centres + r")


if __name__ == "__main__":
    main()
