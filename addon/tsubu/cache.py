"""Cache folders: what a bake writes and Blender plays back.

    DIR/manifest.json                     effect, parameters, frames, streams, bake status
    DIR/<stream>/<stream>_000001.tspf     particle frames (docs/cache-format.md)
    DIR/<stream>/<stream>_000001.vdb      volumes (OpenVDB, named grids)
    DIR/state/checkpoint.tsck             solver state at a recent whole frame (resume)

A stream of kind "transforms" is a particle frame per frame with one row per
rigid object (position, rotation as a w-x-y-z quaternion, id), the object
names listed in the manifest. A stream of kind "heightfield" is a particle
frame with one row per ground cell (x fastest; float "height"), its grid
(nx, ny, x0, y0, cell) in the manifest. A "fragments" stream is written once,
at frame_start: one row per triangle of the pieces of a broken object
(corner positions relative to the piece's element, UVs, element, material);
a "pieces" stream gives each element's pose (position, rotation, piece) per frame. Every file is written atomically, so whatever
is on disk is whole; the manifest's status says whether the bake finished.
"""
import json
import os
import shutil
import socket
import struct
from dataclasses import dataclass

import numpy as np

from ._native import _core
from .errors import CorruptFileError
from .fileio import read_json, write_json

MANIFEST = "manifest.json"
LOCK = "bake.lock"  # {"pid", "host"} of the process baking into the folder, while it bakes
FORMAT = "tsubu-cache"
FORMAT_VERSION = 1
KINDS = {"particles": "tspf", "transforms": "tspf", "heightfield": "tspf", "volume": "vdb", "pieces": "tspf",
         "fragments": "tspf", "table": "tspf", "skin": "tspf"}
ONCE = ("fragments",)  # kinds written at frame_start only
CHECKPOINT = os.path.join("state", "checkpoint.tsck")
CHECKPOINT_MAGIC = b"\x89TSCKP\r\n"


def version():
    from . import __version__
    return __version__


@dataclass
class ParticleFrame:
    frame: int
    time: float
    count: int
    attributes: dict  # name -> ndarray (count,) or (count, components)

    def __getitem__(self, name):
        return self.attributes[name]


def frame_path(folder, stream, frame, kind="particles"):
    return os.path.join(folder, stream, f"{stream}_{frame:06d}.{KINDS[kind]}")


def write_particles(path, frame, time, attributes, level=6):
    """Write one particle frame (attributes: {name: array}) atomically."""
    _core.write_frame(path, int(frame), float(time), list(attributes.items()), level)


def read_particles(path):
    frame, time, count, attributes = _core.read_frame(path)
    return ParticleFrame(frame, time, count, attributes)


def view_aliases(folder, stream):
    """The symbolic links '<stream>.view<n>' -> '<stream>' that the add-on reads a rebuilt surface through
    (Blender 4 and 5 keep the grids they read per file path, so rebuilt files need a new path)."""
    prefix = stream + ".view"
    out = []
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        path = os.path.join(folder, name)
        if name.startswith(prefix) and name[len(prefix):].isdigit() and os.path.islink(path) \
                and os.readlink(path) == stream:
            out.append(path)
    return sorted(out)


