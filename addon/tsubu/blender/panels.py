"""The Tsubu panel in Properties > Physics, drawn from the effect schemas."""
import os

import bpy

from .. import presets, schema as schemas
from ..cache import Cache
from . import export, freshness, operators, properties
from .ui import draw_message


class TSUBU_MT_add_role(bpy.types.Menu):
    """Roles of every effect, like the Add Modifier menu"""
    bl_idname = "TSUBU_MT_add_role"
    bl_label = "Add Tsubu Role"

    def draw(self, context):
        layout = self.layout
        for effect in schemas.effects():
            s = schemas.get(effect)
            layout.label(text=s.label)
            for r in s.roles:
                op = layout.operator(operators.TSUBU_OT_role_set.bl_idname, text=r.label)
                op.role_id = f"{effect}.{r.name}"
            layout.separator()


class TSUBU_MT_presets(bpy.types.Menu):
    bl_idname = "TSUBU_MT_presets"
    bl_label = "Presets"

    def draw(self, context):
        layout = self.layout
        domain = operators.active_domain(context)
        s, _ = properties.role_of(domain)
        found = presets.available(s.effect)
        for name, path in found.items():
            layout.operator(operators.TSUBU_OT_preset_apply.bl_idname, text=name).filepath = path
        if not found:
            layout.label(text="No presets")
        layout.separator()
        layout.operator(operators.TSUBU_OT_preset_save.bl_idname, icon="ADD")
        layout.operator(operators.TSUBU_OT_preset_import.bl_idname, icon="IMPORT")
        layout.operator(operators.TSUBU_OT_preset_export.bl_idname, icon="EXPORT")


def settings_holder(context):
    """(object, schema) when the active object carries an effect's settings (the domain), else (None, None)."""
    obj = context.object
    if obj is None:
        return None, None
    s, role = properties.role_of(obj)
    return (obj, s) if role is not None and role.holds_settings else (None, None)


def is_baking(obj):
    return obj.name in operators.RUNNING


class TSUBU_PT_main(bpy.types.Panel):
    """Physics > Tsubu: the object's role and its own values; the settings holder's groups and cache
    follow as sub-panels (made per schema group at registration), as Blender's Fluid panel does."""
    bl_idname = "TSUBU_PT_main"
    bl_label = "Tsubu"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        return context.object is not None

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj = context.object
        s, role = properties.role_of(obj)
        if role is None:
            layout.menu(TSUBU_MT_add_role.bl_idname, icon="ADD")
            return
        row = layout.row(align=True)
        row.label(text=f"{s.label}: {role.label}", icon="PHYSICS")
        if role.holds_settings:
            row.menu(TSUBU_MT_presets.bl_idname, text="", icon="PRESET")
        row.operator(operators.TSUBU_OT_role_clear.bl_idname, text="", icon="X")
        if role.params:
            group = getattr(obj.tsubu, properties.role_attr(s.effect, role.name))
            col = layout.column()
            for p in role.params:
                col.prop(group, p.name)


class SettingsPanel:
    """A sub-panel of one schema group of one effect's settings; advanced values in a closed child."""
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"
    effect = group = ""
    advanced = False

    @classmethod
    def poll(cls, context):
        obj, s = settings_holder(context)
        return obj is not None and s.effect == cls.effect

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj, s = settings_holder(context)
        layout.enabled = not is_baking(obj)  # the bake runs with the values it started with
        settings = getattr(obj.tsubu, properties.settings_attr(s.effect))
        col = layout.column()
        for p in s.params:
            if p.group == self.group and p.advanced == self.advanced:
                row = col.row()
                row.active = not p.active_if or bool(getattr(settings, p.active_if))
                row.prop(settings, p.name)
                if p.automatic and getattr(settings, p.name) == 0:
                    col.label(text=automatic_value(p, last_bake_stats(obj).get(p.automatic)), icon="BLANK1")


