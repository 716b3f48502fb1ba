"""Rebuild Surface: the surface .vdb frames made again from a cache's particles with new surface
settings, without simulating again (what FLIP Fluids users call decoupled baking).

    tsubu.rebuild_surface("cache/Domain", {"surface_smoothing": 8})
    python3 -m tsubu surface cache/Domain --set surface_smoothing=8

The surface is made by the same C function the bake uses (ts_surface_level_set), so a rebuild with
the bake's own settings writes the bake's own files, byte for byte (tested). A cache baked without
a surface (write_surface off: the fastest bake) gets one. The new settings go into the manifest, so
the cache says what its files are. Frames are replaced one by one, each written whole (atomically):
a rebuild that fails or is cancelled leaves every frame either the old surface or the new one.
"""
import os

from . import schema as schemas
from ._native import _core
from .cache import Cache, frame_path, read_particles
from .errors import CancelledError, ValidationError

SETTINGS = ("surface_method", "surface_radius_scale", "surface_voxel_ratio", "surface_smoothing")
STREAM = "surface"


def surface_source(manifest):
    """The particle stream a surface is made from, for an effect that can have one (else None)."""
    streams = manifest["streams"]
    if streams.get(STREAM, {}).get("particles"):
        return streams[STREAM]["particles"]
    effect = schemas.get(manifest["effect"])  # caches from before streams named their particles, or no surface
    if all(effect.param(name) is not None for name in SETTINGS + ("write_surface",)):
        return next((s for s, d in streams.items() if d["kind"] == "particles"), None)
    return None


def rebuild_surface(folder, settings=None, progress=None, cancelled=None):
    """Write the surface of every cached frame with the manifest's surface settings updated by
    `settings` ({name: value} of SETTINGS); returns the frames written. progress(frame, done, total)
    is called after each frame; cancelled() -> True stops between frames (CancelledError)."""
    frames = []
    for frame, done, total in rebuild_steps(folder, settings):
        frames.append(frame)
        if progress is not None:
            progress(frame, done, total)
        if cancelled is not None and done < total and cancelled():
            raise CancelledError(f"{folder}: surface rebuilt up to frame {frame}; the later frames keep the old one")
    return frames


def rebuild_steps(folder, settings=None):
    """rebuild_surface one frame at a time: checks everything first, then yields (frame, done, total)
    after writing each frame (the add-on's operator runs one step per timer tick)."""
    cache = Cache(folder)
    m = cache.manifest()
    source = surface_source(m)
    if source is None:
        raise ValidationError([f"the {m['effect']} effect makes no surface from particles"], cache.folder)
    settings = dict(settings or {})
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise ValidationError([f"'{name}' is not a surface setting (these are: {', '.join(SETTINGS)})"
                               for name in unknown], "rebuild surface")
    settings = schemas.get(m["effect"]).validate(settings, partial=True, context="rebuild surface")
    params = dict(m["parameters"], **settings)
    frames = cache.frames(source)
    if not frames:
        raise ValidationError([f"no frames of '{source}' to make a surface from; bake first"], cache.folder)
    if STREAM not in m["streams"]:  # baked without a surface: it gets one
        cache.update(streams=dict(m["streams"], **{STREAM: {"kind": "volume", "grids": ["surface"],
                                                             "particles": source}}))
    os.makedirs(os.path.join(cache.folder, STREAM), exist_ok=True)
    for done, frame in enumerate(frames, start=1):
        positions = read_particles(frame_path(cache.folder, source, frame))["position"]
        grid = _core.surface_level_set(positions, params["particle_radius"], params["surface_radius_scale"],
                                       params["surface_voxel_ratio"], params["surface_smoothing"],
                                       params.get("surface_method", "spheres"))  # caches from before the method
        _core.write_vdb(frame_path(cache.folder, STREAM, frame, "volume"), [grid])
        if done == 1:  # from the first new frame on, the manifest names the settings the files are made with
            cache.update(parameters=dict(params, write_surface=True))
        yield frame, done, len(frames)
