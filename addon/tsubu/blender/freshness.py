"""Is a domain's cache what its settings and scene would bake now? After a bake the domain keeps a
digest of what decides the result and can be read cheaply while the panel draws: its settings, the
frame range and seed, and every object of the effect with its role values and transform (not for
animated objects, whose transform moves with the frame; edits of their keyframes go unnoticed). Mesh edits
cannot be hashed at draw time: a depsgraph handler marks the domain when a geometry update reaches
one of the effect's objects. Either way the Cache panel says "out of date" until the next bake.
"""
import hashlib
import json

import bpy
from bpy.app.handlers import persistent

from . import properties


def _effect_objects(scene, effect):
    for obj in scene.objects:
        s, role = properties.role_of(obj)
        if role is not None and s.effect == effect:
            yield obj, s, role


def settings_digest(scene, domain):
    s, _ = properties.role_of(domain)
    t = domain.tsubu
    head = [properties.read_group(getattr(t, properties.settings_attr(s.effect)), s.params), t.seed,
            t.use_scene_frames, t.frame_start, t.frame_end, scene.frame_start, scene.frame_end, scene.render.fps]
    parts = []
    for obj, _, role in sorted(_effect_objects(scene, s.effect), key=lambda item: item[0].name):
        values = properties.read_group(getattr(obj.tsubu, properties.role_attr(s.effect, role.name)),
                                       role.params) if role.params else {}
        # an animated object (keyframed by the user, or a body keyed by the bake) moves with the frame:
        # its transform is no sign of an edit
        animated = obj.animation_data is not None and obj.animation_data.action is not None
        matrix = [] if animated else [obj.parent.name if obj.parent else ""] + [
            round(v, 6) for row in obj.matrix_basis for v in row]  # matrix_world waits for the depsgraph
        vertices = len(obj.data.vertices) if obj.type == "MESH" else 0
        parts.append([obj.name, obj.tsubu.role_id, values, matrix, vertices])
    return hashlib.sha256(json.dumps([head, parts], sort_keys=True, default=str).encode()).hexdigest()


def mark_baked(scene, domain):
    bpy.context.evaluated_depsgraph_get().update()  # the results just loaded are not edits
    domain.tsubu.baked_digest = settings_digest(scene, domain)
    domain.tsubu.geometry_changed = False


def is_out_of_date(scene, domain):
    t = domain.tsubu
    return bool(t.baked_digest) and (t.geometry_changed or t.baked_digest != settings_digest(scene, domain))


def forget(domain):
    domain.tsubu.baked_digest = ""
    domain.tsubu.geometry_changed = False


@persistent
def on_depsgraph_update(scene, depsgraph):
    """A mesh of the effect edited since the bake (its object has a role; result objects have none)."""
    changed = set()
    for update in depsgraph.updates:
        if not update.is_updated_geometry or not isinstance(update.id, bpy.types.Object):
            continue
        s, role = properties.role_of(update.id.original)
        if role is not None:
            changed.add(s.effect)
    if not changed:
        return
    for obj in scene.objects:
        s, role = properties.role_of(obj)
        if role is not None and role.holds_settings and s.effect in changed and obj.tsubu.baked_digest \
                and not obj.tsubu.geometry_changed:
            obj.tsubu.geometry_changed = True


def register():
    if on_depsgraph_update not in bpy.app.handlers.depsgraph_update_post:
        bpy.app.handlers.depsgraph_update_post.append(on_depsgraph_update)


def unregister():
    for h in list(bpy.app.handlers.depsgraph_update_post):
        if h is on_depsgraph_update or (getattr(h, "__module__", None) == __name__
                                        and h.__name__ == on_depsgraph_update.__name__):
            bpy.app.handlers.depsgraph_update_post.remove(h)
