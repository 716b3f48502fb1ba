"""Parameter schemas: each effect declares its parameters once, here.

From one table per effect come the validation of presets and scene
descriptions, the defaults, the Blender properties and panel layout
(tsubu.blender builds them from these objects) and the parameter reference
in docs/parameters.md (`python3 -m tsubu docs`). The C solvers validate
again; this layer exists so users get every problem at once, in words.

An effect also declares the *roles* objects can take in it (Domain, Fluid,
Rigid Body, ...), each with its own per-object parameters.
"""
import math
from dataclasses import dataclass, field

from .errors import ValidationError, excerpt

KINDS = ("float", "int", "bool", "enum", "vector", "image")  # image: the name of an image ("" for none)

# Parameters the frame loop reads (tsubu.baking passes them to the bake call), not the solver's table.
LOOP_PARAMS = ("max_substeps",)


ACRONYMS = {"cfl", "cg", "dem", "sph", "fcc", "mls", "vdb"}
BLENDER_UNITS = {"m": "LENGTH", "m/s": "VELOCITY", "m/s²": "ACCELERATION", "kg": "MASS"}  # shown in the field
UI_LABEL_MAX = 16  # characters that fit beside a field at the default Properties width
SMALL_WORDS = {"a", "an", "and", "at", "by", "for", "in", "of", "on", "or", "per", "the", "to"}


@dataclass(frozen=True)
class Param:
    """One parameter: name, kind, default, bounds, unit and a one-line help."""

    name: str
    kind: str
    default: object
    help: str
    label: str = ""
    unit: str = ""
    min: float = None
    max: float = None
    items: tuple = ()  # enum: ((identifier, label, description), ...)
    group: str = "Settings"  # panel sub-section
    advanced: bool = False
    automatic: str = ""  # 0 means "chosen by the solver": the bake statistic that says what it chose
    active_if: str = ""  # a bool parameter of the same effect: drawn greyed out while it is off

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"parameter '{self.name}': unknown kind '{self.kind}'")
        problem = self.check(self.default)
        if problem:
            raise ValueError(f"parameter '{self.name}': default {problem}")

    @property
    def title(self):
        """The label in Blender's Title Case ("CFL Number", "Young's Modulus"): each word capitalised
        but short linking words, symbols with digits or mixed case (p0, pH) and acronyms."""
        words = (self.label or self.name.replace("_", " ")).split(" ")
        out = []
        for i, word in enumerate(words):
            if word.lower() in ACRONYMS:
                word = word.upper()
            elif (i == 0 or word not in SMALL_WORDS) and word[:1].islower() and len(word) > 1 \
                    and not any(c.isdigit() or c.isupper() for c in word):
                word = word[0].upper() + word[1:]
            out.append(word)
        return " ".join(out)

    @property
    def ui_label(self):
        """The label in Blender: the title, with the unit where Blender's unit system does not show one in
        the field (kg/m³, Pa·s, N/m, °, ...; metres, speeds, accelerations and masses show theirs)."""
        if not self.unit or self.unit in BLENDER_UNITS or self.unit in self.title:
            return self.title
        return f"{self.title} ({self.unit})"

    def check(self, value):
        """None if value is acceptable, else what is wrong (a phrase)."""
        if self.kind == "bool":
            return None if isinstance(value, bool) else f"must be true or false, got {excerpt(value)}"
        if self.kind == "image":
            return None if isinstance(value, str) else f"must be an image name, got {excerpt(value)}"
        if self.kind == "enum":
            names = [i[0] for i in self.items]
            return None if value in names else f"must be one of {', '.join(names)}, got {excerpt(value)}"
        if self.kind == "vector":
            if not isinstance(value, (list, tuple)) or len(value) != 3:
                return f"must be a list of 3 numbers, got {excerpt(value)}"
            for v in value:
                problem = self._check_number(v, float)
                if problem:
                    return problem
            return None
        return self._check_number(value, int if self.kind == "int" else float)

    def _check_number(self, value, kind):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, got {excerpt(value)}"
        try:
            float(value)
        except OverflowError:  # a whole number beyond any float
            return f"must be a number of a sensible size, got {excerpt(value)}"
        if kind is int and not float(value).is_integer():
            return f"must be a whole number, got {excerpt(value)}"
        if not math.isfinite(value):
            return f"must be a finite number, got {excerpt(value)}"
        if self.min is not None and value < self.min:
            return f"must be at least {self.min:g}{self._unit()}, got {excerpt(value)}"
        if self.max is not None and value > self.max:
            return f"must be at most {self.max:g}{self._unit()}, got {excerpt(value)}"
        return None

    def _unit(self):
        return f" {self.unit}" if self.unit else ""

    def solver_value(self, value):
        """The value as the C solver's parameter table takes it: SI units (degrees become
        radians); an enum stays its identifier, which the table knows."""
        if self.unit == "°":
            return math.radians(value)
        return self.normalise(value)

    def normalise(self, value):
        """The canonical Python value (int for int, float for float, list for vector)."""
        if self.kind == "int":
            return int(value)
        if self.kind == "float":
            return float(value)
        if self.kind == "vector":
            return [float(v) for v in value]
        return value


