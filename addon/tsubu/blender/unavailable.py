"""What the add-on registers when its compiled core does not load in this Blender's Python: one line
on the console and the same message in the add-on's preferences and the Physics tab, instead of an
import traceback and an add-on that will not enable. Imports nothing of Tsubu that needs the core."""
import sys
import textwrap

import bpy

_message = ""
_classes = []


def _draw_message(layout, width_chars=60):
    box = layout.box()
    lines = textwrap.wrap(_message, width_chars)
    for i, line in enumerate(lines):
        box.label(text=line, icon="ERROR" if i == 0 else "BLANK1")


class TSUBU_PT_unavailable(bpy.types.Panel):
    bl_idname = "TSUBU_PT_unavailable"
    bl_label = "Tsubu"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    def draw(self, context):
        _draw_message(self.layout, max(30, int(context.region.width / 7)))


def register(addon_package, message):
    global _message, _classes
    _message = message
    print(f"Tsubu: {message}", file=sys.stderr)
    preferences = type("TSUBU_AP_unavailable", (bpy.types.AddonPreferences,),
                       {"bl_idname": addon_package, "draw": lambda self, context: _draw_message(self.layout)})
    _classes = [preferences, TSUBU_PT_unavailable]
    for cls in _classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
    _classes.clear()
