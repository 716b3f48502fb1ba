"""The water effect in real Blender: the demo scene (coarser, to run in
seconds) is built from its description, baked with the Bake operator, and
played back: the liquid's points and its meshed surface appear, the crate's
keyframes show it floating and the stone's show it on the bottom.

Run: blender -b --factory-startup --python tests/blender/test_water.py
 or: .venv/bpy-4.5/bin/python tests/blender/test_water.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets sys.path)

import bpy  # noqa: E402
import addon_utils  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tsubu-blender-water-")


def mesh_of(obj):
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    co = [tuple(v.co) for v in mesh.vertices]
    evaluated.to_mesh_clear()
    return co


def test_demo_scene_bakes_floats_and_sinks():
    assert addon_utils.enable("tsubu", default_set=True) is not None
    try:
        from tsubu import demos
        from tsubu.blender.scene_import import create_objects
        desc = demos.water_scene(radius=0.0175, frames=48)
        desc.parameters.update(surface_smoothing=1, surface_voxel_ratio=1.0)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end, scene.render.fps = 1, 48, 24
        made = create_objects(desc)
        domain = made["Domain"]
        domain.tsubu.cache_dir = TMP
        bpy.context.view_layer.objects.active = domain
        assert bpy.ops.tsubu.estimate() == {"FINISHED"}
        assert "particles" in domain.tsubu.estimate and "MB for 48 frames" in domain.tsubu.estimate
        assert not os.path.exists(os.path.join(TMP, "Domain")), "the estimate wrote into the cache folder"
        assert bpy.ops.tsubu.bake() == {"FINISHED"}, domain.tsubu.status
        scene.frame_set(48)
        points = bpy.data.objects["Domain.fluid"]
        assert len(points.data.vertices) > 1500
        assert "Domain.surface.vdb" in bpy.data.objects
        surface = bpy.data.objects["Domain.surface"].evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = surface.to_mesh()
        assert len(mesh.vertices) > 100, "Volume to Mesh made no surface"
        zs = [v.co.z for v in mesh.vertices]
        assert 0.1 < sum(zs) / len(zs) < 0.4  # the liquid lies in the container
        surface.to_mesh_clear()
        crate, stone = made["Crate"], made["Stone"]
        assert crate.animation_data and crate.animation_data.action
        def lowest(obj):
            return min((obj.matrix_world @ v.co).z for v in obj.data.vertices)

        crate_bottom, stone_bottom = lowest(crate), lowest(stone)
        assert crate_bottom > 0.03, f"the crate rests on the floor (lowest point at {crate_bottom:.3f} m)"
        assert stone_bottom < 0.025, f"the stone did not sink (lowest point at {stone_bottom:.3f} m)"
        assert bpy.data.objects["Domain.surface"].data.materials[0].name == "Tsubu Water"
        # Rebuild Surface: a finer surface from the cached particles, without simulating again
        vertices_before = len(mesh_of(bpy.data.objects["Domain.surface"]))
        from tsubu.blender import properties
        settings = getattr(domain.tsubu, properties.settings_attr("water"))
        settings.surface_voxel_ratio = 0.5
        fluid_file = os.path.join(TMP, "Domain", "fluid", "fluid_000048.tspf")
        fluid_bytes = open(fluid_file, "rb").read()
        assert bpy.ops.tsubu.rebuild_surface() == {"FINISHED"}, domain.tsubu.status
        assert domain.tsubu.status == "Surface rebuilt for frames 1-48", domain.tsubu.status
        from tsubu import Cache
        assert Cache(os.path.join(TMP, "Domain")).manifest()["parameters"]["surface_voxel_ratio"] == 0.5
        assert open(fluid_file, "rb").read() == fluid_bytes
        vertices_after = len(mesh_of(bpy.data.objects["Domain.surface"]))
        assert vertices_after > 2 * vertices_before, (vertices_before, vertices_after)  # voxels half as big
    finally:
        addon_utils.disable("tsubu", default_set=True)


harness.run(globals(), "water")