def image_array_key(param):
    """Where a scene object keeps the pixels of an image parameter: its name without "_image"
    ("brittleness_image" -> arrays["brittleness"]); the object's corner UVs go in arrays["uv"]."""
    return param.name[: -len("_image")] if param.name.endswith("_image") else param.name


@dataclass(frozen=True)
class Role:
    """A part an object plays in an effect, with its per-object parameters."""

    name: str
    label: str
    help: str
    params: tuple = ()
    needs_closed_mesh: bool = True
    max_count: int = 0  # 0: any number of objects may have this role
    holds_settings: bool = False  # the object with this role carries the effect's settings and cache

    def param(self, name):
        return _find(self.params, name)


@dataclass(frozen=True)
class Schema:
    effect: str
    label: str
    help: str
    params: tuple
    roles: tuple = field(default_factory=tuple)
    paper: str = ""

    def param(self, name):
        return _find(self.params, name)

    def solver_settings(self, parameters, **scene):
        """The settings dict of the C solver (<effect>_bake): every parameter but the frame
        loop's, in the solver's units, plus what the scene gives (domain, seed, ...)."""
        out = {p.name: p.solver_value(parameters[p.name]) for p in self.params if p.name not in LOOP_PARAMS}
        out.update(scene)
        return out

    def role(self, name):
        for r in self.roles:
            if r.name == name:
                return r
        return None

    @property
    def settings_role(self):
        """The role whose object holds the effect's settings (the domain)."""
        return next(r for r in self.roles if r.holds_settings)

    def defaults(self):
        return {p.name: p.normalise(p.default) for p in self.params}

    def validate(self, values, partial=False, context=""):
        """Check a {name: value} mapping; return it normalised, with defaults
        filled in unless partial. Raises ValidationError listing every problem."""
        return validate_params(self.params, values, partial, context or f"{self.effect} parameters")


def _find(params, name):
    for p in params:
        if p.name == name:
            return p
    return None


def validate_params(params, values, partial=False, context=""):
    if not isinstance(values, dict):
        raise ValidationError([f"parameters must be a mapping of names to values, got {type(values).__name__}"],
                              context)
    problems, out = [], {}
    known = {p.name: p for p in params}
    for name, value in values.items():
        p = known.get(name)
        if p is None:
            close = [k for k in known if k.startswith(str(name)[:4])]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            problems.append(f"{excerpt(name)} is not a parameter{hint}")
            continue
        problem = p.check(value)
        if problem:
            problems.append(f"'{name}' {problem}")
        else:
            out[name] = p.normalise(value)
    if problems:
        raise ValidationError(problems, context)
    if not partial:
        for p in params:
            out.setdefault(p.name, p.normalise(p.default))
    return out


_REGISTRY = {}


def register(schema):
    """Make an effect known (its module calls this on import)."""
    for p in schema.params:
        switch = schema.param(p.active_if) if p.active_if else None
        if p.active_if and (switch is None or switch.kind != "bool"):
            raise ValueError(f"{schema.effect} parameter '{p.name}': active_if '{p.active_if}' is not a bool "
                             "parameter of the effect")
    _REGISTRY[schema.effect] = schema
    return schema


def effects():
    """Registered effect names, in registration order."""
    _load_builtin()
    return list(_REGISTRY)


def get(effect):
    _load_builtin()
    if isinstance(effect, str) and effect in _REGISTRY:
        return _REGISTRY[effect]
    known = ", ".join(_REGISTRY) or "none"
    raise ValidationError([f"unknown effect {excerpt(effect)} (known effects: {known})"])


def _load_builtin():
    from . import effects as _effects  # noqa: F401  (registers the built-in effects)


def to_markdown(schema):
    """The parameter reference of one effect, for docs/parameters.md."""
    lines = [f"## {schema.label} (`{schema.effect}`)", "", schema.help, ""]
    if schema.paper:
        lines += [f"Paper: `{schema.paper}`", ""]

    def table(params):
        rows = ["| parameter | type | default | range | unit | meaning |", "| --- | --- | --- | --- | --- | --- |"]
        for p in params:
            rng = ""
            if p.kind == "enum":
                rng = ", ".join(i[0] for i in p.items)
            elif p.min is not None or p.max is not None:
                lo = "" if p.min is None else f"{p.min:g}"
                hi = "" if p.max is None else f"{p.max:g}"
                rng = f"{lo} – {hi}"
            rows.append(f"| `{p.name}` | {p.kind} | `{p.default}` | {rng} | {p.unit} | {p.help} |")
        return rows

    lines += table(schema.params)
    for role in schema.roles:
        lines += ["", f"### Role: {role.label} (`{role.name}`)", "", role.help, ""]
        if role.params:
            lines += table(role.params)
    return "\n".join(lines) + "\n"
