"""python3 -m tsubu: the shell face of Tsubu.

    python3 -m tsubu info DIR                     what a cache folder holds
    python3 -m tsubu presets list [EFFECT]        built-in and user presets
    python3 -m tsubu presets show EFFECT NAME
    python3 -m tsubu presets validate FILE...     every problem of every file
    python3 -m tsubu bake SCENE.json --out DIR [--resume] [--checkpoint-seconds S]
    python3 -m tsubu estimate SCENE.json          particles, memory and disk a bake will take (measured)
    python3 -m tsubu surface DIR [--set NAME=VALUE ...]   rebuild the surface from the cached particles
    python3 -m tsubu demo EFFECT --out DIR        bake a built-in scene
    python3 -m tsubu bench EFFECT                 throughput; last line "EFFECT: <number> <unit>"
    python3 -m tsubu bench load                   1 vs 2 threads beside two busy processes
    python3 -m tsubu docs [--out FILE]            the parameter reference (docs/parameters.md)

Errors print one clear line (or one per problem) naming the file, object or parameter, without a
traceback, and exit with status 2 for bad input (a wrong argument, scene, preset, parameter or
damaged or missing file), 1 when a sound bake failed (unstable, out of memory or disk), 130 for Ctrl-C.
"""
import argparse
import json
import sys
import time

from . import presets, schema
from .errors import CancelledError, UnstableError, ValidationError


def cmd_info(args):
    from .cache import Cache
    print(Cache(args.folder).info())


def cmd_presets(args):
    if args.action == "list":
        for effect in [args.effect] if args.effect else schema.effects():
            schema.get(effect)
            for name, path in presets.available(effect).items():
                print(f"{effect}\t{name}\t{path}")
            for path, message in presets.problems(effect):
                print(f"{effect}\t(unreadable)\t{path}: {message}", file=sys.stderr)
    elif args.action == "show":
        found = presets.available(args.effect)
        if args.name not in found:
            raise ValidationError([f"no {args.effect} preset named '{args.name}' (have: {', '.join(found)})"])
        print(json.dumps(presets.load(found[args.name]), indent=2))
    else:
        failed = 0
        for path in args.files:
            try:
                p = presets.load(path)
                print(f"ok\t{path}\t{p['effect']}\t{p['name']}")
            except (ValueError, OSError) as e:
                failed += 1
                print(f"FAIL\t{e}")
        return 2 if failed else 0


def cmd_bake(args):
    from .baking import bake
    started = time.monotonic()
    last = [-1.0]

    def progress(p):
        if p.fraction - last[0] >= 0.01 or p.fraction >= 1.0:
            last[0] = p.fraction
            print(f"\rframe {p.frame}/{p.frame_end}  {100 * p.fraction:5.1f}%  {time.monotonic() - started:7.1f} s",
                  end="", file=sys.stderr, flush=True)

    cache = bake(args.scene, args.out, progress=progress, resume=args.resume,
                 checkpoint_seconds=args.checkpoint_seconds)
    print(file=sys.stderr)
    print(cache.info())


def cmd_estimate(args):
    from .estimate import estimate
    from .scene import SceneDescription
    print(estimate(SceneDescription.load(args.scene)).summary())


def cmd_surface(args):
    from .cache import Cache
    from .surface import rebuild_surface
    settings = {}
    for item in args.set or ():
        name, eq, value = item.partition("=")
        if not eq:
            raise ValidationError([f"--set {item!r}: expected NAME=VALUE, e.g. surface_smoothing=8"])
        try:
            settings[name] = json.loads(value)
        except json.JSONDecodeError:
            settings[name] = value  # a word: an enum's item, e.g. surface_method=spheres (the schema checks it)
    frames = rebuild_surface(args.folder, settings, progress=lambda f, done, total: print(
        f"\rsurface frame {f}  ({done}/{total})", end="", file=sys.stderr, flush=True))
    print(file=sys.stderr)
    print(f"rebuilt the surface of {len(frames)} frames")
    print(Cache(args.folder).info())


def cmd_demo(args):
    from . import demos
    cache = demos.bake_demo(args.effect, args.out)
    print(cache.info())


def cmd_bench(args):
    from . import benchmarks
    benchmarks.run(args.effect)


def cmd_docs(args):
    text = "# Parameter reference\n\nGenerated from the effect schemas by `python3 -m tsubu docs`; do not edit.\n\n"
    text += "\n".join(schema.to_markdown(schema.get(e)) for e in schema.effects())
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


def parser():
    p = argparse.ArgumentParser(prog="python3 -m tsubu", description="Tsubu particle effects from the shell.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("info", help="what a cache folder holds")
    s.add_argument("folder")
    s.set_defaults(func=cmd_info)
    s = sub.add_parser("presets", help="list, show or validate presets")
    s.add_argument("action", choices=["list", "show", "validate"])
    s.add_argument("rest", nargs="*")
    s.set_defaults(func=_presets_args)
    s = sub.add_parser("bake", help="bake a saved scene description")
    s.add_argument("scene")
    s.add_argument("--out", required=True, help="cache folder")
    s.add_argument("--resume", action="store_true", help="continue from the last whole frame")
    s.add_argument("--checkpoint-seconds", type=float, default=None, metavar="S",
                   help="seconds between saved states a resume starts from (default 30; 0: every frame)")
    s.set_defaults(func=cmd_bake)
    s = sub.add_parser("estimate", help="measure what baking a scene will take (bakes its first frame aside)")
    s.add_argument("scene")
    s.set_defaults(func=cmd_estimate)
    s = sub.add_parser("surface", help="rebuild the surface of a cache from its particles (no simulation)")
    s.add_argument("folder")
    s.add_argument("--set", action="append", metavar="NAME=VALUE",
                   help="a surface setting: surface_method (anisotropic or spheres), surface_voxel_ratio, "
                        "surface_radius_scale, surface_smoothing")
    s.set_defaults(func=cmd_surface)
    s = sub.add_parser("demo", help="bake a built-in demo scene")
    s.add_argument("effect")
    s.add_argument("--out", required=True)
    s.set_defaults(func=cmd_demo)
    s = sub.add_parser("bench", help="benchmark an effect (or 'core')")
    s.add_argument("effect")
    s.set_defaults(func=cmd_bench)
    s = sub.add_parser("docs", help="print the parameter reference")
    s.add_argument("--out")
    s.set_defaults(func=cmd_docs)
    return p


def _presets_args(args):
    rest = args.rest
    if args.action == "list":
        args.effect = rest[0] if rest else None
    elif args.action == "show":
        if len(rest) != 2:
            raise ValidationError(["usage: presets show EFFECT NAME"])
        args.effect, args.name = rest
    else:
        if not rest:
            raise ValidationError(["usage: presets validate FILE..."])
        args.files = rest
    return cmd_presets(args)


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except CancelledError as e:
        print(f"\ntsubu: {e}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("\ntsubu: interrupted", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError) as e:  # ValidationError, CorruptFileError, the solvers' refusals
        print(f"tsubu: {e}", file=sys.stderr)
        return 2
    except (UnstableError, MemoryError, OSError, KeyError) as e:
        print(f"tsubu: {e}", file=sys.stderr)
        return 1
