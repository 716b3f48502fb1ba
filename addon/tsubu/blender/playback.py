"""Playback of baked caches in Blender.

After a bake (and on every frame change) each domain's streams appear as:
- particles  -> a vertex-only mesh '<Domain>.<stream>' whose positions and
  attributes (velocity, radius, id, ...) are set from the frame's file with
  foreach_set, drawn as points of their radius by a Geometry Nodes group;
- volume     -> a Volume object sequence '<Domain>.<stream>.vdb'; level-set
  grids named 'surface' are meshed by a Volume to Mesh modifier on '<Domain>.<stream>'.
  Each frame's file is read by Tsubu's own reader before Blender loads it
  (OpenVDB inside Blender aborts on a damaged file): a damaged frame shows no
  volume and is reported on the domain; a surface made from particles carries
  their velocity (motion blur); Blender reads the files through a fresh view
  link per bake or rebuild (play_through_new_view);
- heightfield -> a grid mesh '<Domain>.<stream>' over the bed's cells whose
  heights are set from the frame's file (the Sand Bed itself then shows as
  a wireframe and is not rendered; the grid takes its materials);
- transforms -> keyframes on the objects named in the manifest;
- fragments  -> one mesh '<Domain>.fragments' of all the broken object's
  pieces (its materials, plus a fracture material for the inner faces),
  whose corners follow their elements' poses from the "pieces" stream
  every frame (the Breakable itself then shows as a wireframe).
Meshes that keep their vertices (bed, pieces, skin) carry a velocity from the
cached frames either side. Result objects live in the collection 'Tsubu Results';
the objects they replace are wire stand-ins until Free (make_stand_in).
"""
import itertools
import os

import bpy
import numpy as np
from bpy.app.handlers import persistent

from .._native import _core
from ..cache import Cache, frame_path, posed_fragments, read_fragments, read_particles, view_aliases
from ..errors import CorruptFileError
from . import compat, properties

COLLECTION = "Tsubu Results"
POINTS_GROUP = "Tsubu Points"
SURFACE_VELOCITY_GROUP = "Tsubu Surface Velocity"
STANDARD = {"velocity": "FLOAT_VECTOR", "radius": "FLOAT", "id": "INT", "density": "FLOAT"}


def result_collection(scene):
    coll = bpy.data.collections.get(COLLECTION)
    if coll is None:
        coll = bpy.data.collections.new(COLLECTION)
    if coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    return coll


def ensure_object(scene, name, data):
    obj = bpy.data.objects.get(name)
    if obj is None:
        obj = bpy.data.objects.new(name, data)
        result_collection(scene).objects.link(obj)
    return obj


def show_mesh(scene, name, obj, mesh):
    """Give the result object `name` (made if obj is None) a freshly built mesh, dropping its old one."""
    if obj is None:
        return ensure_object(scene, name, mesh)
    old = obj.data
    obj.data = mesh
    if old.users == 0:
        bpy.data.meshes.remove(old)
    return obj


def source_materials(desc):
    """The materials of the object a stream stands in for (manifest "object"), without empty slots."""
    source = bpy.data.objects.get(desc.get("object", ""))
    if source is None or source.type != "MESH":
        return []
    return [mat for mat in source.data.materials if mat is not None]


def points_node_group():
    """Geometry Nodes: mesh vertices -> points with the 'radius' attribute, material set."""
    group = bpy.data.node_groups.get(POINTS_GROUP)
    if group is not None:
        return group
    group = bpy.data.node_groups.new(POINTS_GROUP, "GeometryNodeTree")
    compat.new_group_socket(group, "Geometry", "INPUT", "NodeSocketGeometry")
    compat.new_group_socket(group, "Geometry", "OUTPUT", "NodeSocketGeometry")
    nodes, links = group.nodes, group.links
    g_in, g_out = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    to_points = nodes.new("GeometryNodeMeshToPoints")
    radius = nodes.new("GeometryNodeInputNamedAttribute")
    radius.data_type = "FLOAT"
    radius.inputs["Name"].default_value = "radius"
    material = nodes.new("GeometryNodeSetMaterial")
    material.inputs["Material"].default_value = points_material()
    links.new(g_in.outputs[0], to_points.inputs["Mesh"])
    links.new(radius.outputs["Attribute"], to_points.inputs["Radius"])
    links.new(to_points.outputs["Points"], material.inputs["Geometry"])
    links.new(material.outputs["Geometry"], g_out.inputs[0])
    for i, node in enumerate((g_in, radius, to_points, material, g_out)):
        node.location = (200 * i, 0)
    return group


