"""Turn the Blender scene around one settings object (the domain) into a
tsubu.SceneDescription: the only place Blender data is read for a bake.

Meshes are taken evaluated (modifiers applied) and triangulated, in object
space; world matrices are sampled at every frame of the bake for objects
that are animated, once for the others.
"""
import os

import bpy
import numpy as np

from ..scene import SceneDescription, SceneObject
from ..schema import image_array_key
from . import playback, properties


def mesh_arrays(obj, depsgraph):
    """(vertices (N,3) float32, triangles (M,3) int32) of the evaluated object, object space."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        mesh.calc_loop_triangles()
        v = np.empty(len(mesh.vertices) * 3, np.float32)
        mesh.vertices.foreach_get("co", v)
        t = np.empty(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("vertices", t)
    finally:
        evaluated.to_mesh_clear()
    return v.reshape(-1, 3), t.reshape(-1, 3)


def corner_uvs(obj, depsgraph):
    """(M,3,2) float32 UVs of the active UV map per triangle corner, or None without a UV map."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        if not mesh.uv_layers.active:
            return None
        mesh.calc_loop_triangles()
        loops = np.empty(len(mesh.loop_triangles) * 3, np.int32)
        mesh.loop_triangles.foreach_get("loops", loops)
        uv = np.empty(len(mesh.loops) * 2, np.float32)
        mesh.uv_layers.active.data.foreach_get("uv", uv)
        return uv.reshape(-1, 2)[loops].reshape(-1, 3, 2)
    finally:
        evaluated.to_mesh_clear()


def image_grey(image):
    """An image's pixels as grey (H,W) float32, bottom row first, or None if it cannot be read."""
    try:
        width, height = image.size
        if width == 0 or height == 0:
            return None
        px = np.empty(width * height * image.channels, np.float32)
        image.pixels.foreach_get(px)
    except (RuntimeError, ReferenceError):
        return None
    px = px.reshape(height, width, image.channels)
    if image.channels < 3:
        return np.ascontiguousarray(px[..., 0])
    return (px[..., :3] @ np.array([0.2126, 0.7152, 0.0722], np.float32)).astype(np.float32)  # luminance


def image_arrays(o, role, params, depsgraph):
    """The pixels of the role's image parameters (grey, by schema.image_array_key) and, with any image,
    the object's corner UVs."""
    arrays = {}
    for p in role.params:
        if p.kind != "image" or not params.get(p.name):
            continue
        image = bpy.data.images.get(params[p.name])
        grey = image_grey(image) if image is not None else None
        if grey is not None:  # a missing image is named by the effect's checks
            arrays[image_array_key(p)] = grey
    if arrays:
        uv = corner_uvs(o, depsgraph)
        if uv is not None:
            arrays["uv"] = uv
    return arrays


def is_animated(obj):
    """Whether the object moves with the frame by anything but an earlier bake's keys (a body keyed by a
    bake starts the next bake where it started the last: playback.baked_start)."""
    o = obj
    while o is not None:
        if o.animation_data and (o.animation_data.drivers or playback.has_own_animation(o)):
            return True
        if o.constraints:
            return True
        o = o.parent
    return False


def frame_range(scene, domain):
    s = domain.tsubu
    if s.use_scene_frames:
        return scene.frame_start, scene.frame_end
    return s.frame_start, s.frame_end


def cache_folder(domain):
    """Absolute cache folder of a domain: <cache_dir>/<object name>."""
    base = bpy.path.abspath(domain.tsubu.cache_dir or "//tsubu_cache/")
    if not os.path.isabs(base):  # an unsaved .blend makes // relative to nothing
        base = os.path.join(bpy.app.tempdir or "/tmp", "tsubu_cache")
    return os.path.join(base, bpy.path.clean_name(domain.name))


def members(scene, domain):
    """Objects of the scene taking part in the domain's effect (the domain first)."""
    effect = properties.role_of(domain)[0].effect
    out = [domain]
    for obj in scene.objects:
        s, role = properties.role_of(obj)
        if obj is not domain and s is not None and s.effect == effect and not role.holds_settings:
            out.append(obj)
    return out


def describe(context, domain):
    """The SceneDescription of the domain's effect (not validated yet)."""
    scene = context.scene
    s, _ = properties.role_of(domain)
    start, end = frame_range(scene, domain)
    objs = members(scene, domain)
    animated = [o for o in objs if is_animated(o)]
    matrices = {o.name: [] for o in animated}
    current = scene.frame_current
    try:
        for frame in range(start, end + 1) if animated else ():
            scene.frame_set(frame)
            for o in animated:
                matrices[o.name].append(np.array(o.matrix_world, dtype=np.float64))
        scene.frame_set(start)  # geometry and static matrices at the first frame
        objects = [describe_object(s, o, matrices, context.evaluated_depsgraph_get()) for o in objs]
    finally:
        scene.frame_set(current)
    params = properties.read_group(getattr(domain.tsubu, properties.settings_attr(s.effect)), s.params)
    fps = scene.render.fps / scene.render.fps_base
    return SceneDescription(s.effect, params, start, end, fps, domain.tsubu.seed, objects)


def describe_object(s, o, matrices, depsgraph):
    _, role = properties.role_of(o)
    if o.type != "MESH":
        v, t = np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int32)
    else:
        v, t = mesh_arrays(o, depsgraph)
    start = playback.baked_start(o)
    if o.name in matrices:
        m = np.array(matrices[o.name])
    elif start is not None:
        m = start[None]
    else:
        m = np.array(o.matrix_world, np.float64)[None]
    params = {}
    if role.params:
        params = properties.read_group(getattr(o.tsubu, properties.role_attr(s.effect, role.name)), role.params)
    arrays = image_arrays(o, role, params, depsgraph) if o.type == "MESH" else {}
    return SceneObject(o.name, role.name, v, t, m, params, arrays=arrays)
