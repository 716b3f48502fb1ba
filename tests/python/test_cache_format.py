"""The particle cache format, checked byte for byte against docs/cache-format.md
by an independent reader written here from the document alone."""
import os
import struct
import zlib

import numpy as np
import pytest

from tsubu import _core
from tsubu.errors import CorruptFileError

MAGIC = b"\x89TSUBU\r\n"
TYPES = {1: np.float32, 2: np.int32, 3: np.uint32, 4: np.float64, 5: np.uint8}


def read_by_the_document(data):
    """Decode a frame following docs/cache-format.md, checking every field."""
    assert data[:8] == MAGIC
    version, n_attr, count, frame, flags, time, data_size = struct.unpack_from("<IIQiIdQ", data, 8)
    assert version == 1 and flags == 0
    table_end = 60 + 64 * n_attr
    assert data[48:60] == bytes(12)  # reserved
    assert struct.unpack_from("<I", data, table_end)[0] == zlib.crc32(data[:table_end])
    blob = data[table_end + 4: table_end + 4 + data_size]
    assert struct.unpack_from("<I", data, table_end + 4 + data_size)[0] == zlib.crc32(blob)
    assert len(data) == table_end + 8 + data_size
    out = {}
    for i in range(n_attr):
        e = data[60 + 64 * i: 124 + 64 * i]
        name = e[:32].rstrip(b"\0").decode()
        type_code, components, encoding, pad = e[32:36]
        crc, offset, size = struct.unpack_from("<IQQ", e, 36)
        assert pad == 0 and e[56:64] == bytes(8)
        dtype = np.dtype(TYPES[type_code])
        raw = zlib.decompress(blob[offset: offset + size])
        if encoding == 1:  # byte-shuffled: all first bytes, then all second bytes, ...
            raw = np.frombuffer(raw, np.uint8).reshape(dtype.itemsize, -1).T.tobytes()
        assert zlib.crc32(raw) == crc
        arr = np.frombuffer(raw, dtype)
        out[name] = arr.reshape(count, components) if components > 1 else arr
    return frame, time, count, out


def test_layout_matches_document(tmp_path):
    rng = np.random.default_rng(3)
    cols = {"position": rng.normal(size=(257, 3)).astype(np.float32), "id": np.arange(257, dtype=np.uint32),
            "mass": rng.random(257), "flag": (np.arange(257) % 3).astype(np.uint8),
            "index": -np.arange(257, dtype=np.int32)}
    path = tmp_path / "p_000007.tspf"
    _core.write_frame(str(path), 7, 0.25, list(cols.items()))
    frame, time, count, got = read_by_the_document(path.read_bytes())
    assert (frame, time, count) == (7, 0.25, 257)
    for k, v in cols.items():
        assert got[k].dtype == v.dtype and np.array_equal(got[k], v)
    # and the extension reads back exactly what was written
    frame, time, count, back = _core.read_frame(str(path))
    assert list(back) == list(cols) and all(np.array_equal(back[k], cols[k]) for k in cols)


def test_shuffle_compresses_smooth_floats(tmp_path):
    x = np.linspace(0, 1, 100_000, dtype=np.float32)
    pos = np.stack([x, x * 0.5, np.ones_like(x)], axis=1)
    path = tmp_path / "f.tspf"
    _core.write_frame(str(path), 1, 0.0, [("position", pos)])
    assert os.path.getsize(path) < pos.nbytes / 3


def test_damaged_files_name_the_file(tmp_path):
    path = tmp_path / "fluid_000003.tspf"
    _core.write_frame(str(path), 3, 0.1, [("position", np.ones((50, 3), np.float32))])
    good = path.read_bytes()
    for cut in (0, 5, 59, 100, len(good) - 1):
        path.write_bytes(good[:cut])
        with pytest.raises(CorruptFileError, match="fluid_000003.tspf"):
            _core.read_frame(str(path))
    for i in range(0, len(good), 7):
        bad = bytearray(good)
        bad[i] ^= 0x10
        path.write_bytes(bytes(bad))
        with pytest.raises(CorruptFileError, match="fluid_000003.tspf"):
            _core.read_frame(str(path))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    with pytest.raises(CorruptFileError, match="not a Tsubu"):
        _core.read_frame(str(path))
    with pytest.raises(OSError, match="missing.tspf"):
        _core.read_frame(str(tmp_path / "missing.tspf"))


def test_bad_attributes_rejected(tmp_path):
    p = str(tmp_path / "x.tspf")
    with pytest.raises(TypeError, match="'velocity'"):
        _core.write_frame(p, 1, 0.0, [("velocity", np.zeros((3, 3), np.complex64))])
    with pytest.raises(ValueError, match="rows"):
        _core.write_frame(p, 1, 0.0, [("a", np.zeros(3, np.float32)), ("b", np.zeros(4, np.float32))])
    with pytest.raises(ValueError, match="name"):
        _core.write_frame(p, 1, 0.0, [("bad name", np.zeros(3, np.float32))])
    assert not os.path.exists(p)
