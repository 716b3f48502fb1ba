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


def object_input(o, role, motion, **extra):
    """The dict a solver reads for one scene object (tsubu_read_object_input in the binding): its mesh in
    world space at the first frame, its motion rows (or None), density, initial velocities, and the origin
    and rotation of its first-frame pose. `extra` adds or overrides entries."""
    q = o.params
    entry = {"name": o.name, "role": role, "vertices": o.world_vertices(), "triangles": o.triangles,
             "motion": motion, "density": q.get("density", 1.0),
             "velocity": q.get("initial_velocity", [0.0, 0.0, 0.0]),
             "angular_velocity": q.get("initial_angular_velocity", [0.0, 0.0, 0.0]),
             "origin": o.matrix()[:3, 3].tolist(), "rotation": rotation_quaternion(o.matrix()[:3, :3]).tolist()}
    entry.update(extra)
    return entry


def keyframed_motion(obj):
    """Motion rows of an object moved by its animation; one still row when it does not move (then it is
    simply fixed, with infinite mass)."""
    motion = relative_motion(obj)
    return motion if motion is not None else np.array([[0, 0, 0, 1, 0, 0, 0]], np.float64)