def typed_socket(sockets, name, socket_type):
    """The socket of that name and type: before Blender 4.0, nodes with a data type had one socket
    per type under the same name, only the chosen one enabled."""
    return next(sock for sock in sockets if sock.name == name and sock.type == socket_type and sock.enabled)


def surface_velocity_node_group():
    """Geometry Nodes: each vertex of a surface mesh takes the velocity of the nearest particle of the
    object in its 'Particles' input, stored as the 'velocity' attribute Cycles blurs by (m/s)."""
    group = bpy.data.node_groups.get(SURFACE_VELOCITY_GROUP)
    if group is not None:
        return group
    group = bpy.data.node_groups.new(SURFACE_VELOCITY_GROUP, "GeometryNodeTree")
    compat.new_group_socket(group, "Geometry", "INPUT", "NodeSocketGeometry")
    compat.new_group_socket(group, "Particles", "INPUT", "NodeSocketObject")
    compat.new_group_socket(group, "Geometry", "OUTPUT", "NodeSocketGeometry")
    nodes, links = group.nodes, group.links
    g_in, g_out = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    particles = nodes.new("GeometryNodeObjectInfo")
    particles.transform_space = "RELATIVE"  # particle positions in the surface object's space
    nearest = nodes.new("GeometryNodeSampleNearest")
    velocity = nodes.new("GeometryNodeInputNamedAttribute")
    velocity.data_type = "FLOAT_VECTOR"
    velocity.inputs["Name"].default_value = "velocity"
    sample = nodes.new("GeometryNodeSampleIndex")
    sample.data_type, sample.domain = "FLOAT_VECTOR", "POINT"
    store = nodes.new("GeometryNodeStoreNamedAttribute")
    store.data_type, store.domain = "FLOAT_VECTOR", "POINT"
    store.inputs["Name"].default_value = "velocity"
    links.new(g_in.outputs["Particles"], particles.inputs["Object"])
    links.new(particles.outputs["Geometry"], nearest.inputs["Geometry"])
    links.new(particles.outputs["Geometry"], sample.inputs["Geometry"])
    links.new(typed_socket(velocity.outputs, "Attribute", "VECTOR"), typed_socket(sample.inputs, "Value", "VECTOR"))
    links.new(nearest.outputs["Index"], sample.inputs["Index"])
    links.new(g_in.outputs["Geometry"], store.inputs["Geometry"])
    links.new(typed_socket(sample.outputs, "Value", "VECTOR"), typed_socket(store.inputs, "Value", "VECTOR"))
    links.new(store.outputs["Geometry"], g_out.inputs[0])
    for i, node in enumerate((g_in, particles, nearest, velocity, sample, store, g_out)):
        node.location = (180 * i, 0)
    return group


def principled_material(name, **inputs):
    """A node material of that name (made once) with Principled BSDF inputs set by role (compat.principled_inputs)."""
    mat = bpy.data.materials.get(name)
    if mat is None:
        mat = bpy.data.materials.new(name)
        mat.use_nodes = True
        bsdf = mat.node_tree.nodes.get("Principled BSDF")
        if bsdf:
            sockets = compat.principled_inputs(bsdf)
            for role, value in inputs.items():
                sockets[role].default_value = value
    return mat


def points_material():
    return principled_material("Tsubu Particles", base_color=(0.2, 0.45, 0.9, 1.0))


def ensure_points_object(scene, domain, stream):
    name = f"{domain.name}.{stream}"
    obj = bpy.data.objects.get(name)
    if obj is None:
        obj = ensure_object(scene, name, bpy.data.meshes.new(name))
        mod = obj.modifiers.new("Tsubu Points", "NODES")
        mod.node_group = points_node_group()
    return obj


