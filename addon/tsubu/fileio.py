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


def write_json(path, obj):
    write_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")


def read_json(path, what):
    """Parse a JSON file; a missing file is OSError, a damaged one CorruptFileError naming it."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptFileError(f"{path}: not a valid {what} (JSON error: {e}); fix or delete the file") from None
