"""Scene descriptions: the one boundary between Blender and the solvers.

The add-on turns a Blender scene into a SceneDescription; tests and farms
build one in plain Python; `tsubu.bake` runs a solver from it alone. On disk
it is a pair of files, SCENE.json (effect, parameters, frames, objects) and
SCENE.npz (the arrays: meshes, per-frame matrices, images), so any bake can
be reproduced without Blender.

Object geometry is stored in the object's local space with its world matrix
per frame (shape (F, 4, 4), F = 1 for a static object, else one per frame
from frame_start to frame_end), so animated objects move rigidly.
"""
import math
import os
import zipfile
from dataclasses import dataclass, field

import numpy as np

from ._native import _core
from . import schema as schemas
from .errors import CorruptFileError, ValidationError, excerpt, shorten
from .fileio import read_json, write_atomic, write_json

FORMAT_VERSION = 1


@dataclass
class SceneObject:
    name: str
    role: str
    vertices: np.ndarray                 # (N, 3) float32, local space
    triangles: np.ndarray                # (M, 3) int32
    matrices: np.ndarray = None          # (F, 4, 4) float64 world matrices; None = identity
    params: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)  # extra named arrays (e.g. an image)

    def matrix(self, index=0):
        if self.matrices is None:
            return np.eye(4)
        return self.matrices[min(index, len(self.matrices) - 1)]

    def world_vertices(self, index=0):
        m = self.matrix(index)
        v = self.vertices.astype(np.float64)
        return (v @ m[:3, :3].T + m[:3, 3]).astype(np.float32)

    @property
    def animated(self):
        return self.matrices is not None and len(self.matrices) > 1 and not np.allclose(
            self.matrices, self.matrices[0])


def _named_arguments_only(cls, where):
    """The class's constructor, with a keyword it does not take named with where that value belongs
    ("density=500" -> params={'density': 500}), instead of Python's bare "unexpected keyword argument"."""
    init = cls.__init__
    names = set(cls.__dataclass_fields__)

    def checked_init(self, *args, **kwargs):
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            k = unknown[0]
            raise TypeError(f"{cls.__name__} has no argument '{k}': {where.format(k=k)} (its arguments: "
                            f"{', '.join(cls.__dataclass_fields__)})")
        init(self, *args, **kwargs)
    checked_init.__doc__ = init.__doc__
    cls.__init__ = checked_init
    return cls