def set_mesh_points(mesh, frame, default_radius):
    """Replace the mesh's vertices by the frame's particles, with their attributes."""
    mesh.clear_geometry()
    if frame is None or frame.count == 0:
        mesh.update()
        return
    pos = np.ascontiguousarray(frame["position"], np.float32)
    mesh.vertices.add(len(pos))
    mesh.vertices.foreach_set("co", pos.ravel())
    columns = dict(frame.attributes)
    columns.setdefault("radius", np.full(len(pos), default_radius, np.float32))
    for name, values in columns.items():
        if name == "position":
            continue
        kind = STANDARD.get(name) or ("FLOAT_VECTOR" if values.ndim == 2 and values.shape[1] == 3 else
                                      "FLOAT" if values.ndim == 1 else None)
        if kind is None:
            continue
        attr = mesh.attributes.get(name) or mesh.attributes.new(name, kind, "POINT")
        if kind == "INT":
            attr.data.foreach_set("value", values.astype(np.int32).ravel())
        elif kind == "FLOAT_VECTOR":
            attr.data.foreach_set("vector", np.ascontiguousarray(values, np.float32).ravel())
        else:
            attr.data.foreach_set("value", np.ascontiguousarray(values, np.float32).ravel())
    mesh.update()


def ensure_heightfield_object(scene, domain, stream, desc):
    """A grid mesh with a vertex at each bed cell's centre, made once per grid size."""
    name = f"{domain.name}.{stream}"
    nx, ny = int(desc["nx"]), int(desc["ny"])
    obj = bpy.data.objects.get(name)
    if obj is not None and len(obj.data.vertices) == nx * ny:
        return obj
    mesh = bpy.data.meshes.new(name)
    x = desc["x0"] + (np.arange(nx) + 0.5) * desc["cell"]
    y = desc["y0"] + (np.arange(ny) + 0.5) * desc["cell"]
    gx, gy = np.meshgrid(x, y)
    verts = np.stack([gx.ravel(), gy.ravel(), np.zeros(nx * ny)], axis=1)
    i, j = np.meshgrid(np.arange(nx - 1), np.arange(ny - 1))
    a = (j * nx + i).ravel()
    quads = np.stack([a, a + 1, a + nx + 1, a + nx], axis=1)
    mesh.from_pydata(verts.tolist(), [], quads.tolist())
    mesh.polygons.foreach_set("use_smooth", np.ones(len(quads), bool))
    for mat in source_materials(desc) or [sand_material()]:
        mesh.materials.append(mat)
    obj = show_mesh(scene, name, obj, mesh)
    return obj


def sand_material():
    return principled_material("Tsubu Sand", base_color=(0.76, 0.62, 0.42, 1.0), roughness=0.9)


def set_heights(mesh, heights):
    co = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", co)
    co[2::3] = np.asarray(heights, np.float32).ravel()
    mesh.vertices.foreach_set("co", co)
    mesh.update()


def water_material():
    """Clear water for level-set surfaces: the renderer gives reflection, refraction and Fresnel."""
    return principled_material("Tsubu Water", base_color=(0.8, 0.92, 1.0, 1.0), roughness=0.02, ior=1.33,
                               transmission=1.0)


def default_material(mesh_of):
    """For a meshed stream whose object has no material: water for a liquid's surface, bare earth for a
    terrain, a glossy gel for a deformable body's surface."""
    if mesh_of["grid"] != "surface":
        return ground_material()
    if mesh_of.get("materials_of"):
        return principled_material("Tsubu Gel", base_color=(0.85, 0.28, 0.32, 1.0), roughness=0.25)
    return water_material()


def ground_material():
    """Bare earth, for a baked terrain whose object has no material of its own."""
    return principled_material("Tsubu Ground", base_color=(0.36, 0.27, 0.19, 1.0), roughness=0.95)


def play_volume_sequence(volume, cache, stream, frames, folder=None):
    """The volume plays the stream's frames, read through the cache's folder 'folder' (a view link,
    play_through_new_view) or else the stream's own."""
    path = frame_path(cache.folder, stream, frames[0], "volume")
    if folder is not None:
        path = os.path.join(cache.folder, folder, os.path.basename(path))
    volume.filepath = path
    volume.is_sequence = True
    volume.frame_start = 1  # file numbers are scene frames
    volume.frame_offset = 0
    volume.frame_duration = frames[-1]
    volume.sequence_mode = "CLIP"


_views = itertools.count(1)


