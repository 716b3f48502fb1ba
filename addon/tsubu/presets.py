"""Presets: named sets of an effect's parameters, stored as JSON data.

A preset is data only (Blender's own presets are Python files that run when
loaded; ours never run anything):

    {"tsubu_preset": 1, "effect": "water", "name": "Honey",
     "description": "...", "parameters": {"viscosity": 5.0, ...}}

Only the parameters it names are changed when applied. Loading checks every
key and value against the effect's schema and reports all problems at once.
Presets are found in the built-in folder (presets/<effect>/ in the source
tree, tsubu/presets/<effect>/ in an installed add-on) and the user's folder
(TSUBU_PRESET_PATH, else ~/.config/tsubu/presets/<effect>/); a user preset
with the name of a built-in one shadows it.
"""
import os
import re

from . import schema as schemas
from .errors import ValidationError
from .fileio import read_json, write_json

FORMAT_VERSION = 1
_KEYS = {"tsubu_preset", "effect", "name", "description", "parameters"}


def builtin_folder():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, "presets"), os.path.join(here, "..", "..", "presets")):
        if os.path.isdir(candidate):
            return os.path.normpath(candidate)
    return None


def user_folder():
    return os.environ.get("TSUBU_PRESET_PATH") or os.path.join(os.path.expanduser("~"), ".config", "tsubu",
                                                               "presets")


def slug(name):
    """A file name for a preset name: 'Honey (thick)' -> 'honey_thick'."""
    s = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return s or "preset"


def validate(data, source="preset"):
    """Check a parsed preset; return it normalised or raise ValidationError with every problem."""
    if not isinstance(data, dict):
        raise ValidationError(["a preset must be a JSON object"], source)
    problems = [f"unknown key '{k}' (allowed: {', '.join(sorted(_KEYS))})" for k in data if k not in _KEYS]
    version = data.get("tsubu_preset")
    if version != FORMAT_VERSION:
        problems.append(f"'tsubu_preset' must be {FORMAT_VERSION} (the preset format version), got {version!r}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        problems.append("'name' must be a non-empty string")
    if not isinstance(data.get("description", ""), str):
        problems.append("'description' must be a string")
    effect = data.get("effect")
    params = {}
    if effect not in schemas.effects():
        problems.append(f"'effect' must be one of {', '.join(schemas.effects())}, got {effect!r}")
    elif not isinstance(data.get("parameters"), dict):
        problems.append("'parameters' must be an object of parameter names and values")
    else:
        try:
            params = schemas.get(effect).validate(data["parameters"], partial=True)
        except ValidationError as e:
            problems += e.problems
    if problems:
        raise ValidationError(problems, source)
    return {"tsubu_preset": FORMAT_VERSION, "effect": effect, "name": name.strip(),
            "description": data.get("description", ""), "parameters": params}


def load(path):
    """Read and validate a preset file (CorruptFileError if it is not JSON)."""
    return validate(read_json(path, "Tsubu preset", limit=1024 * 1024), source=path)


def save(path, effect, name, parameters, description=""):
    """Validate and write a preset atomically; returns the path."""
    preset = validate({"tsubu_preset": FORMAT_VERSION, "effect": effect, "name": name,
                       "description": description, "parameters": parameters}, source=path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_json(path, preset)
    return path


def save_user(effect, name, parameters, description=""):
    folder = os.path.join(user_folder(), effect)
    return save(os.path.join(folder, slug(name) + ".json"), effect, name, parameters, description)


def _files(effect):
    """Every preset file of the effect, built-in folder first, then the user's."""
    for folder in (builtin_folder(), user_folder()):
        d = os.path.join(folder, effect) if folder else None
        if d and os.path.isdir(d):
            for entry in sorted(os.listdir(d)):
                if entry.endswith(".json"):
                    yield os.path.join(d, entry)


def available(effect):
    """{name: path} of every preset for the effect; user presets shadow built-in ones.
    Files that fail to load are left out here; `problems()` reports them."""
    found = {}
    for path in _files(effect):
        try:
            found[load(path)["name"]] = path
        except (ValueError, OSError):
            continue
    return found


def problems(effect):
    """[(path, message)] for the effect's preset files that do not load."""
    bad = []
    for path in _files(effect):
        try:
            load(path)
        except (ValueError, OSError) as e:
            bad.append((path, str(e)))
    return bad


def apply(preset, parameters):
    """A copy of parameters with the preset's values applied."""
    out = dict(parameters)
    out.update(preset["parameters"])
    return out
