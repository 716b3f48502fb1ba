"""Make Blender objects from a tsubu.SceneDescription: the way back from the
scene description to an editable Blender scene (demo scenes, scenes saved by
pipelines). Each object gets its mesh, its first-frame matrix, its role and
its parameters; the domain gets the effect's settings and is drawn as wire.
"""
import bpy
from mathutils import Matrix

from . import properties


SOURCE_ROLES = ("fluid", "inflow")


def create_objects(desc, collection=None):
    """Create one Blender object per scene object; returns {name: object}."""
    collection = collection or bpy.context.scene.collection
    schema = desc.schema
    made = {}
    for o in desc.objects:
        mesh = bpy.data.meshes.new(o.name)
        mesh.from_pydata(o.vertices.tolist(), [], o.triangles.tolist())
        mesh.update()
        obj = bpy.data.objects.new(o.name, mesh)
        collection.objects.link(obj)
        obj.matrix_world = Matrix(o.matrix(0).tolist())
        if o.animated:
            for i, m in enumerate(o.matrices):
                obj.matrix_world = Matrix(m.tolist())
                obj.keyframe_insert("location", frame=desc.frame_start + i)
                obj.keyframe_insert("rotation_euler", frame=desc.frame_start + i)
                obj.keyframe_insert("scale", frame=desc.frame_start + i)
        obj.tsubu.role_id = f"{desc.effect}.{o.role}"
        role = schema.role(o.role)
        if role.params:
            properties.write_group(getattr(obj.tsubu, properties.role_attr(desc.effect, role.name)), role.params,
                                   o.params)
        if role.holds_settings:
            properties.write_group(getattr(obj.tsubu, properties.settings_attr(desc.effect)), schema.params,
                                   desc.parameters)
            obj.tsubu.seed = desc.seed
        if role.name in SOURCE_ROLES or role.holds_settings:  # stand-ins for what the bake makes
            obj.display_type = "WIRE"
            obj.hide_render = True
        made[o.name] = obj
    return made