def play_through_new_view(vol_obj, cache, stream):
    """Blender 4 and 5 keep the grids they read per file path for as long as Blender runs: files that
    changed under it (a new bake, Rebuild Surface) are read through a new path, a link
    '<stream>.view<n>' -> '<stream>' in the cache folder (Free removes the links; Blender 3.4 reads
    the new files through either path)."""
    alias = f"{stream}.view{next(_views)}"  # never a path this Blender session has read before
    try:
        for old in view_aliases(cache.folder, stream):
            os.unlink(old)
        os.symlink(stream, os.path.join(cache.folder, alias))
    except OSError:  # a file system without links: the stream's own path (a rewritten file may show late)
        alias = None
    play_volume_sequence(vol_obj.data, cache, stream, cache.frames(stream), folder=alias)


def current_view(cache, stream):
    aliases = view_aliases(cache.folder, stream)
    return os.path.basename(aliases[-1]) if aliases else None


_checked_volumes = {}  # (path, size, mtime) -> the reader's complaint, or None


def volume_problem(path):
    """What Tsubu's reader says of a .vdb frame (None if it reads whole or is not there); each
    version of a file is read once."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _checked_volumes:
        if len(_checked_volumes) > 100000:
            _checked_volumes.clear()
        try:
            _core.read_vdb(path)
            _checked_volumes[key] = None
        except Exception as e:  # the reader's own errors name the file; anything else is damage too
            text = str(e)
            _checked_volumes[key] = text if path in text else f"{path}: {text}"
    return _checked_volumes[key]


def ensure_volume_objects(scene, domain, cache, stream, desc):
    """A Volume sequence for the stream, and a mesh made from it by Volume to Mesh where the stream asks
    for one: level sets ("surface") at their zero crossing with a water material, density volumes (the
    erosion's terrain) at the stream's threshold with the materials of the object it replaces."""
    frames = cache.frames(stream)
    if not frames:
        return None
    name = f"{domain.name}.{stream}"
    vol_name = name + ".vdb"
    vol_obj = bpy.data.objects.get(vol_name)
    if vol_obj is None:
        vol_obj = ensure_object(scene, vol_name, bpy.data.volumes.new(vol_name))
    play_through_new_view(vol_obj, cache, stream)  # the files may be new under paths read before
    mesh_of = desc.get("mesh")
    if mesh_of is None and "surface" in desc.get("grids", []):
        mesh_of = {"grid": "surface", "threshold": 0.0}
    if mesh_of is None:
        return vol_obj
    vol_obj.hide_render = True
    vol_obj.hide_viewport = True
    mesh_obj = bpy.data.objects.get(name)
    if mesh_obj is None:
        mesh_obj = ensure_object(scene, name, bpy.data.meshes.new(name))
        mod = mesh_obj.modifiers.new("Tsubu Surface", "VOLUME_TO_MESH")
        mod.object = vol_obj
        mod.grid_name = mesh_of["grid"]
        mod.resolution_mode = "GRID"
        mod.threshold = mesh_of["threshold"]  # level sets: the zero crossing; densities: their iso value
        mod.use_smooth_shade = True
        source = bpy.data.objects.get(mesh_of.get("materials_of") or "")
        materials = [m for m in source.data.materials if m] if source is not None and source.type == "MESH" else []
        for m in materials or [default_material(mesh_of)]:
            mesh_obj.data.materials.append(m)
        if desc.get("particles"):  # motion blur: the surface moves with the particles it wraps
            blur = mesh_obj.modifiers.new("Tsubu Surface Velocity", "NODES")
            blur.node_group = surface_velocity_node_group()
            compat.set_modifier_input(blur, "Particles", ensure_points_object(scene, domain, desc["particles"]))
        if source is not None:  # the baked ground stands in for the object it was made from
            make_stand_in(source)
    return mesh_obj


BAKED_START = "tsubu_start"  # a keyed body's world matrix before the bake keyed it (16 numbers, row by row)
BAKED_KEYS = "Tsubu"  # the action group of the keys a bake makes


def baked_start(obj):
    """The world matrix a body keyed by a bake had before it (what the next bake starts from), or None."""
    if BAKED_START not in obj:
        return None
    return np.array(obj[BAKED_START], np.float64).reshape(4, 4)


def has_own_animation(obj):
    """Whether anything but a bake's keys moves the object (the user's keys, drivers)."""
    fcurves = compat.action_fcurves(obj)
    if fcurves is None:
        return obj.animation_data is not None and obj.animation_data.action is not None
    return any(fc.group is None or fc.group.name != BAKED_KEYS for fc in fcurves)


def remove_baked_keys(obj):
    """Take a bake's keys off a body and put it back where it started."""
    start = baked_start(obj)
    if start is None:
        return
    fcurves = compat.action_fcurves(obj)
    for fc in [fc for fc in fcurves or () if fc.group is not None and fc.group.name == BAKED_KEYS]:
        fcurves.remove(fc)
    if fcurves is not None and len(fcurves) == 0:
        obj.animation_data.action = None
    from mathutils import Matrix
    obj.matrix_world = Matrix(start.tolist())
    del obj[BAKED_START]


