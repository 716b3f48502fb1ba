"""The one place that branches on Blender's version (3.4, 4.2/4.5 LTS, 5.0 and 5.2).

Everything else in tsubu.blender uses API common to all supported versions
or goes through these helpers.
"""
import bpy

VERSION = bpy.app.version


def new_group_socket(tree, name, in_out, socket_type):
    """Add an input or output socket to a node group (4.0 moved these to tree.interface)."""
    if hasattr(tree, "interface"):
        return tree.interface.new_socket(name=name, in_out=in_out, socket_type=socket_type)
    sockets = tree.inputs if in_out == "INPUT" else tree.outputs
    return sockets.new(socket_type, name)


def principled_inputs(node):
    """{role: socket} of the Principled BSDF inputs we set (4.0 renamed several)."""
    names = {"base_color": "Base Color", "roughness": "Roughness", "ior": "IOR",
             "transmission": "Transmission Weight" if "Transmission Weight" in node.inputs else "Transmission"}
    return {k: node.inputs[v] for k, v in names.items()}


def set_polygon_loop_totals(mesh, totals):
    """Polygon sizes for a mesh built with foreach_set: Blender 4 derives them from loop_start."""
    if VERSION < (4, 0, 0):
        mesh.polygons.foreach_set("loop_total", totals)


def set_modifier_input(modifier, name, value):
    """Set a Geometry Nodes modifier's input by its socket name: identifiers are Input_N before 4.0,
    Socket_N after; Blender 5.2 keeps the values in modifier.properties.inputs, not as ID properties."""
    tree = modifier.node_group
    socket = tree.interface.items_tree[name] if hasattr(tree, "interface") else tree.inputs[name]
    if hasattr(modifier, "properties"):
        getattr(modifier.properties.inputs, socket.identifier).value = value
    else:
        modifier[socket.identifier] = value


def action_fcurves(obj):
    """The F-curves of the object's action (a collection with .remove), or None. Blender 4.4 made
    actions layered with slots; 5.0 dropped Action.fcurves for the slot's channel bag."""
    ad = obj.animation_data
    action = ad.action if ad is not None else None
    if action is None:
        return None
    if not hasattr(action, "layers") or hasattr(action, "fcurves") and not action.layers:
        return action.fcurves
    for layer in action.layers:
        for strip in layer.strips:
            bag = strip.channelbag(ad.action_slot) if ad.action_slot is not None else None
            if bag is not None:
                return bag.fcurves
    return None
