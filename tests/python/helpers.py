"""Meshes and scenes shared by the Python tests."""
import numpy as np


def box(lo=(0, 0, 0), hi=(1, 1, 1)):
    """An axis-aligned box as (vertices (8,3) float32, triangles (12,3) int32), outward wound."""
    v = np.array([[hi[0] if i & 1 else lo[0], hi[1] if i & 2 else lo[1], hi[2] if i & 4 else lo[2]]
                  for i in range(8)], np.float32)
    t = np.array([0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                  2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5], np.int32).reshape(12, 3)
    return v, t


def mesh_volume(v, t):
    a, b, c = v[t[:, 0]].astype(np.float64), v[t[:, 1]].astype(np.float64), v[t[:, 2]].astype(np.float64)
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
