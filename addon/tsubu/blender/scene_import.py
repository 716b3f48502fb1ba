"""Make Blender objects from a tsubu.SceneDescription: the way back from the
scene description to an editable Blender scene (demo scenes, scenes saved by
pipelines). Each object gets its mesh, its first-frame matrix, its role and
its parameters; the domain gets the effect's settings and is drawn as wire.
"""
import bpy
import numpy as np
from mathutils import Matrix

from ..schema import image_array_key
from . import playback, properties




def image_from_grey(name, grey):
    """A Blender image holding a grey (H,W) array (bottom row first), packed into the .blend."""
    h, w = grey.shape
    image = bpy.data.images.get(name) or bpy.data.images.new(name, w, h, alpha=False, float_buffer=True)
    if tuple(image.size) != (w, h):
        image.scale(w, h)
    rgba = np.ones((h, w, 4), np.float32)
    rgba[..., :3] = np.asarray(grey, np.float32)[..., None]
    image.pixels.foreach_set(rgba.ravel())
    image.pack()
    return image


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
        params = dict(o.params)
        for p in role.params:
            if p.kind == "image" and params.get(p.name) and image_array_key(p) in o.arrays:
                params[p.name] = image_from_grey(params[p.name], o.arrays[image_array_key(p)]).name
        if role.params:
            properties.write_group(getattr(obj.tsubu, properties.role_attr(desc.effect, role.name)), role.params,
                                   params)
        if role.holds_settings:
            properties.write_group(getattr(obj.tsubu, properties.settings_attr(desc.effect)), schema.params,
                                   desc.parameters)
            obj.tsubu.seed = desc.seed
        if role.name in playback.SOURCE_ROLES or (role.holds_settings and role.name != "breakable"):  # stand-ins
            obj.display_type = "WIRE"
            obj.hide_render = True
        made[o.name] = obj
    return made
