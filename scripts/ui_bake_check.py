"""Manual check of the interactive Bake: in Blender's real interface (under Xvfb) the Bake
operator runs modal on a worker thread, the status bar shows progress, and the result
plays back. Prints the polls and writes a screenshot of the status bar mid-bake.

    blender -b --factory-startup --python-expr "import bpy; bpy.ops.wm.save_as_mainfile(filepath='/tmp/start.blend')"
    xvfb-run -a -s "-screen 0 1600x900x24" blender --factory-startup /tmp/start.blend --python scripts/ui_bake_check.py
"""
import os
import sys

import bpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "addon"))
import addon_utils  # noqa: E402

state = {"t": 0}
def setup():
    addon_utils.enable("tsubu", default_set=True)
    from tsubu import demos
    from tsubu.blender.scene_import import create_objects
    for o in list(bpy.data.objects):
        bpy.data.objects.remove(o)
    desc = demos.water_scene(radius=0.025, frames=24)
    desc.parameters.update(surface_smoothing=1, surface_voxel_ratio=1.0)
    made = create_objects(desc)
    d = made["Domain"]
    d.tsubu.cache_dir = "/tmp/ui_bake"
    bpy.context.scene.frame_end = 24
    bpy.context.view_layer.objects.active = d
    win = bpy.context.window_manager.windows[0]
    area = next(a for a in win.screen.areas if a.type == "VIEW_3D")
    with bpy.context.temp_override(window=win, area=area):
        print("invoke:", bpy.ops.tsubu.bake("INVOKE_DEFAULT"))
    return None
def poll():
    from tsubu.blender import operators
    state["t"] += 1
    d = bpy.data.objects["Domain"]
    running = "Domain" in operators.TSUBU_OT_bake._running
    if running and state["t"] == 3:
        bpy.ops.screen.screenshot(filepath="/tmp/ui_bake.png")
    print("poll", state["t"], "running", running, "status", repr(d.tsubu.status), flush=True)
    if not running and state["t"] > 2:
        print("DONE", d.tsubu.status, "points" , len(bpy.data.objects["Domain.fluid"].data.vertices) if "Domain.fluid" in bpy.data.objects else None, flush=True)
        bpy.ops.wm.quit_blender()
        return None
    return 1.0
bpy.app.timers.register(setup, first_interval=1.0)
bpy.app.timers.register(poll, first_interval=2.5)
