"""Maps given as image files: every PNG the standard allows decodes to the grey a Blender image of it gives
(colour types, bit depths 1-16, palettes, Adam7, odd sizes), bottom row first; damaged files are refused by
name; a brittleness map given as a path (relative to the scene file) bakes the same bytes as its pixels."""
import os

import numpy as np
import pytest

import tsubu
from png_writer import encode, grey
from tsubu import demos
from tsubu._native import _core

rng = np.random.default_rng(7)
CASES = [(colour, depth) for colour, depths in ((0, (1, 2, 4, 8, 16)), (2, (8, 16)), (3, (1, 2, 4, 8)),
                                                (4, (8, 16)), (6, (8, 16))) for depth in depths]


@pytest.mark.parametrize("interlace", [False, True])
@pytest.mark.parametrize("colour,depth", CASES)
def test_every_colour_type_and_depth_decodes_exactly(tmp_path, colour, depth, interlace):
    for height, width in ((1, 1), (7, 13), (17, 9)):
        channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
        palette = rng.integers(0, 256, (2 ** depth, 3)) if colour == 3 else None
        samples = rng.integers(0, 2 ** depth, (height, width, channels))
        path = tmp_path / f"c{colour}d{depth}i{int(interlace)}_{height}x{width}.png"
        path.write_bytes(encode(samples, colour, depth, interlace, palette))
        got = _core.read_png(str(path))
        assert got.shape == (height, width) and got.dtype == np.float32
        np.testing.assert_allclose(got, grey(samples, colour, depth, palette), rtol=0, atol=2e-7)


def test_rows_come_bottom_first(tmp_path):
    """A PNG stores its top row first; Blender's pixels (and the map's v) start at the bottom."""
    samples = np.zeros((4, 3, 1), np.uint8)
    samples[0] = 255  # top row white
    (tmp_path / "top_white.png").write_bytes(encode(samples, 0, 8))
    got = _core.read_png(str(tmp_path / "top_white.png"))
    assert (got[-1] == 1.0).all() and (got[:-1] == 0.0).all()


def test_damaged_and_foreign_files_are_refused_by_name(tmp_path):
    good = encode(rng.integers(0, 256, (16, 16, 3)), 2, 8)
    crc_flipped = bytearray(good)
    crc_flipped[40] ^= 0x10
    cases = {"empty.png": b"", "text.png": b"not an image at all", "truncated.png": good[:-30],
             "crc.png": bytes(crc_flipped), "no_end.png": good[:good.rindex(b"IEND") - 4]}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=name):
            _core.read_png(str(tmp_path / name))
    with pytest.raises(OSError, match="missing.png"):
        _core.read_png(str(tmp_path / "missing.png"))
    for cut in range(0, len(good), 7):  # every truncation: an error, never a crash or garbage
        (tmp_path / "cut.png").write_bytes(good[:cut])
        with pytest.raises(ValueError):
            _core.read_png(str(tmp_path / "cut.png"))


def map_scene(tmp_path, image_name):
    desc = demos.fracture_scene(frames=3, element_count=300, element_radius=0.0)
    wall = desc.objects[0]
    del wall.arrays["brittleness"]
    wall.params["brittleness_image"] = image_name
    return desc


def test_a_brittleness_map_from_a_png_path_is_the_same_as_its_pixels(tmp_path):
    """The paper's fig. 1 a map written as a PNG the usual way (top row first) bakes exactly as the array."""
    pixels = demos.lower_half_hard(64)
    samples = np.round(pixels[::-1] * 255).astype(np.uint8)[..., None]
    os.makedirs(tmp_path / "scenes")
    (tmp_path / "scenes" / "map.png").write_bytes(encode(samples, 0, 8))
    path = map_scene(tmp_path, "map.png").save(str(tmp_path / "scenes" / "wall.json"))
    os.chdir(tmp_path)  # the relative path is found beside the scene file, not in the working directory
    loaded = tsubu.SceneDescription.load(path).validate()
    np.testing.assert_array_equal(loaded.objects[0].arrays["brittleness"], pixels)
    by_path = tsubu.bake(path, str(tmp_path / "by_path"))
    as_array = demos.fracture_scene(frames=3, element_count=300, element_radius=0.0)
    tsubu.bake(as_array, str(tmp_path / "as_array"))
    for f in by_path.frames("elements"):
        name = os.path.join("elements", f"elements_{f:06d}.tspf")
        assert (tmp_path / "by_path" / name).read_bytes() == (tmp_path / "as_array" / name).read_bytes()


def test_a_missing_or_damaged_map_file_names_the_object_and_file(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    for image, words in ((str(tmp_path / "nowhere.png"), "nowhere.png: cannot open"),
                         (str(tmp_path / "broken.png"), "broken.png")):
        with pytest.raises(tsubu.ValidationError) as e:
            tsubu.bake(map_scene(tmp_path, image), str(tmp_path / "cache"))
        assert "Wall" in str(e.value) and words in str(e.value), str(e.value)
        assert not (tmp_path / "cache").exists()