class TSUBU_PT_cache(bpy.types.Panel):
    bl_idname = "TSUBU_PT_cache"
    bl_label = "Cache"
    bl_parent_id = "TSUBU_PT_main"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    @classmethod
    def poll(cls, context):
        return settings_holder(context)[0] is not None

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        obj, _ = settings_holder(context)
        baking = is_baking(obj)
        col = layout.column()
        col.enabled = not baking
        col.prop(obj.tsubu, "cache_dir")
        col.prop(obj.tsubu, "seed")
        col.prop(obj.tsubu, "use_scene_frames")
        if not obj.tsubu.use_scene_frames:
            sub = col.column(align=True)
            sub.prop(obj.tsubu, "frame_start", text="Frame Start")
            sub.prop(obj.tsubu, "frame_end", text="End")
        row = layout.row(align=True)
        row.enabled = not baking
        row.operator(operators.TSUBU_OT_bake.bl_idname, text="Bake", icon="PHYSICS").resume = False
        row.operator(operators.TSUBU_OT_bake.bl_idname, text="Resume", icon="PLAY").resume = True
        row.operator(operators.TSUBU_OT_free.bl_idname, text="Free", icon="TRASH")
        row = layout.row(align=True)
        row.enabled = not baking
        row.operator(operators.TSUBU_OT_estimate.bl_idname, icon="INFO")
        row.operator(operators.TSUBU_OT_scene_export.bl_idname, icon="EXPORT")
        if obj.tsubu.estimate:
            draw_message(layout, f"Estimate: {obj.tsubu.estimate}", context, "BLANK1")
        if operators.TSUBU_OT_rebuild_surface.poll(context) or (baking and isinstance(
                operators.RUNNING[obj.name], operators.SurfaceJob)):
            row = layout.row()
            row.enabled = not baking
            row.operator(operators.TSUBU_OT_rebuild_surface.bl_idname, icon="MOD_FLUIDSIM")
        if baking:
            job = operators.RUNNING[obj.name]
            draw_message(layout, f"{job.verb.capitalize()} frame {job.frame} of {job.frame_end} "
                                 f"({100 * job.fraction:.0f}%, {job.eta()}); Esc cancels", context, "TIME")
        elif obj.tsubu.status:
            draw_message(layout, obj.tsubu.status, context,
                         "ERROR" if obj.tsubu.status.startswith(("Failed", "Cache", "Not")) else "INFO")
        elif Cache(export.cache_folder(obj)).exists():
            try:
                state = Cache(export.cache_folder(obj)).state()
            except (ValueError, OSError) as e:  # a damaged manifest: say so, never fail to draw
                state = ""
                draw_message(layout, f"Cache problem: {e}", context, "ERROR")
            if state.startswith("interrupted"):
                draw_message(layout, "The last bake was interrupted: Resume goes on from its last saved state",
                             context, "ERROR")
            elif state:
                layout.label(text="A cache exists for this domain", icon="INFO")
        cache = Cache(export.cache_folder(obj))
        if not baking and cache.exists():
            draw_tables(layout, cache, context.scene.frame_current)
        if not baking and freshness.is_out_of_date(context.scene, obj):
            draw_message(layout, "Cache out of date: settings or objects changed since the bake. Bake again "
                                 "to see them", context, "ERROR")


def automatic_value(param, chosen):
    """What a setting left at 0 ("chosen by the solver") came to at the last bake."""
    if not isinstance(chosen, (int, float)) or chosen <= 0:
        return "Automatic: chosen when baking"
    return f"Automatic: {chosen:.4g}{' ' + param.unit if param.unit else ''} at the last bake"


_stats = {}  # (manifest, its mtime) -> the last bake's statistics


def last_bake_stats(domain):
    """The statistics of the domain's last bake ({} when there is none or its manifest cannot be read)."""
    cache = Cache(export.cache_folder(domain))
    try:
        key = (cache.manifest_path, os.stat(cache.manifest_path).st_mtime_ns)
        if key not in _stats:
            _stats.clear()
            _stats[key] = cache.manifest().get("stats") or {}
        return _stats[key]
    except (ValueError, OSError):
        return {}


_table_lines = {}  # (file, its mtime) -> the lines drawn: a panel redraws often, the file changes once a bake


def table_lines(cache, frame):
    """The lines of every table stream (figures per frame: the sand's volume, the erosion budget) at the frame;
    a stream without that frame, or whose file cannot be read, shows nothing."""
    out = []
    for stream, desc in cache.manifest()["streams"].items():
        if desc.get("kind") != "table":
            continue
        path = cache.path(stream, frame)
        try:
            key = (path, os.stat(path).st_mtime_ns)
            if key not in _table_lines:
                if len(_table_lines) > 4096:
                    _table_lines.clear()
                _table_lines[key] = cache.table_lines(stream, frame)
            out += _table_lines[key]
        except (ValueError, OSError):
            continue
    return out


def draw_tables(layout, cache, frame):
    try:
        lines = table_lines(cache, frame)
    except (ValueError, OSError):
        return
    if lines:
        col = layout.box().column(align=True)
        col.label(text=lines[0], icon="INFO")
        for line in lines[1:]:
            col.label(text=line)


def settings_panels():
    """One sub-panel class per schema group of every effect's settings (closed by default when all of
    the group is advanced), and a closed "Advanced" child where a group mixes both."""
    made = []
    for effect in schemas.effects():
        s = schemas.get(effect)
        for group in dict.fromkeys(p.group for p in s.params):
            params = [p for p in s.params if p.group == group]
            slug = "".join(c if c.isalnum() else "_" for c in group.lower())
            ident = f"TSUBU_PT_{effect}_{slug}"
            basic = any(not p.advanced for p in params)
            made.append(type(ident, (SettingsPanel, bpy.types.Panel), {
                "bl_idname": ident, "bl_label": group, "bl_parent_id": "TSUBU_PT_main",
                "bl_options": set() if basic else {"DEFAULT_CLOSED"}, "effect": effect, "group": group,
                "advanced": not basic}))
            if basic and any(p.advanced for p in params):
                made.append(type(ident + "_advanced", (SettingsPanel, bpy.types.Panel), {
                    "bl_idname": ident + "_advanced", "bl_label": "Advanced", "bl_parent_id": ident,
                    "bl_options": {"DEFAULT_CLOSED"}, "effect": effect, "group": group, "advanced": True}))
    return made


CLASSES = (TSUBU_MT_add_role, TSUBU_MT_presets, TSUBU_PT_main, *settings_panels(), TSUBU_PT_cache)
