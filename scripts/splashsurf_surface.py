"""The peer of `python3 -m tsubu bench surface`: splashsurf (Löschner et al.; pysplashsurf, the Python module of
the splashsurf crate) reconstructing the surface of the same particles at the same resolution as Tsubu's
anisotropic surface: SPH kernels of compact support 4 r (smoothing length 2 r) and marching cubes of r / 2, its
default iso-value, no post-processing. Its threads: RAYON_NUM_THREADS. Prints one JSON line: the best of two
runs in seconds, with the triangles of the mesh.

    RAYON_NUM_THREADS=1 .venv/splashsurf/bin/python scripts/splashsurf_surface.py particles.npy 0.01
"""
import json
import sys
import time

import numpy as np
import pysplashsurf

particles = np.load(sys.argv[1]).astype(np.float32)
radius = float(sys.argv[2])
best = None
for _ in range(2):
    start = time.perf_counter()
    mesh = pysplashsurf.reconstruction_pipeline(particles, particle_radius=radius, smoothing_length=2.0,
                                                cube_size=0.5)
    seconds = time.perf_counter() - start
    best = seconds if best is None else min(best, seconds)
mesh = mesh[0] if isinstance(mesh, tuple) else mesh  # (the mesh with its data, the reconstruction)
print(json.dumps({"seconds": best, "particles": len(particles), "triangles": mesh.ncells}))
