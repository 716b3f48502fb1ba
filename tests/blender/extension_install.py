"""Install the built extension (dist/tsubu-<version>.zip) into a clean Blender and bake with it.

    BLENDER_USER_RESOURCES=<empty folder> <bpy python> tests/blender/extension_install.py dist/tsubu-<version>.zip

Run by tests/blender/extension.sh in bpy 4.2, 5.0 and 5.2, once inside a system that has none of the
core's shared libraries. It installs the zip as Install from Disk does, enables it, checks that the
core comes from the wheel the extension carried (never from this source tree), bakes a small water
scene with the real solver through the Bake operator and reads the cache back. Not a harness test:
the source tree must stay off sys.path here.
"""
import os
import sys

import bpy  # noqa: E402

zip_path = os.path.abspath(sys.argv[-1])
user = os.environ["BLENDER_USER_RESOURCES"]
source_tree = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "addon"))
assert source_tree not in [os.path.abspath(p) for p in sys.path]

assert bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                enable_on_install=True) == {"FINISHED"}
tsubu = sys.modules.get("bl_ext.user_default.tsubu")
assert tsubu is not None, "the extension did not enable"
assert tsubu.__file__.startswith(user), tsubu.__file__
assert not tsubu.CORE_ERROR, tsubu.CORE_ERROR
core = sys.modules[tsubu.__name__ + "._native"]._core
assert "/tsubu_core/" in core.__file__ and core.__file__.startswith(user), core.__file__
assert "tsubu" not in sys.modules, "the source tree's tsubu was imported"


def box(name, lo, hi):
    mesh = bpy.data.meshes.new(name)
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    verts = [(x, y, z) for x in (x0, x1) for y in (y0, y1) for z in (z0, z1)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh.from_pydata(verts, [], faces)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def set_role(obj, role_id):
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tsubu.role_set(role_id=role_id) == {"FINISHED"}


domain = box("Domain", (0, 0, 0), (0.4, 0.4, 0.4))
set_role(domain, "water.domain")
domain.tsubu.cache_dir = os.path.join(user, "cache")
domain.tsubu.use_scene_frames = False
domain.tsubu.frame_start, domain.tsubu.frame_end = 1, 4
set_role(box("Water", (0.05, 0.05, 0.2), (0.35, 0.35, 0.35)), "water.fluid")
bpy.context.view_layer.objects.active = domain
assert bpy.ops.tsubu.bake() == {"FINISHED"}, domain.tsubu.status
cache = tsubu.Cache(os.path.join(user, "cache", "Domain"))
assert cache.manifest()["status"] == "complete", cache.manifest()
start, points = (cache.read_particles("fluid", f)["position"] for f in (1, 4))
assert len(points) == len(start) > 50, (len(start), len(points))
assert points[:, 2].mean() < start[:, 2].mean() - 0.01 and points[:, 2].min() > -0.01, "the water did not fall"
bpy.context.scene.frame_set(4)
print(f"blender {'.'.join(map(str, bpy.app.version))} extension: installed from {os.path.basename(zip_path)}, "
      f"core from {os.path.relpath(core.__file__, user)}, baked {len(points)} particles")
sys.stdout.flush()
os._exit(0)
