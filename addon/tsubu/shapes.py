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


def uv_sphere(centre=(0, 0, 0), radius=1.0, rings=16, segments=32):
    """A closed UV sphere wound outward: (vertices float32, triangles int32)."""
    verts = [(0.0, 0.0, radius)]
    for i in range(1, rings):
        theta = np.pi * i / rings
        for j in range(segments):
            phi = 2 * np.pi * j / segments
            verts.append((radius * np.sin(theta) * np.cos(phi), radius * np.sin(theta) * np.sin(phi),
                          radius * np.cos(theta)))
    verts.append((0.0, 0.0, -radius))
    south = len(verts) - 1
    tris = []
    for j in range(segments):
        tris.append((0, 1 + j, 1 + (j + 1) % segments))
    for i in range(rings - 2):
        a, b = 1 + i * segments, 1 + (i + 1) * segments
        for j in range(segments):
            k = (j + 1) % segments
            tris += [(a + j, b + j, b + k), (a + j, b + k, a + k)]
    last = 1 + (rings - 2) * segments
    for j in range(segments):
        tris.append((south, last + (j + 1) % segments, last + j))
    v = np.asarray(verts, np.float64) + np.asarray(centre, np.float64)
    return v.astype(np.float32), np.asarray(tris, np.int32)


def grid_plane(lo, hi, z=0.0, divisions=(1, 1)):
    """An open, upward-facing rectangle [lo, hi] at height z, split into a grid of quads."""
    nx, ny = divisions
    xs, ys = np.linspace(lo[0], hi[0], nx + 1), np.linspace(lo[1], hi[1], ny + 1)
    gx, gy = np.meshgrid(xs, ys)
    v = np.stack([gx.ravel(), gy.ravel(), np.full(gx.size, z)], axis=1).astype(np.float32)
    tris = []
    for j in range(ny):
        for i in range(nx):
            a = j * (nx + 1) + i
            tris += [(a, a + 1, a + nx + 2), (a, a + nx + 2, a + nx + 1)]
    return v, np.asarray(tris, np.int32)


def height_grid(xs, ys, height):
    """An open, upward-facing grid over the points xs by ys at heights height(X, Y) (arrays): a heightfield."""
    X, Y = np.meshgrid(np.asarray(xs, np.float64), np.asarray(ys, np.float64), indexing="ij")
    v = np.stack([X, Y, height(X, Y)], axis=-1).reshape(-1, 3).astype(np.float32)
    n, m = X.shape
    q = (np.arange(n - 1)[:, None] * m + np.arange(m - 1)[None, :]).reshape(-1)
    t = np.concatenate([np.stack([q, q + m, q + m + 1], 1), np.stack([q, q + m + 1, q + 1], 1)]).astype(np.int32)
    return v, t


def arch(inner=0.35, outer=0.5, depth=0.15, segments=24):
    """A semicircular arch standing on z = 0 in the x-z plane, `depth` thick along y: a closed mesh wound
    outward (vertices float32, triangles int32)."""
    angles = np.pi * np.arange(segments + 1) / segments
    ring = []
    for radius in (outer, inner):
        ring.append(np.stack([radius * np.cos(angles), radius * np.sin(angles)], axis=1))
    v = []
    for y in (-depth / 2, depth / 2):          # layer 0: front (y-), layer 1: back (y+)
        for r in ring:                         # outer then inner, each segments + 1 points
            v += [(x, y, z) for x, z in r]
    m = segments + 1

    def idx(layer, side, k):
        return (2 * layer + side) * m + k

    t = []
    for k in range(segments):
        for a, b, c, d in ((idx(0, 0, k), idx(0, 0, k + 1), idx(1, 0, k + 1), idx(1, 0, k)),   # outer surface
                           (idx(0, 1, k), idx(1, 1, k), idx(1, 1, k + 1), idx(0, 1, k + 1)),   # inner surface
                           (idx(0, 0, k), idx(0, 1, k), idx(0, 1, k + 1), idx(0, 0, k + 1)),   # front
                           (idx(1, 0, k), idx(1, 0, k + 1), idx(1, 1, k + 1), idx(1, 1, k))):  # back
            t += [(a, b, c), (a, c, d)]
    for k, flip in ((0, False), (segments, True)):   # the two feet
        a, b, c, d = idx(0, 0, k), idx(1, 0, k), idx(1, 1, k), idx(0, 1, k)
        t += [(a, c, b), (a, d, c)] if flip else [(a, b, c), (a, c, d)]
    return np.array(v, np.float32), np.array(t, np.int32)[:, ::-1].copy()
