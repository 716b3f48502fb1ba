"""Take docs/panel.png: the Tsubu panel on a water domain in Blender's real interface
(TSUBU_ROLE=sand.bed TSUBU_SCREENSHOT=docs/sand_panel.png for the sand bed's).
The 3D view is turned into a Properties editor on the Physics tab and only that
area is captured (no splash screen, readable size).

    blender -b --factory-startup --python-expr "import bpy; bpy.ops.wm.save_as_mainfile(filepath='/tmp/start.blend')"
    xvfb-run -a -s "-screen 0 1000x1300x24" blender --factory-startup /tmp/start.blend \
        --python scripts/screenshot_panel.py

(Opening a file keeps the splash screen away.)
"""
import os
import sys

import bpy

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "addon"))
import addon_utils  # noqa: E402

OUT = os.environ.get("TSUBU_SCREENSHOT", os.path.join(ROOT, "docs", "panel.png"))
ROLE = os.environ.get("TSUBU_ROLE", "water.domain")  # e.g. sand.bed for docs/sand_panel.png


def setup():
    addon_utils.enable("tsubu", default_set=True)
    cube = bpy.data.objects.get("Cube")
    cube.name = "Domain"
    cube.scale = (2, 2, 1.5)
    bpy.context.view_layer.objects.active = cube
    cube.tsubu.role_id = ROLE
    for area in bpy.context.screen.areas:
        if area.type == "VIEW_3D":
            area.type = "PROPERTIES"
    return None


def show_physics():
    for area in bpy.context.window_manager.windows[0].screen.areas:
        if area.type == "PROPERTIES":
            try:
                area.spaces.active.context = "PHYSICS"
            except TypeError:  # an editor without the object's tabs (yet): try again shortly
                return 0.5
    return None


def shoot():
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "PROPERTIES" and a.width > 500)
    with bpy.context.temp_override(window=window, area=area):
        bpy.ops.screen.screenshot_area(filepath=OUT)
    print("wrote", OUT)
    bpy.ops.wm.quit_blender()
    return None


bpy.app.timers.register(setup, first_interval=1.0)
bpy.app.timers.register(show_physics, first_interval=2.0)
bpy.app.timers.register(shoot, first_interval=4.5)