def apply_transforms(cache, stream):
    """Keyframe every baked frame onto the objects of a transforms stream; the keys of an earlier bake
    go first, and the body's own start is kept (baked_start) for the next bake and for Free."""
    for name in cache.manifest()["streams"][stream].get("objects", ()):
        obj = bpy.data.objects.get(name)
        if obj is not None:
            remove_baked_keys(obj)
            obj[BAKED_START] = [v for row in obj.matrix_world for v in row]
    for frame in cache.frames(stream):
        for name, matrix in cache.read_transforms(stream, frame).items():
            obj = bpy.data.objects.get(name)
            if obj is None:
                continue
            obj.rotation_mode = "QUATERNION"
            scale = obj.matrix_world.to_scale()
            from mathutils import Matrix
            obj.matrix_world = Matrix(matrix.tolist()) @ Matrix.Diagonal((*scale, 1.0))
            obj.keyframe_insert("location", frame=frame, group=BAKED_KEYS)
            obj.keyframe_insert("rotation_quaternion", frame=frame, group=BAKED_KEYS)


def inner_material():
    return principled_material("Tsubu Fracture", base_color=(0.42, 0.4, 0.37, 1.0), roughness=0.95)


def ensure_fragments_object(scene, domain, cache, stream, desc):
    """The pieces as one mesh of separate triangles, made once per bake; rest corners in an attribute."""
    name = f"{domain.name}.{stream}"
    obj = bpy.data.objects.get(name)
    if obj is not None and "tsubu_element" in obj.data.attributes:
        return obj
    corners, uv, element, material = read_fragments(cache, stream)
    m = len(element)
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(3 * m)
    mesh.loops.add(3 * m)
    mesh.polygons.add(m)
    mesh.vertices.foreach_set("co", corners.reshape(-1).astype(np.float32))
    mesh.loops.foreach_set("vertex_index", np.arange(3 * m, dtype=np.int32))
    mesh.polygons.foreach_set("loop_start", np.arange(0, 3 * m, 3, dtype=np.int32))
    compat.set_polygon_loop_totals(mesh, np.full(m, 3, np.int32))
    mesh.polygons.foreach_set("material_index", material.astype(np.int32))
    layer = mesh.uv_layers.new(name="UVMap")
    layer.data.foreach_set("uv", uv.reshape(-1).astype(np.float32))
    for attr, values, kind in (("tsubu_rest", corners.reshape(-1, 3), "FLOAT_VECTOR"),
                               ("tsubu_element", np.repeat(element, 3), "INT")):
        a = mesh.attributes.new(attr, kind, "POINT")
        a.data.foreach_set("vector" if kind == "FLOAT_VECTOR" else "value",
                           np.ascontiguousarray(values, np.float32 if kind == "FLOAT_VECTOR" else np.int32).ravel())
    mesh.update()
    outer = source_materials(desc) or [principled_material("Tsubu Stone", base_color=(0.6, 0.58, 0.55, 1.0),
                                                           roughness=0.8)]
    mesh.materials.append(outer[0])
    mesh.materials.append(inner_material())
    return show_mesh(scene, name, obj, mesh)


STAND_IN = "tsubu_stand_in"  # what an object showed before a bake made it a stand-in: "<display type> <hide render>"
SOURCE_ROLES = ("fluid", "inflow", "rain", "sink")  # they make or take liquid; the liquid is what renders


def make_stand_in(obj):
    """After a bake the result is what renders: the object it replaces shows as a wireframe and is not
    rendered. Free restores it (restore_stand_ins)."""
    if STAND_IN not in obj:
        obj[STAND_IN] = f"{obj.display_type} {int(obj.hide_render)}"
    obj.display_type = "WIRE"
    obj.hide_render = True


