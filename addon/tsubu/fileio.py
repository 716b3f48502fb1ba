"""Small file helpers shared by presets, scene descriptions and caches."""
import json
import os
import tempfile

from .errors import CorruptFileError


def write_atomic(path, data):
    """Write bytes or text to path through a temporary file and a rename, so
    a reader never sees half a file and a crash never leaves one."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as open() would make it: mkstemp's are 0600
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _umask():
    mask = os.umask(0o022)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def write_json(path, obj):
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


# Tsubu's JSON files hold settings and names (meshes are in .npz files): anything larger is not one.
MAX_JSON_BYTES = 64 * 1024 * 1024
MAX_NUMBER_DIGITS = 40


def _bounded_int(text):
    if len(text) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def read_json(path, what, limit=MAX_JSON_BYTES):
    """Parse a JSON file; a missing file is OSError, a damaged or hostile one (too large, nested too
    deeply, numbers of hundreds of digits) CorruptFileError naming it."""
    with open(path, "rb") as f:
        raw = f.read(limit + 1)
    if len(raw) > limit:
        raise CorruptFileError(f"{path}: larger than {limit // (1024 * 1024)} MB, too large for a {what}; "
                               "is it the right file?")
    try:
        return json.loads(raw.decode("utf-8"), parse_int=_bounded_int)
    except (UnicodeDecodeError, ValueError) as e:  # json.JSONDecodeError is a ValueError
        raise CorruptFileError(f"{path}: not a valid {what} (JSON error: {e}); fix or delete the file") from None
    except RecursionError:
        raise CorruptFileError(f"{path}: not a valid {what} (nested too deeply); fix or delete the file") from None
