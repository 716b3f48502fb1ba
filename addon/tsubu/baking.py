"""tsubu.bake: run an effect's solver from a scene description into a cache folder.

The shared parts live here: validation before anything is written, the
manifest and its status, resume from the last whole frame, progress and
cancel (a progress callback returning True, or Ctrl-C), and leaving every
frame already written intact whatever happens. Each effect registers a
Runner: the streams it writes and a function that calls its C solver.
"""
import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .cache import Cache, version as cache_version
from .errors import CancelledError, ValidationError
from .scene import SceneDescription


@dataclass
class Progress:
    frame: int
    frame_start: int
    frame_end: int
    fraction: float  # of the whole bake, 0..1
    message: str = ""


@dataclass(frozen=True)
class Runner:
    streams: Callable   # (description) -> {stream: {"kind": ..., ...}}
    # (description, cache, report, first_frame, ready) -> None; report(Progress) -> True to cancel. The runner
    # calls ready() once every check passed (its solver's own included) and before it writes anything.
    run: Callable


RUNNERS = {}


def register_runner(effect, runner):
    RUNNERS[effect] = runner


# Wall-clock seconds between the solver's checkpoints (the first and last frame always get one).
# A resume starts from the last checkpoint and bakes the frames after it again, to the same bytes.
CHECKPOINT_SECONDS = 30.0


def core_runner(streams, solver_input, core_bake):
    """The Runner of an effect whose solver is a _core.<effect>_bake function taking
    (settings, objects) from solver_input(description) and the frame loop's arguments."""
    def run(desc, cache, report, first_frame, ready, checkpoint_seconds=None):
        settings, objects = solver_input(desc)

        def progress(frame, start, end, fraction):
            return report(Progress(frame, start, end, fraction))

        return core_bake(settings, objects, cache.folder, desc.frame_start, desc.frame_end, desc.fps,
                         first_frame=first_frame, max_substeps=desc.parameters["max_substeps"], progress=progress,
                         checkpoint_seconds=CHECKPOINT_SECONDS if checkpoint_seconds is None else checkpoint_seconds,
                         ready=ready)
    return Runner(streams=streams, run=run)


def scene_digest(description):
    """A hash of everything that decides the result: resume only continues the same scene."""
    h = hashlib.sha256()
    head = {k: getattr(description, k) for k in ("effect", "parameters", "frame_start", "frame_end", "fps", "seed")}
    h.update(json.dumps(head, sort_keys=True).encode())
    for o in description.objects:
        h.update(json.dumps([o.name, o.role, o.params], sort_keys=True).encode())
        for a in (o.vertices, o.triangles, o.matrices, *[o.arrays[k] for k in sorted(o.arrays)]):
            if a is not None:
                h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def bake(description, cache_dir, progress=None, resume=False, checkpoint_seconds=None):
    """Bake description (a SceneDescription or the path of a saved one) into cache_dir.

    progress(Progress) may return True to cancel; Ctrl-C cancels too. Either
    raises CancelledError with the frames already written intact (bake again
    with resume=True to go on). checkpoint_seconds: wall-clock seconds between
    the solver's saved states, what a resume starts from (default 30; 0: every
    frame). Returns the Cache; its manifest's "stats" hold the bake's figures."""
    if isinstance(description, (str, os.PathLike)):
        description = SceneDescription.load(os.fspath(description))
    description.validate()
    runner = RUNNERS.get(description.effect)
    if runner is None:
        raise ValidationError([f"the {description.effect} solver is not part of this Tsubu build"], "bake")
    options = {}
    if checkpoint_seconds is not None:
        if isinstance(checkpoint_seconds, bool) or not isinstance(checkpoint_seconds, (int, float)) \
                or not math.isfinite(checkpoint_seconds) or checkpoint_seconds < 0:
            raise ValidationError([f"checkpoint_seconds must be a number of seconds, 0 or more, got "
                                   f"{checkpoint_seconds!r}"], "bake")
        options["checkpoint_seconds"] = float(checkpoint_seconds)
    cache = Cache(cache_dir)
    holder = cache.baking_process()
    if holder is not None and holder != os.getpid():
        raise ValidationError([f"{cache.folder}: process {holder} is baking into this folder now; wait for it, "
                               "cancel it, or bake into another folder"], "bake")
    digest = scene_digest(description)
    first = description.frame_start
    if resume and cache.exists():
        m = cache.manifest()
        if m["effect"] != description.effect or m.get("scene_digest") != digest:
            raise ValidationError([f"{cache.folder} holds a bake of a different scene or different settings; "
                                   "bake from the start instead of resuming"], "resume")
        if m.get("tsubu_version") != cache_version():
            raise ValidationError([f"{cache.folder} was baked by Tsubu {m.get('tsubu_version')}, this is "
                                   f"{cache_version()}: a resumed bake would mix the two versions' results; bake from "
                                   "the start (the frames baked so far stay until then)"], "resume")
        if cache.has_old_checkpoint():
            raise ValidationError([f"{cache.folder} was baked by an earlier Tsubu whose saved state this version cannot "
                                   "resume from; bake from the start (the frames baked so far stay until then)"],
                                  "resume")
        # from the checkpoint, which may be a few frames behind the outputs (the solvers write one
        # about every half minute): the frames after it are baked again, to the same bytes
        last, saved = cache.last_whole_frame(), cache.checkpoint_frame()
        if last is not None and saved is not None:
            first = min(last, saved)
        if first == description.frame_end and m["status"] == "complete":
            return cache
        if first == description.frame_start:
            resume = False
    else:
        resume = False
    streams = runner.streams(description)
    started = []

    def ready():
        """Every check passed, the solver's own too: only now is the old cache replaced."""
        if not resume:
            cache.create(description.effect, description.parameters, description.frame_start, description.frame_end,
                         description.fps, description.seed, streams, digest)
        else:
            cache.update(status="baking", message="")
        cache.lock()
        started.append(True)

    def report(p):
        return bool(progress(p)) if progress else False

    try:
        stats = runner.run(description, cache, report, first, ready, **options)
    except (CancelledError, KeyboardInterrupt):
        if not started:  # refused or cancelled before anything was touched: the old cache stays as it was
            raise
        last = cache.last_whole_frame()
        cache.update(status="cancelled", last_frame=last, message=f"cancelled after frame {last}")
        raise CancelledError(f"bake cancelled; frames {description.frame_start}-{last} are in {cache.folder} "
                             "(resume to go on)") from None
    except BaseException as e:
        if started:
            cache.update(status="failed", last_frame=cache.last_whole_frame(), message=str(e))
        raise
    finally:
        if started:
            cache.unlock()
    # the solver's figures at the end (counts, energies, erosion's volumes): in the manifest, for
    # `python3 -m tsubu info` and Cache.manifest()["stats"]
    cache.update(status="complete", last_frame=description.frame_end, message="",
                 stats=stats if isinstance(stats, dict) else {})
    return cache