def restore_stand_ins(scene, domain):
    effect = properties.role_of(domain)[0].effect
    for obj in scene.objects:
        s, role = properties.role_of(obj)
        if STAND_IN in obj and (obj == domain or (s is not None and s.effect == effect)):
            display, hidden = str(obj[STAND_IN]).split()
            obj.display_type, obj.hide_render = display, hidden == "1"
            del obj[STAND_IN]


def domains(scene):
    for obj in scene.objects:
        s, role = properties.role_of(obj)
        if role is not None and role.holds_settings:
            yield obj


# ---- what playback does with each kind of stream (the manifest's "kind"; cache.KINDS)
#
# show(scene, domain, cache, stream, desc, frame, radius): every frame change;
# build(scene, domain, cache, stream, desc) -> True when it made a rendered surface: once after a bake.
# A new effect whose streams are of these kinds needs nothing here; a new kind adds one entry.

def show_particles(scene, domain, cache, stream, desc, frame, radius):
    path = frame_path(cache.folder, stream, frame)
    obj = ensure_points_object(scene, domain, stream)
    try:
        points = read_particles(path) if os.path.exists(path) else None
    except (CorruptFileError, OSError):
        set_mesh_points(obj.data, None, radius)  # not the previous frame's points
        raise
    set_mesh_points(obj.data, points, radius)


def set_mesh_velocity(mesh, cache, frame, positions_at):
    """The 'velocity' attribute (m/s) Cycles blurs by, on a result mesh whose vertices keep their
    order from frame to frame (sand bed, pieces, skin): central differences of the vertex positions
    of the cached frames either side (one-sided at the ends, zero where the frame stands alone)."""
    fps = float(cache.manifest()["fps"])
    before, after = positions_at(frame - 1), positions_at(frame + 1)
    here = positions_at(frame) if before is None or after is None else None
    if before is not None and after is not None:
        velocity = (after - before) * (fps / 2.0)
    elif after is not None and here is not None:
        velocity = (after - here) * fps
    elif before is not None and here is not None:
        velocity = (here - before) * fps
    else:
        velocity = np.zeros((len(mesh.vertices), 3))
    attr = mesh.attributes.get("velocity") or mesh.attributes.new("velocity", "FLOAT_VECTOR", "POINT")
    attr.data.foreach_set("vector", np.ascontiguousarray(velocity, np.float32).ravel())


def heights_at(cache, stream, mesh):
    grid = np.empty(len(mesh.vertices) * 3, np.float32)
    mesh.vertices.foreach_get("co", grid)
    grid = grid.reshape(-1, 3)

    def positions(frame):
        if not os.path.exists(frame_path(cache.folder, stream, frame)):
            return None
        return np.column_stack([grid[:, :2], np.asarray(cache.read_heights(stream, frame), np.float64).reshape(-1)])
    return positions


def show_heightfield(scene, domain, cache, stream, desc, frame, radius):
    if os.path.exists(frame_path(cache.folder, stream, frame)):
        mesh = ensure_heightfield_object(scene, domain, stream, desc).data
        set_heights(mesh, cache.read_heights(stream, frame))
        set_mesh_velocity(mesh, cache, frame, heights_at(cache, stream, mesh))


def show_fragments(scene, domain, cache, stream, desc, frame, radius):
    if not os.path.exists(frame_path(cache.folder, desc["pieces"], frame)):
        return
    mesh = ensure_fragments_object(scene, domain, cache, stream, desc).data
    rest = np.empty(3 * len(mesh.vertices), np.float32)
    mesh.attributes["tsubu_rest"].data.foreach_get("vector", rest)
    element = np.empty(len(mesh.vertices), np.int32)
    mesh.attributes["tsubu_element"].data.foreach_get("value", element)

    def positions(f):
        path = frame_path(cache.folder, desc["pieces"], f)
        if not os.path.exists(path):
            return None
        poses = read_particles(path)
        return posed_fragments(rest.reshape(-1, 1, 3), element, np.asarray(poses["position"], np.float64),
                               np.asarray(poses["rotation"], np.float64)).reshape(-1, 3)
    mesh.vertices.foreach_set("co", positions(frame).astype(np.float32).ravel())
    set_mesh_velocity(mesh, cache, frame, positions)
    mesh.update()