@dataclass
class SceneDescription:
    effect: str
    parameters: dict = field(default_factory=dict)
    frame_start: int = 1
    frame_end: int = 48
    fps: float = 24.0
    seed: int = 0
    objects: list = field(default_factory=list)

    @property
    def schema(self):
        return schemas.get(self.effect)

    def objects_with_role(self, role):
        return [o for o in self.objects if o.role == role]

    def validate(self):
        """Normalise parameters (defaults filled in) and check everything;
        raises ValidationError listing every problem with the object named."""
        problems = []
        try:
            schema = schemas.get(self.effect)
        except ValidationError as e:
            raise ValidationError(e.problems, "scene") from None
        try:
            self.parameters = schema.validate(self.parameters)
        except ValidationError as e:
            problems += e.problems
        frame_problems = _check_frames(self)
        problems += frame_problems
        frames = 1 if frame_problems else self.frame_end - self.frame_start + 1
        counts = {}
        for obj in self.objects:
            problems += _check_object(schema, obj, frames)
            counts[obj.role] = counts.get(obj.role, 0) + 1
        settings = schema.settings_role
        if counts.get(settings.name, 0) == 0:
            problems.append(f"no object has the {settings.label} role: give one object that role (it holds the "
                            "settings and bounds)")
        for role in schema.roles:
            if role.max_count and counts.get(role.name, 0) > role.max_count:
                names = ", ".join(o.name for o in self.objects_with_role(role.name))
                problems.append(f"only {role.max_count} object(s) may be {role.label}, found {names}")
        if problems:
            raise ValidationError(problems, f"{self.effect} scene")
        return self

    def save(self, path):
        """Write PATH.json and PATH.npz (path may end in .json)."""
        base = path[:-5] if path.endswith(".json") else path
        arrays, objects = {}, []
        for i, obj in enumerate(self.objects):
            refs = {}
            for key, value in [("vertices", obj.vertices), ("triangles", obj.triangles),
                               ("matrices", obj.matrices)] + sorted(obj.arrays.items()):
                if value is not None:
                    refs[key] = f"o{i}_{key}"
                    arrays[refs[key]] = np.asarray(value)
            objects.append({"name": obj.name, "role": obj.role, "params": obj.params, "arrays": refs})
        doc = {"tsubu_scene": FORMAT_VERSION, "effect": self.effect, "parameters": self.parameters,
               "frame_start": self.frame_start, "frame_end": self.frame_end, "fps": self.fps, "seed": self.seed,
               "arrays_file": os.path.basename(base) + ".npz", "objects": objects}
        os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
        tmp = base + ".npz.writing"
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, base + ".npz")
        write_json(base + ".json", doc)
        return base + ".json"

    @classmethod
    def load(cls, path):
        """Read a saved description (not yet validated: call .validate()). A damaged or hostile file -
        an unknown key, a wrong type, an array larger than this machine's memory - is refused naming
        the file and what is wrong, before anything large is read."""
        doc = read_json(path, "Tsubu scene description")
        if not isinstance(doc, dict) or doc.get("tsubu_scene") != FORMAT_VERSION:
            raise CorruptFileError(f"{path}: not a Tsubu scene description (format {FORMAT_VERSION})")
        problems = _unknown_keys(doc, SCENE_KEYS, "the scene")
        if not isinstance(doc.get("parameters"), dict):
            problems.append(f"'parameters' must be a mapping of names to values, got {excerpt(doc.get('parameters'))}")
        objects = doc.get("objects")
        if not isinstance(objects, list):
            problems.append(f"'objects' must be a list of objects, got {excerpt(objects)}")
            objects = []
        if len(objects) > MAX_OBJECTS:
            problems.append(f"it has {len(objects)} objects, more than {MAX_OBJECTS}")
            objects = []
        for k, o in enumerate(objects):
            where = f"object {k}" + (f" {excerpt(o['name'])}" if isinstance(o, dict) and "name" in o else "")
            if not isinstance(o, dict):
                problems.append(f"{where} must be a mapping with name, role, params and arrays, got {excerpt(o)}")
                continue
            problems += _unknown_keys(o, OBJECT_KEYS, where)
            for key, kind in (("name", str), ("role", str), ("params", dict), ("arrays", dict)):
                if key in o and not isinstance(o[key], kind):
                    problems.append(f"{where}: '{key}' must be a {'text' if kind is str else 'mapping'}, "
                                    f"got {excerpt(o[key])}")
        if problems:
            raise ValidationError(problems, path)
        npz_path = os.path.join(os.path.dirname(os.path.abspath(path)), str(doc.get("arrays_file", "")))
        try:
            _check_array_sizes(npz_path)
            with np.load(npz_path, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except FileNotFoundError:
            raise OSError(f"{path}: its arrays file {npz_path} is missing; save the scene again") from None
        except MemoryError:
            raise
        except Exception as e:  # zip, zlib, header and shape errors alike: the file is damaged
            raise CorruptFileError(f"{npz_path}: damaged arrays file ({shorten(e)}); save the scene again") from None
        try:
            loaded = []
            for o in objects:
                refs = dict(o["arrays"])

                def take(key, refs=refs):
                    return arrays[refs.pop(key)] if key in refs else None

                loaded.append(SceneObject(name=str(o["name"]), role=str(o["role"]), vertices=take("vertices"),
                                          triangles=take("triangles"), matrices=take("matrices"),
                                          params=dict(o.get("params", {})),
                                          arrays={k: arrays[v] for k, v in refs.items()}))
            _resolve_image_paths(loaded, os.path.dirname(os.path.abspath(path)))
            return cls(effect=doc["effect"], parameters=dict(doc["parameters"]), frame_start=doc["frame_start"],
                       frame_end=doc["frame_end"], fps=doc["fps"], seed=doc["seed"], objects=loaded)
        except (KeyError, TypeError) as e:
            raise CorruptFileError(f"{path}: scene description lacks {excerpt(e.args[0] if e.args else e)}; "
                                   "save the scene again") from None


SCENE_KEYS = ("tsubu_scene", "effect", "parameters", "frame_start", "frame_end", "fps", "seed", "arrays_file",
              "objects")
OBJECT_KEYS = ("name", "role", "params", "arrays")
MAX_OBJECTS = 100000
MAX_FRAME = 1000000  # as the solvers' tables: frames within +-1e6


def _unknown_keys(d, known, where):
    out = []
    for key in d:
        if key not in known:
            close = [k for k in known if str(key)[:3] and k.startswith(str(key)[:3])]
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            out.append(f"{where}: {excerpt(key)} is not a known key{hint}")
    return out


def _memory_bytes():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 34


def _check_array_sizes(npz_path):
    """The arrays' declared shapes, read from their headers: refuse before loading what would not fit."""
    total, limit = 0, _memory_bytes() // 2
    with zipfile.ZipFile(npz_path) as z:
        for info in z.infolist():
            with z.open(info) as f:
                version = np.lib.format.read_magic(f)
                reader = {(1, 0): np.lib.format.read_array_header_1_0,
                          (2, 0): np.lib.format.read_array_header_2_0}.get(version)
                if reader is None:
                    raise ValueError(f"{info.filename}: array format {version} is not one numpy.savez writes")
                shape, _, dtype = reader(f)
            total += int(np.prod(shape, dtype=object)) * dtype.itemsize
            if total > limit:
                raise ValueError(f"its arrays declare {total / 2**30:.1f} GB, more than half this machine's memory "
                                 f"({limit * 2 / 2**30:.1f} GB)")


def _check_frames(d):
    problems = []
    for key in ("frame_start", "frame_end", "seed"):
        v = getattr(d, key)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            problems.append(f"'{key}' must be a whole number, got {excerpt(v)}")
        elif key != "seed" and not -MAX_FRAME <= v <= MAX_FRAME:
            problems.append(f"'{key}' must be within -{MAX_FRAME} and {MAX_FRAME}, got {excerpt(v)}")
        elif key == "seed" and not 0 <= v < 2 ** 64:
            problems.append(f"'seed' must be a whole number from 0 to 2^64 - 1, got {excerpt(v)}")
    if not problems and d.frame_end < d.frame_start:
        problems.append(f"'frame_end' ({d.frame_end}) is before 'frame_start' ({d.frame_start})")
    if isinstance(d.fps, bool) or not isinstance(d.fps, (int, float)) or not _finite(d.fps) or not 0 < d.fps <= 10000:
        problems.append(f"'fps' must be between 0 and 10000 frames per second, got {excerpt(d.fps)}")
    return problems


def _finite(x):
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def _check_object(schema, obj, frames):
    where = f"object {excerpt(str(obj.name))}"
    role = schema.role(obj.role)
    if role is None:
        roles = ", ".join(r.name for r in schema.roles)
        return [f"{where}: role {excerpt(obj.role)} is not one of {schema.effect}'s roles ({roles})"]
    problems = []
    try:
        obj.params = schemas.validate_params(role.params, obj.params, context=where)
    except ValidationError as e:
        problems += [f"{where}: {p}" for p in e.problems]
    problems += _read_image_files(role, obj, where)
    v, t = obj.vertices, obj.triangles
    if v is None or t is None or np.ndim(v) != 2 or np.shape(v)[-1] != 3 or np.ndim(t) != 2 or np.shape(t)[-1] != 3:
        return problems + [f"{where}: needs vertices (N, 3) and triangles (M, 3)"]
    try:
        with np.errstate(all="ignore"):  # out-of-range values become inf, reported below, not warned about
            vertices = np.ascontiguousarray(v, dtype=np.float32)
            triangles = np.asarray(t)
            m = None if obj.matrices is None else np.asarray(obj.matrices, dtype=np.float64)
    except (ValueError, TypeError):
        return problems + [f"{where}: its vertices, triangles and matrices must be numbers"]
    if not np.isfinite(vertices).all():
        problems.append(f"{where}: its vertices must be finite numbers within float range")
    if not (np.issubdtype(triangles.dtype, np.integer) or triangles.size == 0) or \
            (triangles.size and (triangles.min() < 0 or triangles.max() >= len(vertices))):
        problems.append(f"{where}: its triangles must be whole numbers indexing its {len(vertices)} vertices")
    if problems:
        return problems
    obj.vertices = vertices
    obj.triangles = np.ascontiguousarray(triangles, dtype=np.int32)
    if m is not None:
        if m.ndim != 3 or m.shape[1:] != (4, 4) or len(m) not in (1, frames) or not np.isfinite(m).all():
            problems.append(f"{where}: matrices must be finite, shape (1, 4, 4) or ({frames}, 4, 4), got {m.shape}")
        elif abs(np.linalg.det(m[0, :3, :3])) < 1e-12:
            problems.append(f"{where}: its transform is flat (zero scale); apply a non-zero scale")
        obj.matrices = m
    if role.needs_closed_mesh and not problems:
        try:
            _core.check_closed_mesh(obj.world_vertices(), obj.triangles, obj.name)
        except ValueError as e:
            problems.append(str(e))
    elif len(obj.vertices) == 0:
        problems.append(f"{where}: the mesh is empty")
    return problems


IMAGE_FILE_SUFFIXES = (".png",)


def is_image_file_name(value):
    return isinstance(value, str) and value.lower().endswith(IMAGE_FILE_SUFFIXES)


def _read_image_files(role, obj, where):
    """An image parameter naming a PNG file, with no pixels in the object's arrays yet, is read into them
    (grey, bottom row first, as the add-on takes a Blender image's pixels). A relative path is taken from
    the scene file's folder for a loaded scene, else from the working directory."""
    problems = []
    for p in role.params:
        value, key = obj.params.get(p.name), schemas.image_array_key(p)
        if p.kind != "image" or key in obj.arrays or not is_image_file_name(value):
            continue
        try:
            obj.arrays[key] = _core.read_png(value)
        except (OSError, ValueError, MemoryError) as e:
            problems.append(f"{where}: its {p.title.lower()} {shorten(e)} (give a PNG file, 8 or 16 bits, or "
                            f"the pixels as arrays['{key}'])")
    return problems


def _resolve_image_paths(objects, folder):
    """Image files named relative to a scene file are found beside it."""
    for o in objects:
        for k, v in o.params.items():
            if is_image_file_name(v) and not os.path.isabs(v) and os.path.isfile(os.path.join(folder, v)):
                o.params[k] = os.path.join(folder, v)


_named_arguments_only(SceneObject, "an object's own values go in params={{'{k}': ...}}")
_named_arguments_only(SceneDescription, "the effect's settings go in parameters={{'{k}': ...}}")
