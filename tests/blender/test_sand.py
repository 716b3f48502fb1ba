"""The sand effect in real Blender: the demo scene (shorter) is built from its
description, baked with the Bake operator and played back: the ground mesh
takes the dents of the balls, airborne grains appear, the dropped ball's
keyframes show it come down into the bed, and the Cache panel shows where the
sand's volume is at the frame shown, its total that of the first frame.

Run: blender -b --factory-startup --python tests/blender/test_sand.py
 or: .venv/bpy-4.5/bin/python tests/blender/test_sand.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets sys.path)

import bpy  # noqa: E402
import addon_utils  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tsubu-blender-sand-")


def test_demo_scene_dents_and_spatters():
    assert addon_utils.enable("tsubu", default_set=True) is not None
    try:
        from tsubu import demos
        from tsubu.blender.scene_import import create_objects
        desc = demos.sand_scene(frames=14)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end, scene.render.fps = 1, 14, 24
        made = create_objects(desc)
        bed = made["Sand"]
        bed.tsubu.cache_dir = TMP
        bpy.context.view_layer.objects.active = bed
        assert bpy.ops.tsubu.bake() == {"FINISHED"}, bed.tsubu.status
        ground = bpy.data.objects["Sand.ground"]

        def heights():
            return [v.co.z for v in ground.data.vertices]

        scene.frame_set(1)
        before = heights()
        scene.frame_set(14)
        after = heights()
        assert len(after) == 64 * 40
        assert min(after) < min(before) - 0.01, "the balls left no dent"
        assert max(after) > max(before) + 0.005, "no rim of pushed sand"
        assert ground.data.materials[0] is not None and bed.hide_render
        h11_h13 = []
        for f in (11, 13):
            scene.frame_set(f)
            h11_h13.append(heights())
        scene.frame_set(12)
        velocity = [0.0] * (3 * len(ground.data.vertices))
        ground.data.attributes["velocity"].data.foreach_get("vector", velocity)
        expected = [(b - a) * 24 / 2 for a, b in zip(*h11_h13)]  # motion blur: the bed's vertical speed, m/s
        assert max(abs(e) for e in expected) > 0.01 and max(abs(v - e) for v, e in zip(velocity[2::3], expected)) < 1e-3
        grains = [len(bpy.data.objects["Sand.grains"].data.vertices) for f in range(1, 15) if not scene.frame_set(f)]
        assert max(grains) > 50, grains
        ball = made["Ball"]
        assert ball.animation_data and ball.animation_data.action
        assert ball.matrix_world.translation.z < 0.1, ball.matrix_world.translation  # down in the sand (r = 0.1)
        from tsubu.blender import panels
        from tsubu.cache import Cache
        cache = Cache(os.path.join(TMP, "Sand"))
        lines = [panels.table_lines(cache, f) for f in (1, 8)]
        assert lines[1][0] == "Sand volume at frame 8", lines
        figures = [dict(line.split(": ", 1) for line in shown[1:]) for shown in lines]
        assert figures[0]["In the DEM layer"] == "0 L" and float(figures[1]["In the DEM layer"].split()[0]) > 1.0
        total, first = figures[1]["Total"].split(" (frame 1: ")
        assert total.split()[0] == first.rstrip(")") and total.endswith(" L"), figures  # to 4 digits
        # Contact Time left at 0: the panel says what the bake chose, sqrt(sag r (pi^2 + ln^2 0.3) / g), r 1.25 cm, the
        # sag stiffened for the 1200 kg/m^3 ball of 20 cm: 0.1 / ((1200 / 1600) 0.2 / (sqrt 2 r)) = 1.18 %
        from tsubu import schema
        contact_time = next(p for p in schema.get("sand").params if p.name == "contact_time")
        assert bed.tsubu.sand_settings.contact_time == 0.0
        assert panels.automatic_value(contact_time, panels.last_bake_stats(bed).get("contact_time")) == \
            "Automatic: 0.01304 s at the last bake"
    finally:
        addon_utils.disable("tsubu", default_set=True)


harness.run(globals(), "sand")