def ensure_skin_object(scene, domain, stream, desc):
    """The body's own mesh (as the bake saw it: modifiers applied, UVs and materials kept) as a result
    object whose vertices the skin stream moves; the body itself stands in."""
    name = f"{domain.name}.{stream}"
    obj = bpy.data.objects.get(name)
    if obj is not None:
        return obj
    source = bpy.data.objects.get(desc.get("object", ""))
    if source is None or source.type != "MESH":
        return None
    evaluated = source.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = bpy.data.meshes.new_from_object(evaluated)
    mesh.name = name
    obj = ensure_object(scene, name, mesh)  # world coordinates: the object stays at the origin
    make_stand_in(source)
    return obj


def show_skin(scene, domain, cache, stream, desc, frame, radius):
    path = frame_path(cache.folder, stream, frame)
    obj = ensure_skin_object(scene, domain, stream, desc)
    if obj is None or not os.path.exists(path):
        return
    positions = read_particles(path)["position"]
    if len(positions) != len(obj.data.vertices):
        raise ValueError(f"{path}: {len(positions)} skin vertices for a mesh of {len(obj.data.vertices)}; "
                         "bake again after editing the body")
    obj.data.vertices.foreach_set("co", np.ascontiguousarray(positions, np.float32).reshape(-1))

    def positions_at(f):
        other = frame_path(cache.folder, stream, f)
        return np.asarray(read_particles(other)["position"], np.float64) if os.path.exists(other) else None
    set_mesh_velocity(obj.data, cache, frame, positions_at)
    obj.data.update()


def guard_volume(scene, domain, cache, stream, desc, frame):
    """Before Blender loads this frame's file: a damaged one is not loaded (the volume shows
    nothing), an intact one plays from the sequence again."""
    vol_obj = bpy.data.objects.get(f"{domain.name}.{stream}.vdb")
    if vol_obj is None or not isinstance(vol_obj.data, bpy.types.Volume):
        return
    volume = vol_obj.data
    problem = volume_problem(frame_path(cache.folder, stream, frame, "volume"))
    if problem:
        if volume.is_sequence or volume.filepath:
            volume.is_sequence = False
            volume.filepath = ""
        raise CorruptFileError(problem)
    if not volume.is_sequence:
        frames = cache.frames(stream)
        if frames:
            play_volume_sequence(volume, cache, stream, frames, folder=current_view(cache, stream))


def build_volume(scene, domain, cache, stream, desc):
    made = ensure_volume_objects(scene, domain, cache, stream, desc) is not None
    return made and "surface" in desc.get("grids", [])  # a liquid surface replaces the points in renders


def build_transforms(scene, domain, cache, stream, desc):
    apply_transforms(cache, stream)
    return False


def build_stand_in(scene, domain, cache, stream, desc):
    """The baked ground or pieces stand in for the object: it shows as a wireframe, unrendered."""
    make_stand_in(domain)
    return False


class StreamKind:
    """show: every frame change (after it); guard: before Blender evaluates the frame (for files
    Blender itself loads); build: once after a bake."""
    def __init__(self, show=None, build=None, guard=None):
        self.show, self.build, self.guard = show, build, guard


STREAM_KINDS = {
    "particles": StreamKind(show=show_particles),
    "heightfield": StreamKind(show=show_heightfield, build=build_stand_in),
    "fragments": StreamKind(show=show_fragments, build=build_stand_in),
    "pieces": StreamKind(),  # read through the fragments stream that names it
    "volume": StreamKind(build=build_volume, guard=guard_volume),
    "transforms": StreamKind(build=build_transforms),
    "table": StreamKind(),  # figures per frame (erosion's budget): read by tsubu.cache, shown on the panel
    "skin": StreamKind(show=show_skin),
}


def stream_kind(desc):
    kind = STREAM_KINDS.get(desc.get("kind"))
    if kind is None:
        raise ValueError(f"stream kind {desc.get('kind')!r} is not known to this Tsubu; update the add-on")
    return kind


PROBLEM = "Cache problem: "
_guard_problems = {}  # domain name -> what guard_frame found at the frame being shown


def guard_frame(scene, domain, frame):
    """Before the frame is evaluated: check the files Blender will load itself."""
    from .export import cache_folder
    cache = Cache(cache_folder(domain))
    problem = None
    if cache.exists():
        try:
            for stream, desc in cache.manifest()["streams"].items():
                kind = stream_kind(desc)
                if kind.guard:
                    kind.guard(scene, domain, cache, stream, desc, frame)
        except (CorruptFileError, OSError, KeyError, ValueError) as e:
            problem = str(e)
    _guard_problems[domain.name] = problem


