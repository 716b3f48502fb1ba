"""What the add-on registers when its compiled core does not load in this Blender's Python: one line
on the console and the same message in the add-on's preferences and the Physics tab, instead of an
import traceback and an add-on that will not enable. Imports nothing of Tsubu that needs the core."""
import sys

import bpy

from .ui import draw_message

_message = ""
_classes = []


class TSUBU_PT_unavailable(bpy.types.Panel):
    bl_idname = "TSUBU_PT_unavailable"
    bl_label = "Tsubu"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "physics"

    def draw(self, context):
        draw_message(self.layout.box(), _message, context, "ERROR")


def register(addon_package, message):
    global _message, _classes
    _message = message
    print(f"Tsubu: {message}", file=sys.stderr)
    preferences = type("TSUBU_AP_unavailable", (bpy.types.AddonPreferences,),
                       {"bl_idname": addon_package, "draw": lambda self, context: draw_message(self.layout.box(), _message, context,
                                                                                  "ERROR")})
    _classes = [preferences, TSUBU_PT_unavailable]
    for cls in _classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)
    _classes.clear()
