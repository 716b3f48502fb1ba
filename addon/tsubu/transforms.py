"""Object transforms for the solvers: rotations as quaternions, keyframed motion as rows."""
import numpy as np


def rotation_quaternion(m):
    """Unit quaternion (w, x, y, z) of the rotation in a 3x3 matrix (scale removed by polar decomposition)."""
    u, _, vt = np.linalg.svd(np.asarray(m, np.float64))
    r = u @ vt
    if np.linalg.det(r) < 0:  # a mirrored object: keep a proper rotation
        r = u @ np.diag([1.0, 1.0, -1.0]) @ vt
    w = np.sqrt(max(0.0, 1.0 + r[0, 0] + r[1, 1] + r[2, 2])) / 2
    x = np.copysign(np.sqrt(max(0.0, 1.0 + r[0, 0] - r[1, 1] - r[2, 2])) / 2, r[2, 1] - r[1, 2])
    y = np.copysign(np.sqrt(max(0.0, 1.0 - r[0, 0] + r[1, 1] - r[2, 2])) / 2, r[0, 2] - r[2, 0])
    z = np.copysign(np.sqrt(max(0.0, 1.0 - r[0, 0] - r[1, 1] + r[2, 2])) / 2, r[1, 0] - r[0, 1])
    q = np.array([w, x, y, z])
    return q / np.linalg.norm(q)


def relative_motion(obj):
    """(F, 7) rows tx ty tz qw qx qy qz: each frame's rigid motion from the first frame's pose, or None."""
    if not obj.animated:
        return None
    m0 = obj.matrices[0]
    inverse0 = np.linalg.inv(m0)
    rows = []
    for m in obj.matrices:
        rel = m @ inverse0
        rows.append(np.concatenate([rel[:3, 3], rotation_quaternion(rel[:3, :3])]))
    return np.array(rows, np.float64)