def load_frame(scene, domain, frame):
    """Show the domain's streams at a frame; returns the problem if the cache is damaged. The
    domain's status names it, and clears when a whole frame is shown."""
    from .export import cache_folder
    cache = Cache(cache_folder(domain))
    if not cache.exists():
        return None
    try:
        m = cache.manifest()
        radius = float(m["parameters"].get("particle_radius", 0.01))
        for stream, desc in m["streams"].items():
            kind = stream_kind(desc)
            if kind.show:
                kind.show(scene, domain, cache, stream, desc, frame, radius)
        problem = _guard_problems.get(domain.name)
    except (CorruptFileError, OSError, KeyError, ValueError) as e:
        problem = str(e)
    if problem:
        domain.tsubu.status = PROBLEM + problem
    elif domain.tsubu.status.startswith(PROBLEM):
        domain.tsubu.status = ""
    return problem


def build_results(scene, domain):
    """After a bake: volume objects, keyframes, stand-ins, and the current frame's streams."""
    from .export import cache_folder
    cache = Cache(cache_folder(domain))
    m = cache.manifest()
    surfaces = False
    for stream, desc in m["streams"].items():
        kind = stream_kind(desc)
        if kind.build:
            surfaces |= kind.build(scene, domain, cache, stream, desc)
    effect = properties.role_of(domain)[0].effect
    for obj in scene.objects:  # the domain box and the liquid's sources: the liquid renders, not they
        s, role = properties.role_of(obj)
        if role is not None and s.effect == effect and (obj == domain and role.name == "domain"
                                                        or role.name in SOURCE_ROLES):
            make_stand_in(obj)
    guard_frame(scene, domain, scene.frame_current)
    load_frame(scene, domain, scene.frame_current)
    for stream, desc in m["streams"].items():  # with a surface, the points are a viewport aid only
        obj = bpy.data.objects.get(f"{domain.name}.{stream}")
        if desc["kind"] == "particles" and obj is not None:
            obj.hide_render = surfaces


def reload_surface(scene, domain):
    """After the surface files changed under Blender (Rebuild Surface): the volume object reads them
    again, and a surface made where there was none gets its objects."""
    from .export import cache_folder
    cache = Cache(cache_folder(domain))
    for stream, desc in cache.manifest()["streams"].items():
        if desc["kind"] != "volume" or "particles" not in desc:
            continue
        volume_object = bpy.data.objects.get(f"{domain.name}.{stream}.vdb")
        if volume_object is None:
            build_results(scene, domain)
            return
        play_through_new_view(volume_object, cache, stream)
    guard_frame(scene, domain, scene.frame_current)
    scene.frame_set(scene.frame_current)


def remove_results(domain):
    effect = properties.role_of(domain)[0].effect
    for scene in domain.users_scene:
        restore_stand_ins(scene, domain)
        for obj in scene.objects:
            s, _ = properties.role_of(obj)
            if s is not None and s.effect == effect:
                remove_baked_keys(obj)
    for obj in list(bpy.data.objects):
        if obj.name.startswith(domain.name + ".") and obj.users_collection and \
                any(c.name == COLLECTION for c in obj.users_collection):
            data = obj.data
            bpy.data.objects.remove(obj)
            if data is not None and data.users == 0:
                if isinstance(data, bpy.types.Mesh):
                    bpy.data.meshes.remove(data)
                elif isinstance(data, bpy.types.Volume):
                    bpy.data.volumes.remove(data)


@persistent
def before_frame_change(scene, *args):
    for domain in domains(scene):
        guard_frame(scene, domain, scene.frame_current)


@persistent
def on_frame_change(scene, *args):
    for domain in domains(scene):
        load_frame(scene, domain, scene.frame_current)


HANDLERS = ((bpy.app.handlers.frame_change_pre, before_frame_change),
            (bpy.app.handlers.frame_change_post, on_frame_change))


def register():
    for handlers, fn in HANDLERS:
        if fn not in handlers:
            handlers.append(fn)


def unregister():
    # by name too: a handler left by an earlier load of this module must go as well
    for handlers, fn in HANDLERS:
        for h in list(handlers):
            if h is fn or (getattr(h, "__module__", None) == fn.__module__ and h.__name__ == fn.__name__):
                handlers.remove(h)
