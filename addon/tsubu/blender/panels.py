"""The Tsubu panel in Properties > Physics, drawn from the effect schemas."""
import bpy

from .. import presets, schema as schemas
from ..cache import Cache
from . import export, operators, properties


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


class TSUBU_PT_main(bpy.types.Panel):
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
        row.operator(operators.TSUBU_OT_role_clear.bl_idname, text="", icon="X")
        if role.params:
            group = getattr(obj.tsubu, properties.role_attr(s.effect, role.name))
            col = layout.column()
            for p in role.params:
                col.prop(group, p.name)
        if not role.holds_settings:
            return
        self.draw_settings(layout, obj, s)
        self.draw_bake(layout, obj)

    def draw_settings(self, layout, obj, s):
        row = layout.row(align=True)
        row.menu(TSUBU_MT_presets.bl_idname, icon="PRESET")
        row.prop(obj.tsubu, "show_advanced", toggle=True, icon="PREFERENCES", text="")
        settings = getattr(obj.tsubu, properties.settings_attr(s.effect))
        current = None
        col = layout.column()
        for p in s.params:
            if p.advanced and not obj.tsubu.show_advanced:
                continue
            if p.group != current:
                current = p.group
                col = layout.box().column()
                col.label(text=current)
            col.prop(settings, p.name)

    def draw_bake(self, layout, obj):
        box = layout.box().column()
        box.label(text="Cache")
        box.prop(obj.tsubu, "cache_dir")
        box.prop(obj.tsubu, "seed")
        box.prop(obj.tsubu, "use_scene_frames")
        if not obj.tsubu.use_scene_frames:
            row = box.row(align=True)
            row.prop(obj.tsubu, "frame_start")
            row.prop(obj.tsubu, "frame_end")
        baking = obj.name in operators.TSUBU_OT_bake._running
        row = box.row(align=True)
        row.enabled = not baking
        row.operator(operators.TSUBU_OT_bake.bl_idname, text="Bake", icon="PHYSICS").resume = False
        row.operator(operators.TSUBU_OT_bake.bl_idname, text="Resume", icon="PLAY").resume = True
        row.operator(operators.TSUBU_OT_free.bl_idname, text="Free", icon="TRASH")
        if baking:
            job = operators.TSUBU_OT_bake._running[obj.name]
            box.label(text=f"Baking frame {job.frame} ({100 * job.fraction:.0f}%), Esc cancels", icon="TIME")
        elif obj.tsubu.status:
            box.label(text=obj.tsubu.status, icon="ERROR" if obj.tsubu.status.startswith(("Failed", "Cache",
                                                                                           "Not"))
                      else "INFO")
        elif Cache(export.cache_folder(obj)).exists():
            box.label(text="A cache exists for this domain", icon="INFO")


CLASSES = (TSUBU_MT_add_role, TSUBU_MT_presets, TSUBU_PT_main)
