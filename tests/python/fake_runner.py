"""A runner written in Python for testing the bake driver alone: points that
fall ballistically, one particle stream, a transforms stream and a
checkpoint header per frame (no sections: nothing resumes from it but this
runner), written with the Python cache writer."""
import os
import struct
import zlib

import numpy as np

from tsubu import cache as cachelib
from tsubu.baking import Progress, Runner
from tsubu.errors import CancelledError, UnstableError, ValidationError


def streams(desc):
    return {"points": {"kind": "particles"}, "rigid": {"kind": "transforms", "objects": ["Crate"]}}


def state_at(frame, fps):
    t = (frame - 1) / fps
    z = np.linspace(0, 1, 10, dtype=np.float32) + np.float32(-0.5 * 9.81 * t * t)
    pos = np.stack([np.zeros(10, np.float32), np.zeros(10, np.float32), z], axis=1)
    return pos


def write_checkpoint_header(path, frame):
    """A checkpoint container without sections (docs/cache-format.md, "Checkpoint")."""
    head = cachelib.CHECKPOINT_MAGIC + struct.pack("<IidI", 1, frame, 0.0, 0)
    with open(path, "wb") as f:
        f.write(head + struct.pack("<I", zlib.crc32(head)))


def run(desc, cache, report, first, ready, fail_at=None, refuse=None):
    if refuse:  # what a solver's own check would say, before anything is written
        raise ValidationError([refuse], "bake")
    ready()
    os.makedirs(os.path.join(cache.folder, "state"), exist_ok=True)
    for frame in range(first, desc.frame_end + 1):
        if frame == fail_at:
            raise UnstableError(f"frame {frame}: particles left every bound")
        if frame > first or first == desc.frame_start:
            pos = state_at(frame, desc.fps)
            cachelib.write_particles(cachelib.frame_path(cache.folder, "points", frame), frame,
                                     (frame - 1) / desc.fps, {"position": pos, "id": np.arange(10, dtype=np.uint32)})
            cachelib.write_particles(cachelib.frame_path(cache.folder, "rigid", frame, "transforms"), frame, 0.0,
                                     {"position": np.array([[0, 0, frame]], np.float32),
                                      "rotation": np.array([[1, 0, 0, 0]], np.float32),
                                      "id": np.zeros(1, np.uint32)})
            write_checkpoint_header(os.path.join(cache.folder, cachelib.CHECKPOINT), frame)
        p = Progress(frame, desc.frame_start, desc.frame_end,
                     (frame - desc.frame_start) / max(1, desc.frame_end - desc.frame_start))
        if report(p):
            raise CancelledError(f"cancelled during frame {frame + 1}")


RUNNER = Runner(streams=streams, run=run)
