"""Closed meshes built in code, for demo scenes, benchmarks and tests."""
import numpy as np

_BOX_TRIANGLES = np.array([0, 2, 1, 1, 2, 3, 4, 5, 6, 5, 7, 6, 0, 1, 4, 1, 5, 4,
                           2, 6, 3, 3, 6, 7, 0, 4, 2, 2, 4, 6, 1, 3, 5, 3, 7, 5], np.int32).reshape(12, 3)


def box(lo=(0, 0, 0), hi=(1, 1, 1)):
    """An axis-aligned box: (vertices (8,3) float32, triangles (12,3) int32), wound outward."""
    v = np.array([[hi[0] if i & 1 else lo[0], hi[1] if i & 2 else lo[1], hi[2] if i & 4 else lo[2]]
                  for i in range(8)], np.float32)
    return v, _BOX_TRIANGLES.copy()


def open_box_walls(lo, hi, thickness):
    """The walls and floor of an open-top container whose inside is [lo, hi], as five
    closed boxes that do not overlap: [(vertices, triangles), ...]."""
    (x0, y0, z0), (x1, y1, z1), t = lo, hi, thickness
    return [box((x0 - t, y0 - t, z0 - t), (x1 + t, y1 + t, z0)),   # floor
            box((x0 - t, y0 - t, z0), (x0, y1 + t, z1)),           # -x wall
            box((x1, y0 - t, z0), (x1 + t, y1 + t, z1)),           # +x wall
            box((x0, y0 - t, z0), (x1, y0, z1)),                   # -y wall
            box((x0, y1, z0), (x1, y1 + t, z1))]                   # +y wall


def mesh_volume(v, t):
    """Volume enclosed by a closed triangle mesh (divergence theorem)."""
    a, b, c = v[t[:, 0]].astype(np.float64), v[t[:, 1]].astype(np.float64), v[t[:, 2]].astype(np.float64)
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
