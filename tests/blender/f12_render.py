"""Render a saved scene's animation from Blender's interface, as F12 > Render Animation does, with
the interface not locked, while the interface redraws; then print one line per written frame.

    xvfb-run -a blender --factory-startup --python tests/blender/f12_render.py -- FILE.blend OUT_FOLDER FRAMES

Driven by test_render.py (the add-on enabled from this source tree, as a user has it enabled).
"""
import os
import sys

import addon_utils
import bpy
from bpy.app.handlers import persistent

blend, out, frames = sys.argv[sys.argv.index("--") + 1:]
frames = int(frames)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "addon"))
addon_utils.enable("tsubu", default_set=True)
state = {"ticks": 0, "started": False, "failed": False}


@persistent
def cancelled(*args):
    state["failed"] = True


def written():
    return sorted(n for n in os.listdir(out) if n.endswith(".png")) if os.path.isdir(out) else []


def tick():
    state["ticks"] += 1
    if not state["started"]:
        state["started"] = True
        bpy.ops.wm.open_mainfile(filepath=blend)
        scene = bpy.context.scene
        scene.render.use_lock_interface = False
        scene.render.filepath = os.path.join(out, "frame_####")
        scene.frame_set(frames - 1)  # the interface left on another frame than the first rendered
        window = bpy.context.window_manager.windows[0]
        with bpy.context.temp_override(window=window):
            bpy.ops.render.render("INVOKE_DEFAULT", animation=True)
        return 0.05
    if len(written()) < frames and not state["failed"] and state["ticks"] < 6000:
        for window in bpy.context.window_manager.windows:  # the interface keeps drawing meanwhile
            for area in window.screen.areas:
                area.tag_redraw()
        return 0.05
    for name in written():
        print("written", os.path.join(out, name), flush=True)
    os._exit(0 if len(written()) == frames and not state["failed"] else 1)


bpy.app.handlers.render_cancel.append(cancelled)
bpy.app.timers.register(tick, first_interval=0.5, persistent=True)