class Cache:
    """A cache folder: its manifest, its frames, and freeing it."""

    def __init__(self, folder):
        self.folder = os.path.abspath(folder)

    @property
    def manifest_path(self):
        return os.path.join(self.folder, MANIFEST)

    def exists(self):
        return os.path.isfile(self.manifest_path)

    def manifest(self):
        if not self.exists():
            raise OSError(f"{self.folder}: no Tsubu cache here (no {MANIFEST}); bake first")
        m = read_json(self.manifest_path, "Tsubu cache manifest")
        if not isinstance(m, dict) or m.get("format") != FORMAT:
            raise CorruptFileError(f"{self.manifest_path}: not a Tsubu cache manifest")
        if m.get("format_version") != FORMAT_VERSION:
            raise CorruptFileError(f"{self.manifest_path}: cache format {m.get('format_version')!r}; this Tsubu "
                                   f"reads {FORMAT_VERSION} (bake again)")
        if not isinstance(m.get("streams"), dict):
            raise CorruptFileError(f"{self.manifest_path}: the manifest lists no streams")
        return m

    def create(self, effect, parameters, frame_start, frame_end, fps, seed, streams, scene_digest=""):
        """Start a new cache: the old one's files go (only ours), a fresh manifest is written."""
        if self.exists():
            self.free()
        elif os.path.isdir(self.folder) and os.listdir(self.folder):
            raise OSError(f"{self.folder}: the folder holds other files and no Tsubu cache; choose an empty or new "
                          "folder")
        os.makedirs(self.folder, exist_ok=True)
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "tsubu_version": version(),
                    "effect": effect, "parameters": parameters, "seed": seed, "fps": fps,
                    "frame_start": frame_start, "frame_end": frame_end, "scene_digest": scene_digest,
                    "streams": streams, "status": "baking", "last_frame": None, "message": ""}
        for stream in streams:
            os.makedirs(os.path.join(self.folder, stream), exist_ok=True)
        write_json(self.manifest_path, manifest)
        return manifest

    def update(self, **fields):
        m = self.manifest()
        m.update(fields)
        write_json(self.manifest_path, m)
        return m

    def frames(self, stream):
        """Sorted frame numbers of a stream's whole files."""
        m = self.manifest()
        if stream not in m["streams"]:
            raise KeyError(f"{self.folder}: no stream '{stream}' (streams: {', '.join(m['streams'])})")
        ext = "." + KINDS[m["streams"][stream]["kind"]]
        prefix = stream + "_"
        d = os.path.join(self.folder, stream)
        out = []
        for name in os.listdir(d) if os.path.isdir(d) else ():
            if name.startswith(prefix) and name.endswith(ext) and name[len(prefix):-len(ext)].lstrip("-").isdigit():
                out.append(int(name[len(prefix):-len(ext)]))
        return sorted(out)

    def path(self, stream, frame):
        kind = self.manifest()["streams"][stream]["kind"]
        return frame_path(self.folder, stream, frame, kind)

    def read_particles(self, stream, frame):
        return read_particles(frame_path(self.folder, stream, frame))

    def read_heights(self, stream, frame):
        """Heights (ny, nx) of a heightfield stream at a frame; row j is y0 + (j + 0.5) cell."""
        grid = self.manifest()["streams"][stream]
        f = self.read_particles(stream, frame)
        if f.count != grid["nx"] * grid["ny"]:
            raise CorruptFileError(f"{self.path(stream, frame)}: {f.count} heights for a {grid['nx']} x {grid['ny']} "
                                   "grid; bake again")
        return f["height"].reshape(grid["ny"], grid["nx"])

    def read_volume(self, stream, frame):
        """{grid name: (values[z, y, x] float32, origin (x, y, z) of values[0, 0, 0] in metres, voxel size)}
        of a volume frame (a water surface's signed distances, erosion's terrain density); a grid with
        no active voxels reads as an empty array."""
        out = {}
        for grid in _core.read_vdb(self.path(stream, frame)):
            if grid.active_voxels == 0:
                out[grid.name] = (np.zeros((0, 0, 0), np.float32), (0.0, 0.0, 0.0), 0.0)
            else:
                out[grid.name] = grid.to_dense()
        return out

    def read_transforms(self, stream, frame):
        """{object name: 4x4 world matrix} at a frame of a transforms stream."""
        names = self.manifest()["streams"][stream]["objects"]
        f = self.read_particles(stream, frame)
        out = {}
        for i, body in enumerate(f["id"]):
            if not 0 <= body < len(names):
                raise CorruptFileError(f"{self.path(stream, frame)}: object id {body} is not in the manifest")
            out[names[body]] = matrix_from(f["position"][i], f["rotation"][i])
        return out

    def read_table(self, stream, frame):
        """One frame of a table stream (figures per frame, e.g. the sand's volume): {column: value}."""
        f = self.read_particles(stream, frame)
        if f.count != 1:
            raise CorruptFileError(f"{self.path(stream, frame)}: a table frame holds one row, not {f.count}")
        return {k: float(v.reshape(-1)[0]) for k, v in f.attributes.items()}

    def table_drift(self, stream):
        """The largest |total - first frame's total| / |first frame's total| of a table stream that has a
        'total' column (what must be conserved, e.g. the sand's volume), None when it has none."""
        frames = self.frames(stream)
        totals = [self.read_table(stream, f).get("total") for f in frames]
        if not totals or totals[0] is None or totals[0] == 0.0:
            return None
        return max(abs(t - totals[0]) for t in totals) / abs(totals[0])

    def table_lines(self, stream, frame):
        """What a panel shows of a table stream at a frame: a heading, then one 'name: value' per column (named
        as the manifest's "columns" says; volumes under a cubic metre in litres), the total beside the first
        frame's."""
        desc = self.manifest()["streams"][stream]
        figures = self.read_table(stream, frame)
        unit, scale = desc.get("unit", ""), 1.0
        if unit == "m³" and max(abs(v) for v in figures.values()) < 1.0:
            unit, scale = "L", 1000.0
        names = desc.get("columns", {})
        first = self.frames(stream)[0]
        lines = [f"{desc.get('label', stream)} at frame {frame}"]
        for name, value in figures.items():
            line = f"{names.get(name, name.replace('_', ' ').capitalize())}: {value * scale:.4g} {unit}".rstrip()
            if name == "total" and first != frame:
                line += f" (frame {first}: {self.read_table(stream, first)['total'] * scale:.4g})"
            lines.append(line)
        return lines

    def checkpoint_frame(self):
        """The frame whose solver state state/checkpoint.tsck holds, None without one (its header
        only: the sections are checked when a resume reads them)."""
        try:
            with open(os.path.join(self.folder, CHECKPOINT), "rb") as f:
                head = f.read(16)
        except OSError:
            return None
        if len(head) < 16 or head[:8] != CHECKPOINT_MAGIC or struct.unpack_from("<I", head, 8)[0] != 1:
            return None
        return struct.unpack_from("<i", head, 12)[0]

    def has_old_checkpoint(self):
        """Whether the state was saved by a Tsubu before sectioned checkpoints (0.1: one particle
        frame, state/checkpoint.tspf), which this one cannot resume from."""
        return (os.path.exists(os.path.join(self.folder, "state", "checkpoint.tspf"))
                and not os.path.exists(os.path.join(self.folder, CHECKPOINT)))

    def last_whole_frame(self):
        """The frame every stream has reached (None if none); a resume starts at this or at the
        checkpoint's frame, whichever is earlier."""
        m = self.manifest()
        last = None
        for stream, desc in m["streams"].items():
            if desc["kind"] in ONCE:
                continue
            frames = set(self.frames(stream))
            f, n = m["frame_start"], None
            while f in frames:
                n, f = f, f + 1
            last = n if last is None else (None if n is None else min(last, n))
            if last is None:
                return None
        return last

    @property
    def lock_path(self):
        return os.path.join(self.folder, LOCK)

    def lock(self):
        """Say which process is baking into this folder (removed when it ends, whatever the outcome)."""
        with open(self.lock_path, "w") as f:
            json.dump({"pid": os.getpid(), "host": socket.gethostname()}, f)

    def unlock(self):
        try:
            os.unlink(self.lock_path)
        except FileNotFoundError:
            pass

    def baking_process(self):
        """The id of the live process baking into this folder, else None. A manifest that says "baking"
        with no live process is an interrupted bake (killed, crashed, the machine went down)."""
        try:
            with open(self.lock_path) as f:
                holder = json.load(f)
            pid, host = int(holder["pid"]), str(holder["host"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if host != socket.gethostname():
            return pid  # another machine's bake: it cannot be checked from here, so it is taken as live
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return pid
        return pid

    def state(self):
        """The manifest's status, with "baking" told apart: "baking (process N)" or "interrupted"."""
        status = self.manifest()["status"]
        if status != "baking":
            return status
        pid = self.baking_process()
        return f"baking (process {pid})" if pid is not None else "interrupted (no process is baking it: resume to go on)"

    def free(self):
        """Delete the cache's own files (manifest, stream folders, state); refuse a folder that is not a cache."""
        m = self.manifest()
        for stream in list(m["streams"]) + ["state"]:
            for alias in view_aliases(self.folder, stream):
                os.unlink(alias)
            d = os.path.join(self.folder, stream)
            if os.path.isdir(d) and not os.path.islink(d) and os.path.dirname(os.path.abspath(d)) == self.folder:
                shutil.rmtree(d)
        os.unlink(self.manifest_path)
        self.unlock()

    def info(self):
        """A few lines saying what the cache holds."""
        m = self.manifest()
        lines = [f"{self.folder}: {m['effect']} cache, Tsubu {m['tsubu_version']}, status {self.state()}",
                 f"  frames {m['frame_start']}-{m['frame_end']} at {m['fps']:g} fps, seed {m['seed']}"]
        if m.get("message"):
            lines.append(f"  message: {m['message']}")
        if m.get("stats"):
            lines.append("  at the end: " + ", ".join(f"{k} {v:.6g}" if isinstance(v, float) else f"{k} {v}"
                                                      for k, v in m["stats"].items()))
        for stream, desc in m["streams"].items():
            frames = self.frames(stream)
            span = f"{frames[0]}-{frames[-1]}" if frames else "none"
            detail = ""
            if frames and desc["kind"] == "table":
                figures = ", ".join(f"{k} {v:.6g}" for k, v in self.read_table(stream, frames[-1]).items())
                detail = f"; at frame {frames[-1]}{' (' + desc['unit'] + ')' if desc.get('unit') else ''}: {figures}"
                drift = self.table_drift(stream)
                if drift is not None:
                    detail += f"; total within {100 * drift:.2g} % of frame {frames[0]}'s at every frame"
            elif frames and desc["kind"] != "volume":
                f = self.read_particles(stream, frames[-1])
                cols = ", ".join(f"{k} {v.dtype}x{1 if v.ndim == 1 else v.shape[1]}" for k, v in f.attributes.items())
                detail = f"; last frame {f.count} rows: {cols}"
            elif frames:
                grids = _core.read_vdb(self.path(stream, frames[-1]))
                detail = "; grids: " + ", ".join(f"{g.name} ({g.active_voxels} voxels)" for g in grids)
            lines.append(f"  {stream} ({desc['kind']}): {len(frames)} frames {span}{detail}")
        return "\n".join(lines)


def matrix_from(position, quaternion):
    """4x4 matrix from a position and a unit quaternion (w, x, y, z)."""
    w, x, y, z = (float(c) for c in quaternion)
    m = np.eye(4)
    m[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                 [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                 [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
    m[:3, 3] = position
    return m


# ---- the fragments stream kind: pieces' triangles, posed by the elements of its 'pieces' stream

def read_fragments(cache, stream="fragments"):
    """The pieces' triangles: corners (m,3,3) relative to their element, uv (m,3,2), element (m,), material (m,)."""
    frames = cache.frames(stream)
    if not frames:
        raise CorruptFileError(f"{cache.folder}: no fragments were written; bake again")
    f = cache.read_particles(stream, frames[0])
    return (f["position"].reshape(-1, 3, 3), f["uv"].reshape(-1, 3, 2), f["element"], f["material"])


def posed_fragments(corners, element, position, rotation):
    """World corners (m,3,3) of the pieces moved by their elements' poses."""
    w, x, y, z = (rotation[element, k][:, None] for k in range(4))
    c = corners.astype(np.float64)
    # rotate v by q: v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
    u = np.concatenate([x, y, z], axis=1)[:, None, :]
    t = 2.0 * np.cross(u, c)
    out = c + w[:, None, :] * t + np.cross(u, t)
    return out + position[element][:, None, :]
