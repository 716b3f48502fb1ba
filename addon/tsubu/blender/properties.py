"""Blender properties generated from the effect schemas (tsubu.schema).

Object.tsubu (TSUBU_PG_object) holds the object's role and, per effect, a
group of the effect's settings (used on the object that holds them, the
domain) and a group per role with per-object values. Nothing here is
written by hand per parameter: a parameter added to a schema appears in
Blender, presets, validation and the docs at once.
"""
import bpy
from bpy.props import (BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty,
                       PointerProperty, StringProperty)

from .. import schema as schemas

UNITS = schemas.BLENDER_UNITS
VECTOR_SUBTYPES = {"m/s": "VELOCITY", "m/s²": "ACCELERATION", "m": "TRANSLATION"}

_generated = []  # PropertyGroup classes made here, registered in order


def blender_property(p):
    """The bpy property for one schema Param."""
    common = {"name": p.ui_label, "description": p.help + (f" ({p.unit})" if p.unit and p.unit not in UNITS else "")}
    if p.kind == "bool":
        return BoolProperty(default=p.default, **common)
    if p.kind == "image":
        return PointerProperty(type=bpy.types.Image, **common)
    if p.kind == "enum":
        return EnumProperty(items=[(i, label, desc) for i, label, desc in p.items], default=p.default, **common)
    bounds = {k: v for k, v in (("min", p.min), ("max", p.max)) if v is not None}
    if p.kind == "int":
        return IntProperty(default=p.default, **{k: int(v) for k, v in bounds.items()}, **common)
    if p.kind == "vector":
        return FloatVectorProperty(size=3, default=p.default, subtype=VECTOR_SUBTYPES.get(p.unit, "XYZ"),
                                   **bounds, **common)
    precision = 1 if abs(p.default) >= 100 else 3 if abs(p.default) >= 1 else 4
    return FloatProperty(default=p.default, unit=UNITS.get(p.unit, "NONE"), precision=precision, **bounds, **common)


def make_group(class_name, params):
    cls = type(class_name, (bpy.types.PropertyGroup,),
               {"__annotations__": {p.name: blender_property(p) for p in params}})
    _generated.append(cls)
    return cls


def _single(x):
    """A float32 property value as the decimal it was typed as (0.019999999552965164 -> 0.02)."""
    return float(f"{x:.7g}")


def read_group(group, params):
    """{name: value} of a generated group, as the schema expects them."""
    out = {}
    for p in params:
        v = getattr(group, p.name)
        if p.kind == "vector":
            out[p.name] = [_single(c) for c in v]
        elif p.kind == "image":
            out[p.name] = v.name if v is not None else ""
        else:
            out[p.name] = _single(v) if p.kind == "float" else p.normalise(v)
    return out


def write_group(group, params, values):
    for p in params:
        if p.name in values:
            value = values[p.name]
            if p.kind == "image":
                value = bpy.data.images.get(value) if value else None
            setattr(group, p.name, value)


def role_items(self, context):
    items = [("NONE", "None", "Not part of a Tsubu effect")]
    for effect in schemas.effects():
        s = schemas.get(effect)
        items += [(f"{effect}.{r.name}", f"{s.label} {r.label}", r.help) for r in s.roles]
    return items


def settings_attr(effect):
    return f"{effect}_settings"


def role_attr(effect, role):
    return f"{effect}_{role}"


def build_object_group():
    """TSUBU_PG_object with one pointer per effect's settings and per role with parameters."""
    annotations = {
        "role_id": StringProperty(name="Role", description="Effect and role, e.g. water.fluid", default=""),
        "cache_dir": StringProperty(name="Cache Folder", subtype="DIR_PATH", default="//tsubu_cache/",
                                    description="Where the bake writes its frames (a folder per domain object "
                                                "is made inside)"),
        "seed": IntProperty(name="Seed", default=0, min=0, description="Random seed: the same seed gives the "
                                                                     "same bake"),
        "use_scene_frames": BoolProperty(name="Scene Frame Range", default=True,
                                         description="Bake the scene's frame range"),
        "frame_start": IntProperty(name="Start", default=1),
        "frame_end": IntProperty(name="End", default=100),
        "status": StringProperty(name="Status", default=""),
        # what the cache was baked from (tsubu.blender.freshness): a digest, and a mesh edited since
        "baked_digest": StringProperty(name="Baked Digest", default="", options={"HIDDEN"}),
        "geometry_changed": BoolProperty(name="Geometry Changed", default=False, options={"HIDDEN"}),
        "estimate": StringProperty(name="Estimate", default="", options={"HIDDEN"},
                                   description="What the last Estimate measured"),
    }
    for effect in schemas.effects():
        s = schemas.get(effect)
        group = make_group(f"TSUBU_PG_{effect}_settings", s.params)
        annotations[settings_attr(effect)] = PointerProperty(type=group)
        for r in s.roles:
            if r.params:
                rg = make_group(f"TSUBU_PG_{effect}_{r.name}", r.params)
                annotations[role_attr(effect, r.name)] = PointerProperty(type=rg)
    cls = type("TSUBU_PG_object", (bpy.types.PropertyGroup,), {"__annotations__": annotations})
    _generated.append(cls)
    return cls


def role_of(obj):
    """(schema, Role) of an object, or (None, None)."""
    rid = getattr(getattr(obj, "tsubu", None), "role_id", "")
    if not rid or "." not in rid:
        return None, None
    effect, role = rid.split(".", 1)
    if effect not in schemas.effects():
        return None, None
    s = schemas.get(effect)
    return s, s.role(role)


def register():
    _generated.clear()
    build_object_group()
    for cls in _generated:
        bpy.utils.register_class(cls)
    bpy.types.Object.tsubu = PointerProperty(type=_generated[-1])


def unregister():
    del bpy.types.Object.tsubu
    for cls in reversed(_generated):
        bpy.utils.unregister_class(cls)
    _generated.clear()
