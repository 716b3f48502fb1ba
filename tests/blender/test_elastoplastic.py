"""The elastoplastic effect in real Blender: the demo (a jelly block falling across a step; coarser, to run
in seconds) is built from its description, its body given a material, baked with the Bake operator and
played back: the masters' points and a surface meshed by Volume to Mesh from the baked level set, wearing
the body's own material, with the body hidden from renders; the surface moves down with the jelly; and the
jelly's own mesh, carried by the particles (the skin), keeps its material and goes where the surface goes.

Run: blender -b --factory-startup --python tests/blender/test_elastoplastic.py
 or: .venv/bpy-4.5/bin/python tests/blender/test_elastoplastic.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets sys.path)

import bpy  # noqa: E402
import numpy as np  # noqa: E402
import addon_utils  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tsubu-blender-elastoplastic-")


def mean_height(obj):
    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ev.to_mesh()
    zs = [(ev.matrix_world @ v.co).z for v in mesh.vertices]
    ev.to_mesh_clear()
    return sum(zs) / len(zs), len(zs)


def test_demo_jelly_bakes_and_plays_back_as_a_mesh():
    assert addon_utils.enable("tsubu", default_set=True) is not None
    try:
        from tsubu import demos
        from tsubu.blender.scene_import import create_objects
        desc = demos.elastoplastic_scene(radius=0.01, frames=12)
        desc.parameters.update(surface_smoothing=1, surface_voxel_ratio=1.0, write_skin=True)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end, scene.render.fps = 1, 12, 24
        made = create_objects(desc)
        jelly = made["Jelly"]
        gel = bpy.data.materials.new("Gel")
        jelly.data.materials.append(gel)
        jelly.tsubu.cache_dir = TMP
        bpy.context.view_layer.objects.active = jelly
        assert bpy.ops.tsubu.bake() == {"FINISHED"}, jelly.tsubu.status
        surface = bpy.data.objects["Jelly.surface"]
        assert surface.data.materials[0].name == "Gel"
        assert jelly.hide_render and not surface.hide_render
        scene.frame_set(1)
        z1, n = mean_height(surface)
        assert n > 100, "Volume to Mesh made no surface"
        scene.frame_set(12)
        z12, _ = mean_height(surface)
        assert z12 < z1 - 0.05, (z1, z12)  # it fell
        assert len(bpy.data.objects["Jelly.masters"].data.vertices) > 100
        skin = bpy.data.objects["Jelly.skin"]  # the jelly's own mesh, carried by the particles
        assert len(skin.data.vertices) == len(jelly.data.vertices) and skin.data.materials[0].name == "Gel"
        skin_z = sum(v.co.z for v in skin.data.vertices) / len(skin.data.vertices)
        assert abs(skin_z - z12) < 0.03, (skin_z, z12)  # where the surface is
        # motion blur: the skin and the surface move with the body (velocity attributes, m/s)
        scene.frame_set(4)
        skin_v = np.empty(len(skin.data.vertices) * 3, np.float32)
        skin.data.attributes["velocity"].data.foreach_get("vector", skin_v)
        evaluated = surface.evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = evaluated.to_mesh()
        surface_v = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.attributes["velocity"].data.foreach_get("vector", surface_v)
        evaluated.to_mesh_clear()
        assert skin_v.reshape(-1, 3)[:, 2].mean() < -0.3 and surface_v.reshape(-1, 3)[:, 2].mean() < -0.3, \
            (skin_v.reshape(-1, 3)[:, 2].mean(), surface_v.reshape(-1, 3)[:, 2].mean())  # falling
    finally:
        addon_utils.disable("tsubu", default_set=True)


harness.run(globals(), "elastoplastic")
