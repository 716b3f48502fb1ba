"""The fracture effect in real Blender: the demo wall (fewer elements, one
shot) is built from its description, with its brittleness map as a Blender
image, baked with the Bake operator and played back: the pieces mesh
exists with an inner fracture material, pieces in the upper half move, the
hard lower half does not, and the projectile is keyed.

Run: blender -b --factory-startup --python tests/blender/test_fracture.py
 or: .venv/bpy-4.5/bin/python tests/blender/test_fracture.py
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402  (sets sys.path)

import bpy  # noqa: E402
import addon_utils  # noqa: E402
import numpy as np  # noqa: E402

TMP = tempfile.mkdtemp(prefix="tsubu-blender-fracture-")


def corners(obj):
    co = np.empty(len(obj.data.vertices) * 3, np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def test_demo_wall_breaks_above_and_holds_below():
    assert addon_utils.enable("tsubu", default_set=True) is not None
    try:
        from tsubu import demos
        from tsubu.blender.scene_import import create_objects
        desc = demos.fracture_scene(frames=12, shots=((0.0, 0.8, 2),), element_count=300, element_radius=0.0, speed=5.0)
        scene = bpy.context.scene
        scene.frame_start, scene.frame_end, scene.render.fps = 1, 12, 24
        made = create_objects(desc)
        wall = made["Wall"]
        assert wall.tsubu.fracture_breakable.brittleness_image is not None
        wall.tsubu.cache_dir = TMP
        bpy.context.view_layer.objects.active = wall
        assert bpy.ops.tsubu.bake() == {"FINISHED"}, wall.tsubu.status
        pieces = bpy.data.objects["Wall.fragments"]
        assert len(pieces.data.materials) == 2 and pieces.data.materials[1].name.startswith("Tsubu Fracture")
        assert wall.hide_render and not pieces.hide_render
        scene.frame_set(1)
        rest = corners(pieces)
        # frame 1 is the wall settled on the ground under its own weight: pressed into it by a millimetre or so
        assert rest[:, 2].min() > -2e-3 and rest[:, 2].max() < 1.0 + 1e-4, (rest[:, 2].min(), rest[:, 2].max())
        scene.frame_set(12)
        moved = np.linalg.norm(corners(pieces) - rest, axis=1)
        upper, lower = rest[:, 2] > 0.6, rest[:, 2] < 0.35
        assert moved[upper].max() > 0.05, "nothing in the upper half moved"
        assert np.median(moved[lower]) < 0.3 * np.median(moved[upper]), ("the hard lower half moved", np.median(moved[lower]), moved[upper].max())
        # motion blur: the pieces carry their corners' velocity, central differences of the cached poses
        scene.frame_set(9)
        before = corners(pieces)
        scene.frame_set(11)
        after = corners(pieces)
        scene.frame_set(10)
        velocity = np.empty(len(pieces.data.vertices) * 3, np.float32)
        pieces.data.attributes["velocity"].data.foreach_get("vector", velocity)
        expected = (after - before) * 24 / 2
        assert np.abs(expected).max() > 0.5 and np.allclose(velocity.reshape(-1, 3), expected, atol=1e-3), \
            np.abs(velocity.reshape(-1, 3) - expected).max()
        ball = made["Ball.0"]
        assert ball.animation_data and ball.animation_data.action
        # Export Scene, baked outside Blender, gives the Bake button's bytes (the image's pixels go along)
        exported = os.path.join(TMP, "exported", "wall_scene.json")
        assert bpy.ops.tsubu.scene_export(filepath=exported) == {"FINISHED"}
        import tsubu
        shell = tsubu.bake(tsubu.SceneDescription.load(exported), os.path.join(TMP, "shell"))
        assert shell.frames("elements") == list(range(1, 13))
        for f in (1, 6, 12):
            name = os.path.join("elements", f"elements_{f:06d}.tspf")
            with open(os.path.join(TMP, "Wall", name), "rb") as a, open(os.path.join(TMP, "shell", name), "rb") as b:
                assert a.read() == b.read(), name
        assert abs(ball.matrix_world.translation.y + 0.4) > 0.05, ball.matrix_world.translation  # it was fired
    finally:
        addon_utils.disable("tsubu", default_set=True)


def test_png_maps_read_as_blender_reads_them():
    """A brittleness map given as a PNG path reads as the same image loaded in Blender does (the add-on's
    grey of its pixels), bottom row first, for PNGs written by libpng (Blender's own save) and by the tests'
    writer (every colour type, 1-16 bits, palettes, Adam7)."""
    from png_writer import encode
    from tsubu._native import _core
    from tsubu.blender.export import image_grey
    rng = np.random.default_rng(3)
    made = bpy.data.images.new("made", 37, 23)
    pixels = rng.random((23, 37, 4)).astype(np.float32)
    pixels[..., 3] = 1.0
    pixels[-1] = 1.0  # the top row white
    made.pixels.foreach_set(pixels.reshape(-1))
    made.filepath_raw = os.path.join(TMP, "blender_saved.png")
    made.file_format = "PNG"
    made.save()
    files = [made.filepath_raw]
    for colour, depth, interlace in ((0, 1, False), (0, 16, True), (2, 8, True), (3, 4, False), (4, 8, True),
                                     (6, 16, False), (6, 8, True)):
        channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
        palette = rng.integers(0, 256, (2 ** depth, 3)) if colour == 3 else None
        path = os.path.join(TMP, f"c{colour}_d{depth}_i{int(interlace)}.png")
        with open(path, "wb") as f:
            f.write(encode(rng.integers(0, 2 ** depth, (19, 26, channels)), colour, depth, interlace, palette))
        files.append(path)
    for path in files:
        image = bpy.data.images.load(path)
        image.colorspace_settings.name = "Non-Color"  # the stored values, as an 8-bit image's pixels are
        expected, got = image_grey(image), _core.read_png(path)
        assert got.shape == expected.shape, (path, got.shape, expected.shape)
        assert np.abs(got - expected).max() < 2e-5, (path, np.abs(got - expected).max())
    saved = _core.read_png(files[0])
    assert (saved[-1] > 0.999).all() and np.abs(saved[:-1] - image_grey(made)[:-1]).max() < 1.0 / 255 + 1e-6


harness.run(globals(), "fracture")
