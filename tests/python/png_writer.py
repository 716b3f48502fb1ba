"""A small PNG writer for the tests: every colour type and bit depth, each row filtered with one of the five
filters in turn (so the reader undoes all of them), optionally Adam7-interlaced. Samples are given top row
first, as a PNG stores them."""
import struct
import zlib

import numpy as np

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1))
LUMINANCE = np.array([0.2126, 0.7152, 0.0722], np.float32)


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _pack_row(samples, depth):
    if depth == 16:
        return b"".join(struct.pack(">H", int(s)) for s in samples)
    if depth == 8:
        return bytes(int(s) for s in samples)
    bits = "".join(format(int(s), f"0{depth}b") for s in samples)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def _filter(row, prior, bpp, kind):
    out = bytearray([kind])
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prior[i] if prior is not None else 0
        c = prior[i - bpp] if prior is not None and i >= bpp else 0
        predictor = (0, a, b, (a + b) // 2, _paeth(a, b, c))[kind]
        out.append((x - predictor) % 256)
    return bytes(out)


def encode(samples, colour, depth, interlace=False, palette=None):
    """PNG bytes of samples (height, width, channels) of integers, top row first."""
    samples = np.asarray(samples)
    samples = samples.reshape(samples.shape[0], samples.shape[1], CHANNELS[colour])
    height, width = samples.shape[:2]
    bpp = max(1, CHANNELS[colour] * depth // 8)
    raw, kind = bytearray(), 0
    for row0, col0, row_step, col_step in (ADAM7 if interlace else ((0, 0, 1, 1),)):
        sub = samples[row0::row_step, col0::col_step]
        if sub.size == 0:
            continue
        prior = None
        for r in range(sub.shape[0]):
            row = _pack_row(sub[r].reshape(-1), depth)
            raw += _filter(row, prior, bpp, kind % 5)
            prior, kind = row, kind + 1
    head = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 1 if interlace else 0)
    out = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", head)
    if palette is not None:
        out += _chunk(b"PLTE", bytes(np.asarray(palette, np.uint8).reshape(-1)))
    z = zlib.compress(bytes(raw), 9)
    out += _chunk(b"IDAT", z[: len(z) // 2]) + _chunk(b"IDAT", z[len(z) // 2:])  # one stream over two chunks
    return out + _chunk(b"tEXt", b"Comment\0made by the tests") + _chunk(b"IEND", b"")


def grey(samples, colour, depth, palette=None):
    """What a reader must make of them: grey in [0, 1], bottom row first (float32, as the add-on)."""
    samples = np.asarray(samples)
    if colour == 3:
        lum = ((np.asarray(palette, np.float32) / 255.0) @ LUMINANCE).astype(np.float32)
        g = lum[samples.reshape(samples.shape[0], samples.shape[1])]
    else:
        s = samples.reshape(samples.shape[0], samples.shape[1], CHANNELS[colour]).astype(np.float32)
        s = s / float(2 ** depth - 1)
        g = s[..., 0] if CHANNELS[colour] < 3 else s[..., :3] @ LUMINANCE
    return np.ascontiguousarray(g[::-1], np.float32)
