"""tsubu.blender: everything that touches bpy. Imported only inside Blender.

register()/unregister() are symmetric: enabling and disabling the add-on any
number of times leaves no classes, handlers or running bakes behind.
"""
import bpy


def register():
    from . import freshness, operators, panels, playback, properties
    properties.register()
    for cls in operators.CLASSES + panels.CLASSES:
        bpy.utils.register_class(cls)
    playback.register()
    freshness.register()


def unregister():
    from . import freshness, operators, panels, playback, properties
    operators.cancel_all()
    freshness.unregister()
    playback.unregister()
    for cls in reversed(operators.CLASSES + panels.CLASSES):
        bpy.utils.unregister_class(cls)
    properties.unregister()
