"""Before baking, what a bake will take: how many particles or elements, memory, disk per frame and
for the whole range - measured, not guessed: the scene's first frame is baked for real into a
temporary folder (the same set-up and checks as the bake), and its files, the solver's own counts and
the process's resident memory while it ran are read off.

    e = tsubu.estimate(description)
    e.summary()   # "5,418 particles (up to 16,036), 41 MB memory, 0.3 MB a frame, 14 MB for 48 frames"

What grows during a bake (inflows, rain, spatter, debris, slaves added where jelly tears) is not in the
first frame: the count says "up to" the capacity the solver reserves where it knows one, and the disk
figure scales each particle stream's first frame to that capacity.
"""
import dataclasses
import os
import tempfile
import threading

from .baking import bake
from .cache import KINDS
from .scene import SceneDescription

# effect -> (what is counted, its count at the first frame, the most the solver reserves for this scene
# or None, the particle stream that fills up to it)
COUNTS = {
    "water": ("particles", lambda s, m: s["fluid_particles"] + s["rigid_particles"],
              lambda s, m: s["capacity"] + s["rigid_particles"], "fluid"),
    "erosion": ("particles", lambda s, m: s["fluid_particles"], lambda s, m: s["capacity"], "fluid"),
    "elastoplastic": ("particles", lambda s, m: s["masters"] + s["slaves"], lambda s, m: None, None),
    "fracture": ("elements", lambda s, m: s["elements"], lambda s, m: None, None),
    "sand": ("bed cells", lambda s, m: sum(d["nx"] * d["ny"] for d in m["streams"].values()
                                            if d["kind"] == "heightfield"), lambda s, m: None, None),
}


class _PeakMemory:
    """The peak of this process's resident memory above where it started, sampled every 10 ms on a
    thread while the solver runs (it allocates in C, out of Python's sight)."""

    def __init__(self):
        self.start = self.peak = _resident_bytes()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def sample(self):
        while not self.done.wait(0.01):
            now = _resident_bytes()
            if now is not None and self.peak is not None:
                self.peak = max(self.peak, now)

    def __enter__(self):
        if self.start is not None:
            self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        if self.thread.is_alive():
            self.thread.join()

    @property
    def added(self):
        return None if self.start is None else max(0, self.peak - self.start)


def _resident_bytes():
    """This process's resident memory (Linux), else None."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@dataclasses.dataclass
class Estimate:
    what: str                 # "particles", "elements", "bed cells"
    count: int                # at the first frame
    up_to: int                # the most the solver reserves for this scene (= count where none is known)
    memory: int               # bytes the bake's set-up and first frame added to this process (None: unknown)
    disk_per_frame: int       # bytes of one frame's files, particle streams scaled to up_to
    disk_total: int           # bytes for the whole frame range
    frames: int

    def summary(self):
        mb = 1024 * 1024
        count = f"{self.count:,} {self.what}" + (f" (up to {self.up_to:,})" if self.up_to > self.count else "")
        memory = f"{self.memory / mb:,.0f} MB memory" if self.memory is not None else "memory unknown"
        return (f"{count}, {memory}, {self.disk_per_frame / mb:,.1f} MB a frame, "
                f"{self.disk_total / mb:,.0f} MB for {self.frames} frames")


def estimate(description, progress=None):
    """Bake the first frame of a validated SceneDescription into a temporary folder and measure it;
    progress as for tsubu.bake (True cancels: CancelledError)."""
    description.validate()
    first = SceneDescription(description.effect, dict(description.parameters), description.frame_start,
                             description.frame_start, description.fps, description.seed, description.objects)
    with tempfile.TemporaryDirectory(prefix="tsubu-estimate-") as folder:
        with _PeakMemory() as memory:
            cache = bake(first, folder, progress=progress)
        m = cache.manifest()
        stats = m.get("stats", {})
        what, count_of, capacity_of, fills = COUNTS.get(m["effect"], ("particles", lambda s, m: 0,
                                                                      lambda s, m: None, None))
        count = int(count_of(stats, m))
        up_to = max(count, int(capacity_of(stats, m) or 0))
        per_frame = once = 0
        for stream, desc in m["streams"].items():
            path = os.path.join(folder, stream, f"{stream}_{description.frame_start:06d}.{KINDS[desc['kind']]}")
            if not os.path.exists(path):
                continue
            size = os.path.getsize(path)
            if desc["kind"] == "fragments":  # written once per bake
                once += size
                continue
            if stream == fills and up_to > count:  # uncompressed bytes of the rows still to come
                frame = cache.read_particles(stream, description.frame_start)
                row = sum(v.dtype.itemsize * (v.shape[1] if v.ndim == 2 else 1) for v in frame.attributes.values())
                size += (up_to - count) * row
            per_frame += size
    frames = description.frame_end - description.frame_start + 1
    return Estimate(what, count, up_to, memory.added, per_frame, once + per_frame * frames, frames)
