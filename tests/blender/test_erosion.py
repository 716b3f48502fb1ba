"""The erosion effect in real Blender: the demo hillside (coarser, to run in
seconds) is built from its description, its ground given a material, baked
with the Bake operator and played back: the ground becomes a mesh made by
Volume to Mesh from the baked density, wearing the hillside's own material,
with the hillside hidden from renders; the rain's points appear; and the
ground at the last frame has lost what the budget says.

Run: blender -b --factory-startup --python tests/blender/test_erosion.py
 or: .venv/bpy-4.5/bin/python tests/blender/test_erosion.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets sys.path)

import bpy  # noqa: E402
import addon_utils  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tsubu-blender-erosion-")


def ground_mesh_volume(obj):
    """Volume under the evaluated ground mesh (closed by Volume to Mesh), by the divergence theorem."""
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    mesh.calc_loop_triangles()
    total = 0.0
    for tri in mesh.loop_triangles:
        a, b, c = (mesh.vertices[i].co for i in tri.vertices)
        total += a.dot(b.cross(c)) / 6.0
    n = len(mesh.vertices)
    ev.to_mesh_clear()
    return abs(total), n


def test_demo_hillside_bakes_and_plays_back_as_a_mesh():
    assert addon_utils.enable("tsubu", default_set=True) is not None
    try:
        from tsubu import demos
        from tsubu.blender.scene_import import create_objects
        desc = demos.erosion_scene(radius=0.025, frames=12)
        desc.parameters.update(critical_shear=2.0, erosion_strength=0.5)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end, scene.render.fps = 1, 12, 24
        made = create_objects(desc)
        hill = made["Hillside"]
        earth = bpy.data.materials.new("Earth")
        hill.data.materials.append(earth)
        hill.tsubu.cache_dir = TMP
        bpy.context.view_layer.objects.active = hill
        assert bpy.ops.tsubu.bake() == {"FINISHED"}, hill.tsubu.status
        ground = bpy.data.objects["Hillside.terrain"]
        assert ground.data.materials[0].name == "Earth"
        assert hill.hide_render and not ground.hide_render
        scene.frame_set(1)
        before, n = ground_mesh_volume(ground)
        assert n > 500, "Volume to Mesh made no ground"
        scene.frame_set(12)
        after, _ = ground_mesh_volume(ground)
        from tsubu.cache import Cache
        from tsubu.blender.export import cache_folder
        budget = Cache(cache_folder(hill)).read_particles("budget", 12)
        worn = float(budget["eroded"][0]) - float(budget["deposited"][0])
        assert worn > 1e-4, worn
        assert abs((before - after) - worn) < 0.25 * worn + 2e-4, (before, after, worn)
        assert len(bpy.data.objects["Hillside.fluid"].data.vertices) > 100  # the rain's points
    finally:
        addon_utils.disable("tsubu", default_set=True)


harness.run(globals(), "erosion")
