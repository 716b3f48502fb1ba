"""Benchmarks run from Python (`python3 -m tsubu bench EFFECT`): figures, never assertions.

'core' measures the cache and VDB paths the binding exposes; each effect adds
its own as it arrives. The last line is always "EFFECT: <number> <unit>".
The C-only core benchmark (grid, density sum) is `make bench`.
"""
import math
import os
import tempfile
import time

import numpy as np

from ._native import _core
from .effects.water import CLOSED as CLOSED_TANK


def _block(n, spacing=0.01, seed=1):
    side = int(np.ceil(n ** (1 / 3)))
    i = np.arange(n)
    p = np.stack([i % side, (i // side) % side, i // side // side], axis=1).astype(np.float32) * spacing
    p += np.random.default_rng(seed).uniform(0, 0.2 * spacing, p.shape).astype(np.float32)
    return p


def _in_process(call, threads, what, tuner=False):
    """Run `tsubu.benchmarks.<call>` in a fresh Python with OMP_NUM_THREADS=threads (so each case has its
    own thread pool and memory) and return the JSON of its last line of output (None if it printed none).
    tuner: let the bake choose between 1 and `threads` as it measures (threads.h), as bench load does."""
    import json
    import subprocess
    import sys
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), TSUBU_BENCH_TUNER="1" if tuner else "0")
    out = subprocess.run([sys.executable, "-c", f"import tsubu.benchmarks as b; b.{call}"], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{what} benchmark '{call}' failed: {out.stderr.strip()[-500:]}")
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else None


def bench_core():
    n = 1_000_000
    pos = _block(n)
    vel = np.stack([0.1 * pos[:, 1], -0.1 * pos[:, 0], -np.ones(n, np.float32)], axis=1)
    ids = np.arange(n, dtype=np.uint32)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.tspf")
        t = time.perf_counter()
        _core.write_frame(path, 1, 0.0, [("position", pos), ("velocity", vel), ("id", ids)], 1)
        write = time.perf_counter() - t
        t = time.perf_counter()
        _core.read_frame(path)
        read = time.perf_counter() - t
        mb = n * 28 / 1e6
        print(f"cache n={n}: write {mb / write:.1f} MB/s, read {mb / read:.1f} MB/s "
              f"({mb:.1f} MB raw, {os.path.getsize(path) / 1e6:.1f} MB on disk)")
    m = 200_000
    t = time.perf_counter()
    _core.particles_to_level_set(_block(m), 0.01, 0.005)
    rate = m / (time.perf_counter() - t)
    print(f"vdb n={m}: particles -> level set {rate:.0f} particles/s")
    print(f"core: {rate:.0f} particles/s")


SUBSTEPS = 60


def _fixed_threads():
    """Whether a benchmark's bake runs every step on OMP_NUM_THREADS threads: the count it reports. A bake
    otherwise starts on the cores it finds idle in a 10 ms sample and then keeps the count it measures faster
    (threads.h): a case meant for 2 threads ran its first block of substeps on 1 whenever another process ran
    during that sample. bench load measures that tuner, and turns it on."""
    return os.environ.get("TSUBU_BENCH_TUNER") != "1"


def _dam_break(n, speed=0.0, bodies=0):
    """Particle-steps per second of the water solver on a dam break of about n particles, the
    column thrown along x at speed (m/s), with `bodies` light crates floating in the column.

    The bake runs two frames of 60 substeps each (a frame of the dam break at 24 fps takes
    about 90); the time between the first and the last substep of a frame covers only
    substeps (no set-up). The cache writer compresses the previous frame on its own thread
    meanwhile, as in any bake; with frames this long it takes a few percent of the time."""
    import json

    from . import effects  # noqa: F401
    from .effects import water
    from .scene import SceneDescription, SceneObject
    from .shapes import box

    radius = 0.01
    d = 2 * radius
    side = (n / 2.0) ** (1 / 3) * d  # column w x w x 2w holding n particles
    params = {"particle_radius": radius, **CLOSED_TANK, "write_surface": False, "max_particles": 4 * n}

    def obj(name, role, lo, hi, **object_params):
        v, t = box(lo, hi)
        return SceneObject(name, role, v, t, params=object_params)

    desc = SceneDescription("water", params, 1, 3, 24.0, 0, [
        obj("Domain", "domain", (0, 0, 0), (4 * side, side, 3 * side)),
        obj("Water", "fluid", (0, 0, 0), (side, side, 2 * side), initial_velocity=(speed, 0.0, 0.0))] +
        [obj(f"Crate{b}", "rigid", ((b + 0.2) * side / bodies, 0.35 * side, 1.5 * side),
             ((b + 0.8) * side / bodies, 0.65 * side, 1.5 * side + 0.6 * side / bodies), density=500.0)
         for b in range(bodies)]).validate()
    settings, objects = water.solver_input(desc)
    # a frame long enough for 60 CFL-sized substeps: the cap then fixes the count
    fps = 1.0 / (SUBSTEPS * 0.4 * 2 * d / (desc.parameters["speed_of_sound"] + 5.0))
    stamps = {}  # frame -> times of its substeps' ends
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        stats = _core.water_bake(settings, objects, folder, 1, 3, fps, max_substeps=SUBSTEPS,
                                 progress=lambda frame, *a: stamps.setdefault(frame, []).append(time.perf_counter()),
                                 fixed_threads=_fixed_threads())
        bake_seconds = time.perf_counter() - started
    # between the first and last substep of each frame: no set-up, no output writing
    elapsed = sum(t[-1] - t[0] for t in stamps.values())
    steps = sum(len(t) - 1 for t in stamps.values())
    count = stats["fluid_particles"]
    rate = count * steps / elapsed
    print(json.dumps({"particles": count, "steps": steps, "seconds": elapsed, "rate": rate,
                      "bake_seconds": bake_seconds}))


def bench_water():
    """Dam breaks of 50k, 200k and 1M particles with 1 and 2 threads, each in its own process; then
    200k with three floating crates, against the same column without them."""
    rows = []
    print(f"water: SPH inner loops in their {_core.sph_simd()} form (csrc/core/sph_loops.c)", flush=True)
    # 'falling': the first frames of the dam break, slow enough that the Verlet lists serve a
    # whole frame; 'thrown': the column thrown at 4 m/s, which makes the lists be rebuilt every
    # third step or so, as in the fast splashes of a bake
    for n in (50_000, 200_000, 1_000_000):
        for speed, phase in ((0.0, "falling"), (4.0, "thrown")):
            for threads in (1, 2):
                r = _in_process(f"_dam_break({n}, {speed})", threads, "water")
                rows.append((r["particles"], phase, threads, r["rate"]))
                print(f"water dam break {phase:>7} n={r['particles']:>8} threads={threads}: "
                      f"{r['rate'] / 1e6:6.2f} M particle-steps/s ({1e9 / r['rate']:6.0f} ns per particle-step, "
                      f"{r['steps']} steps in {r['seconds']:.2f} s)", flush=True)
    # bodies: three crates floating in the falling column, against the same column without them
    for threads in (1, 2):
        plain = _in_process("_dam_break(200_000)", threads, "water")["rate"]
        r = _in_process("_dam_break(200_000, 0.0, 3)", threads, "water")
        print(f"water dam break with 3 bodies n={r['particles']:>8} threads={threads}: {r['rate'] / 1e6:6.2f} M "
              f"particle-steps/s, {r['rate'] / plain:.2f} of the same column without them", flush=True)
    middle = sorted({n for n, _, _, _ in rows})[1]  # the ~200k dam break
    rate = {phase: r for n, phase, threads, r in rows if threads == 2 and n == middle}
    print(f"water: {rate['falling'] / 1e6:.2f} M particle-steps/s (n={middle}, 2 threads, falling; "
          f"thrown {rate['thrown'] / 1e6:.2f} M)")


SAND_PAPER = {"cell_size": 1.0, "element_radius": 0.5, "bulk_density": 0.05 / (4 * 2 ** 0.5 * 0.125),
              "friction": 0.1, "restitution": 0.3, "rest_speed": 0.05, "grow_force": 10.0, "split_speed": 2.0}


def _sand_rate(desc, fps, steps_per_frame):
    """Elements, steps and seconds of a sand bake, timed from the first substep of the second frame
    (when the DEs are placed) to the last substep: no set-up; the frames are written by the
    cache's writer thread meanwhile."""
    import json

    from .effects import sand
    settings, objects = sand.solver_input(desc.validate())
    stamps = []

    def stamp(frame, *progress):
        if frame > desc.frame_start:  # the DEs are placed in the first frame
            stamps.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        stats = _core.sand_bake(settings, objects, folder, desc.frame_start, desc.frame_end, fps,
                                max_substeps=steps_per_frame, progress=stamp, fixed_threads=_fixed_threads())
        bake_seconds = time.perf_counter() - started
    print(json.dumps({"elements": stats["max_elements_seen"], "steps": len(stamps) - 1,
                      "seconds": stamps[-1] - stamps[0], "bake_seconds": bake_seconds}))


def _sand_paper(depth):
    """The paper's §5 scene: 128 x 128 cells of 1, DE radius 0.5 and mass 0.05, mu 0.1, a sphere of
    radius 15 and 200 x the DE mass, dt = 0.02 s (t_c = 0.2 s, 10 steps per contact)."""
    import math

    from .scene import SceneDescription, SceneObject
    from .shapes import grid_plane, uv_sphere
    bed = SceneObject("Bed", "bed", *grid_plane((0, 0), (128, 128), 0.0, (4, 4)))
    m = np.eye(4)[None].copy()
    m[0, :3, 3] = (64, 64, 15.5)
    ball = SceneObject("Ball", "object", *uv_sphere((0, 0, 0), 15.0, 16, 32), matrices=m,
                       params={"density": 200 * 0.05 / (4 / 3 * math.pi * 15 ** 3), "initial_velocity": (0, 0, -10)})
    params = dict(SAND_PAPER, contact_time=0.2, steps_per_contact=10.0, dem_depth=depth)
    _sand_rate(SceneDescription("sand", params, 1, 21, 5.0, 0, [bed, ball]), 5.0, 10)  # 10 steps of 0.02 s a frame


SAND_BED_BALL = {"radius": 15.0, "speed": 1.5, "steps": 200}  # a keyframed ball pressed into the bed


def _sand_bed(n):
    """A bed of about n DEs (FCC, 4 deep; t_c = 0.1 s, dt = 0.01 s) hit by a ball of radius 15
    pressed in at 1.5 cells/s for 200 steps. A plate resting on the bed at the first frame makes
    the whole bed DEM region, then lifts away."""
    from .scene import SceneDescription, SceneObject
    from .shapes import box, grid_plane, uv_sphere
    side = int((n / 6.0) ** 0.5)  # about 6 DEs per column in a layer 4 deep
    size = side + 8
    frames = 1 + SAND_BED_BALL["steps"] // 10
    bed = SceneObject("Bed", "bed", *grid_plane((0, 0), (size, size), 0.0, (4, 4)))
    lift = np.repeat(np.eye(4)[None], frames, axis=0)
    lift[1:, 2, 3] = 100.0
    plate = SceneObject("Plate", "object", *box((4, 4, 0.001), (4 + side, 4 + side, 1.0)), matrices=lift,
                        params={"motion": "animated"})
    r, v = SAND_BED_BALL["radius"], SAND_BED_BALL["speed"]
    press = np.repeat(np.eye(4)[None], frames, axis=0)
    press[:, :2, 3] = size / 2
    press[:, 2, 3] = 0.5 + r - v * 0.1 * (np.arange(frames) - 1)  # bottom 0.5 above the sand at frame 2
    press[0, 2, 3] = 100.0
    ball = SceneObject("Ball", "object", *uv_sphere((0, 0, 0), r, 16, 32), matrices=press,
                       params={"motion": "animated"})
    params = dict(SAND_PAPER, contact_time=0.1, steps_per_contact=10.0, dem_depth=4.0)
    _sand_rate(SceneDescription("sand", params, 1, frames, 10.0, 0, [bed, plate, ball]), 10.0, 10)


def _sphere_stl(path, centre, radius):
    """The benchmark's ball as an ASCII STL for LIGGGHTS (the same UV sphere Tsubu is given)."""
    from .shapes import uv_sphere
    v, t = uv_sphere(centre, radius, 16, 32)
    with open(path, "w") as f:
        f.write("solid ball\n")
        for tri in t:
            a, b, c = (v[k].astype(np.float64) for k in tri)
            n = np.cross(b - a, c - a)
            n /= np.linalg.norm(n)
            f.write(f"facet normal {n[0]:.9g} {n[1]:.9g} {n[2]:.9g}\nouter loop\n")
            for p in (a, b, c):
                f.write(f"vertex {p[0]:.9g} {p[1]:.9g} {p[2]:.9g}\n")
            f.write("endloop\nendfacet\n")
        f.write("endsolid ball\n")


LIGGGHTS_INPUT = """atom_style granular
atom_modify map array
boundary f f f
newton off
communicate single vel yes
units si
region domain block 0 {L} 0 {L} -1 40 units box
create_box 1 domain
neighbor 0.2 bin
neigh_modify delay 0
fix m1 all property/global kn peratomtypepair 1 {k}
fix m2 all property/global kt peratomtypepair 1 {kt}
fix m3 all property/global gamman_abs peratomtypepair 1 {c}
fix m4 all property/global gammat_abs peratomtypepair 1 {ct}
fix m5 all property/global gamman peratomtypepair 1 {c}
fix m6 all property/global gammat peratomtypepair 1 {ct}
fix m7 all property/global coefficientFriction peratomtypepair 1 0.1
pair_style gran model hooke/stiffness tangential history absolute_damping on
pair_coeff * *
timestep 0.01
fix gravi all gravity 9.81 vector 0.0 0.0 -1.0
fix walls all wall/gran model hooke/stiffness tangential history primitive type 1 zplane 0.0
fix wx0 all wall/gran model hooke/stiffness tangential history primitive type 1 xplane 0.0
fix wx1 all wall/gran model hooke/stiffness tangential history primitive type 1 xplane {L}
fix wy0 all wall/gran model hooke/stiffness tangential history primitive type 1 yplane 0.0
fix wy1 all wall/gran model hooke/stiffness tangential history primitive type 1 yplane {L}
fix ball all mesh/surface file ball.stl type 1
fix wball all wall/gran model hooke/stiffness tangential history mesh n_meshes 1 meshes ball
lattice fcc 1.4142135623730951 origin 0.5 0.5 0.5
region bed block 0.4 {Lb} 0.4 {Lb} 0.4 4.0 units box
create_atoms 1 region bed
set group all diameter 1.0 density {rho}
fix integr all nve/sphere
fix press all move/mesh mesh ball linear 0.0 0.0 -{speed}
run 20
run {steps}
"""


def _liggghts(n, procs):
    """Atom-steps per second of LIGGGHTS on the same spheres, law, stiffness, dt and steps; None if absent."""
    import math
    import re
    import shutil
    import subprocess
    if not shutil.which("liggghts"):
        return None
    side = (n / 6.0) ** 0.5
    m_eff = 0.025  # two DEs of mass 0.05
    ln_e = math.log(0.3)
    k = m_eff * (math.pi ** 2 + ln_e ** 2) / 0.1 ** 2
    c = -2 * m_eff * ln_e / 0.1
    r, v, steps = SAND_BED_BALL["radius"], SAND_BED_BALL["speed"], SAND_BED_BALL["steps"]
    # the tangential spring and dashpot at 2/7 of the normal ones, as Tsubu's contact law (csrc/core/contact.h)
    text = LIGGGHTS_INPUT.format(L=side, Lb=side - 0.4, k=k, c=c, kt=2 * k / 7, ct=2 * c / 7, rho=0.05 / (math.pi / 6),
                                 speed=v, steps=steps)
    with tempfile.TemporaryDirectory() as folder:
        # the bed's top layer is at about z = 4; the ball's bottom 0.5 above it when the timed run starts
        _sphere_stl(os.path.join(folder, "ball.stl"), (side / 2, side / 2, 4.0 + 0.5 + r + 20 * 0.01 * v), r)
        path = os.path.join(folder, "in.bed")
        with open(path, "w") as f:
            f.write(text)
        cmd = ["liggghts", "-in", path] if procs == 1 else \
            ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(procs), "liggghts", "-in", path]
        out = subprocess.run(cmd, cwd=folder, capture_output=True, text=True).stdout
    loops = re.findall(r"Loop time of ([0-9.e+-]+) on \d+ procs for (\d+) steps with (\d+) atoms", out)
    if not loops:
        return None
    seconds, steps, atoms = loops[-1]
    return int(atoms), int(atoms) * int(steps) / float(seconds)


SURFACE_RADIUS = 0.01  # the surface benchmark's particles: 1 cm


def _surface_particles(n, shape):
    """n particles of radius SURFACE_RADIUS on a jittered lattice: a cube of liquid, or a shallow pool four
    particles deep (the most surface per particle)."""
    r = SURFACE_RADIUS
    if shape == "cube":
        pos = _block(n, spacing=2 * r)
    else:
        side = int(np.ceil((n / 4) ** 0.5))
        i = np.arange(n)
        pos = np.stack([i % side, (i // side) % side, i // side // side], axis=1).astype(np.float32) * 2 * r
        pos += np.random.default_rng(1).uniform(0, 0.4 * r, pos.shape).astype(np.float32)
    return pos


def _surface_rate(n, shape, method):
    """One surface frame of `_surface_particles(n, shape)`. Prints JSON: seconds, active voxels, and the seconds
    OpenVDB's Volume to Mesh then takes on the grid (what Blender does to show it), best of two."""
    import json
    pos = _surface_particles(n, shape)
    _core.surface_level_set(pos[:1000], SURFACE_RADIUS, 2.0, 0.5, 4, method)  # load OpenVDB before timing
    best = mesh = None
    for _ in range(2):
        t = time.perf_counter()
        g = _core.surface_level_set(pos, SURFACE_RADIUS, 2.0, 0.5, 4, method)
        seconds = time.perf_counter() - t
        t = time.perf_counter()
        g.to_mesh()
        meshing = time.perf_counter() - t
        best = seconds if best is None else min(best, seconds)
        mesh = meshing if mesh is None else min(mesh, meshing)
    print(json.dumps({"seconds": best, "voxels": g.active_voxels, "mesh_seconds": mesh}))


def _splashsurf_seconds(n, shape, threads):
    """The peer of the anisotropic surface: splashsurf (pysplashsurf, in the venv setup.sh makes) on the same
    particles at the same resolution (support 4 r, cubes of r / 2), its marching-cubes mesh included; best of two.
    None if that venv is missing."""
    import json
    import subprocess
    python = _peer_python("splashsurf", "TSUBU_SPLASHSURF_PYTHON")
    script = _script("splashsurf_surface.py")
    if not python or not os.path.exists(script):
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "particles.npy")
        np.save(path, _surface_particles(n, shape))
        out = subprocess.run([python, script, path, str(SURFACE_RADIUS)], capture_output=True, text=True,
                             env=dict(os.environ, RAYON_NUM_THREADS=str(threads)))
    if out.returncode != 0:
        raise RuntimeError(f"splashsurf peer failed: {out.stderr.strip()[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def bench_surface():
    """The liquid surface per frame (csrc/core/surface*.c), both methods, 1 and 2 threads, at the
    default settings (voxels of half the particle radius; spheres of twice it, 4 smoothing passes); beside
    the anisotropic one, in the same run, splashsurf on the same particles (scripts/splashsurf_surface.py)."""
    rate = {}
    for n in (50_000, 200_000, 1_000_000):
        for shape in ("cube", "pool"):
            for method in ("anisotropic", "spheres"):
                for threads in (1, 2):
                    r = _in_process(f"_surface_rate({n}, {shape!r}, {method!r})", threads, "surface")
                    rate[n, shape, method, threads] = n / r["seconds"] / threads
                    print(f"surface {shape:>4} n={n:>8} {method:>11} threads={threads}: {r['seconds']:6.2f} s, "
                          f"{rate[n, shape, method, threads] / 1e6:5.2f} M particles/s per core "
                          f"({r['voxels']} active voxels; Volume to Mesh {r['mesh_seconds']:.2f} s)", flush=True)
                    if method == "anisotropic":
                        peer = _splashsurf_seconds(n, shape, threads)
                        print(f"  splashsurf, same particles and resolution, its mesh included: "
                              + (f"{peer:6.2f} s" if peer is not None else
                                 "not installed (scripts/setup.sh makes .venv/splashsurf)"), flush=True)
    print(f"surface: {rate[200_000, 'pool', 'anisotropic', 1] / 1e6:.2f} M particles/s per core "
          "(anisotropic, 200k-particle pool, 1 thread)")


def bench_sand():
    """The paper's scene (time per step), DEM throughput on beds hit by a ball, and LIGGGHTS side by side."""
    for depth, label in ((0.0, "automatic DEM depth"), (4.0, "DEM depth 4")):
        for threads in (1, 2):
            r = _in_process(f"_sand_paper({depth})", threads, "sand")
            print(f"sand paper scene, {label}, threads={threads}: {r['steps'] / r['seconds']:7.1f} steps/s "
                  f"({1000 * r['seconds'] / r['steps']:.1f} ms per step, {r['elements']} DEs at most)", flush=True)
    for n in (50_000, 500_000):
        for threads in (1, 2):
            r = _in_process(f"_sand_bed({n})", threads, "sand")
            rate = r["elements"] * r["steps"] / r["seconds"]
            print(f"sand bed + ball n={r['elements']:>7} threads={threads}: {rate / 1e6:6.2f} M particle-steps/s "
                  f"({1e9 / rate:5.0f} ns per particle-step)", flush=True)
        for procs in (1, 2):
            peer = _liggghts(n, procs)
            if peer is None:
                print("LIGGGHTS not found (apt-get install liggghts): no side-by-side figure")
                break
            print(f"LIGGGHTS bed + ball n={peer[0]:>7} procs={procs}: {peer[1] / 1e6:6.2f} M particle-steps/s",
                  flush=True)


def _fracture_wall(n, frames):
    """The paper's wall (one shot) with n elements: set-up seconds (a bake of the first frame alone),
    then steps per second of a bake of `frames` frames. Prints JSON for bench_fracture."""
    import json
    from . import demos
    from .cache import Cache
    from .effects import fracture

    radius = 0.017 if n == 2048 else 0.0
    d = demos.fracture_scene(frames=frames, shots=((0.0, 0.75, 2),), element_count=n, element_radius=radius)
    d.validate()
    settings, objects = fracture.solver_input(d)
    out = {}
    with tempfile.TemporaryDirectory() as folder:
        for last in (1, frames):
            Cache(folder).create("fracture", d.parameters, 1, last, 24.0, 0, fracture.streams(d))
            t = time.perf_counter()
            st = _core.fracture_bake(settings, objects, folder, 1, last, 24.0, fixed_threads=_fixed_threads())
            out[last] = (time.perf_counter() - t, st)
    setup, st = out[1]
    total, st = out[frames]
    pieces = sum(st[k] for k in ("seconds_placement", "seconds_delaunay", "seconds_levels", "seconds_fragments"))
    print(json.dumps({"elements": st["elements"], "setup": setup, "pieces_seconds": pieces,
                      "steps": st["steps"], "seconds": total - setup, "broken": st["broken"],
                      "bake_seconds": setup + total}))


CELL_FRACTURE = """
import bpy, sys, time, addon_utils
n = int(sys.argv[sys.argv.index("--") + 1])
addon_utils.enable("object_fracture_cell", default_set=True)
bpy.ops.object.select_all(action="SELECT"); bpy.ops.object.delete()
bpy.ops.mesh.primitive_cube_add(size=1.0)
wall = bpy.context.active_object
wall.scale = (1.0, 0.08, 1.0)
bpy.ops.object.transform_apply(scale=True)
bpy.ops.object.particle_system_add()
ps = wall.particle_systems[0].settings
ps.count, ps.emit_from, ps.frame_start, ps.frame_end = n, "VOLUME", 1, 1
bpy.context.scene.frame_set(1)
t = time.perf_counter()
bpy.ops.object.add_fracture_cell_objects(source={"PARTICLE_OWN"}, source_limit=n, use_remove_original=False)
print("CELLFRACTURE", len([o for o in bpy.data.objects if o is not wall]), time.perf_counter() - t)
"""


def _cell_fracture(n):
    """(pieces, seconds) of Blender's Cell Fracture add-on cutting the same wall into n pieces, or None."""
    import shutil
    import subprocess
    if shutil.which("blender") is None:
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(CELL_FRACTURE)
    try:
        out = subprocess.run(["blender", "-b", "--factory-startup", "--python", f.name, "--", str(n)],
                             capture_output=True, text=True, timeout=3600)
    finally:
        os.unlink(f.name)
    for line in out.stdout.splitlines():
        if line.startswith("CELLFRACTURE"):
            _, pieces, seconds = line.split()
            return int(pieces), float(seconds)
    return None


def bench_fracture():
    """Set-up and steps per second of the paper's wall (2048 elements), of 512 and of 20,000, 1 and 2 threads,
    and Blender's Cell Fracture making the same number of pieces from the same wall, side by side (512 and
    2048: it takes minutes for 2048, and grows with the square of the count)."""
    for n, frames in ((512, 12), (2048, 12), (20_000, 3)):
        for threads in (1, 2):
            r = _in_process(f"_fracture_wall({n}, {frames})", threads, "fracture")
            print(f"fracture wall n={r['elements']:>6} threads={threads}: set-up {r['setup']:6.2f} s (pieces "
                  f"{r['pieces_seconds']:5.2f} s), {r['steps'] / r['seconds']:7.0f} steps/s, "
                  f"{r['elements'] * r['steps'] / r['seconds'] / 1e6:5.2f} M element-steps/s", flush=True)
            if threads == 2:
                peer = _cell_fracture(n) if n <= 2048 else None
                if peer:
                    print(f"Cell Fracture (Blender 3.4) same wall into {peer[0]} pieces: {peer[1]:7.2f} s; "
                          f"Tsubu's pieces {r['pieces_seconds']:.2f} s: {peer[1] / r['pieces_seconds']:.0f}x faster",
                          flush=True)


# Each effect's workload for bench load: a whole bake (set-up, steps and output), as an artist's bake is,
# timed around the `_core.*_bake` calls (not the start of Python and the scene's building around them).
LOAD_CASES = (("water", "_dam_break(50000, 0.0)"), ("sand", "_sand_bed(20000)"), ("fracture", "_fracture_wall(2048, 4)"),
              ("fracture", "_fracture_wall(512, 4)"))


def bench_load():
    """Each effect baked with 1 and with 2 threads while two CPU-bound processes run (an artist's
    Blender drawing, a render, another bake), alternating, five times each. The ratio is the median
    1-thread time / the median 2-thread time: at least 1 means the second thread never makes a bake
    slower. (Under load the times spread widely and the fastest run is luck; the median is what an
    artist waits. The ratio of the fastest runs is printed beside it.)"""
    import statistics
    import subprocess
    import sys
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    worst = math.inf
    try:
        time.sleep(0.5)
        for effect, call in LOAD_CASES:
            seconds = {}
            for threads in (1, 2) * 5:
                seconds.setdefault(threads, []).append(_in_process(call, threads, effect, tuner=True)["bake_seconds"])
            one, two = statistics.median(seconds[1]), statistics.median(seconds[2])
            worst = min(worst, one / two)
            print(f"{effect} {call} under load: 1 thread {one:6.2f} s, 2 threads {two:6.2f} s (medians), "
                  f"ratio {one / two:.2f} (of the fastest runs: {min(seconds[1]) / min(seconds[2]):.2f})",
                  flush=True)
    finally:
        for p in busy:
            p.kill()
    print(f"load: {worst:.2f} ratio (1-thread time / 2-thread time, the worst case; at least 1: no slower)")


def _erosion_lake(n, interval=50):
    """SPH steps per second of the erosion solver: a lake of about n particles in a bowl on a terrain of
    128^3 voxels, eroding every `interval` steps. Timed as _dam_break times water: between the first and
    the last substep of each frame (no set-up, no output)."""
    import json

    from . import effects  # noqa: F401
    from .effects import erosion
    from .scene import SceneDescription, SceneObject
    from .shapes import box, height_grid

    radius, voxel = 0.01, 0.02
    side = 127 * voxel                                     # 128 nodes along each axis
    c = side / 2
    depth = 0.25 if n <= 50_000 else 0.5
    width = (n * (2 * radius) ** 3 / depth) ** 0.5        # a lake w x w x depth holding n particles
    xs = np.linspace(0.0, side, 65)
    bowl = SceneObject("Bowl", "terrain", *height_grid(xs, xs, lambda X, Y: 0.2 + 0.3 * ((X - c) ** 2 + (Y - c) ** 2)
                                                        / c ** 2))
    lv, lt = box((c - width / 2, c - width / 2, 0.22), (c + width / 2, c + width / 2, 0.22 + depth))
    lake = SceneObject("Lake", "fluid", lv, lt)
    params = {"particle_radius": radius, "voxel_size": voxel, "erosion_interval": interval, "critical_shear": 2.0,
              "erosion_strength": 0.05, "rain_rate": 0.0, "max_particles": 4 * n}
    desc = SceneDescription("erosion", params, 1, 3, 24.0, 0, [bowl, lake]).validate()
    settings, objects = erosion.solver_input(desc)
    settings.update(domain_min=[0.0, 0.0, 0.0], domain_max=[side, side, side])
    fps = 1.0 / (SUBSTEPS * 0.4 * 2 * 2 * radius / (desc.parameters["speed_of_sound"] + 5.0))
    stamps = {}
    with tempfile.TemporaryDirectory() as folder:
        stats = _core.erosion_bake(settings, objects, folder, 1, 3, fps, max_substeps=SUBSTEPS,
                                   progress=lambda frame, *a: stamps.setdefault(frame, []).append(time.perf_counter()),
                                   fixed_threads=_fixed_threads())
    elapsed = sum(t[-1] - t[0] for t in stamps.values())
    steps = sum(len(t) - 1 for t in stamps.values())
    print(json.dumps({"particles": stats["fluid_particles"], "steps": steps, "seconds": elapsed,
                      "steps_per_second": steps / elapsed, "rate": stats["fluid_particles"] * steps / elapsed}))


def bench_erosion():
    """Lakes of 25k and 200k particles on a 128^3 terrain, eroding every 50 steps and every step (the
    difference is the cost of one erosion update), 1 and 2 threads; beside them the water solver's dam
    break of the same size, in the same run."""
    for n in (25_000, 200_000):
        for threads in (1, 2):
            every50 = _in_process(f"_erosion_lake({n}, 50)", threads, "erosion")
            every1 = _in_process(f"_erosion_lake({n}, 1)", threads, "erosion")
            water = _in_process(f"_dam_break({n}, 0.0)", threads, "erosion (dam break)")
            update = (1.0 / every1["steps_per_second"] - 1.0 / every50["steps_per_second"]) / (1.0 - 1.0 / 50)
            print(f"erosion lake n={every50['particles']:>7} threads={threads}: {every50['steps_per_second']:7.1f} "
                  f"steps/s ({every50['rate'] / 1e6:5.2f} M particle-steps/s; water's dam break "
                  f"{water['rate'] / 1e6:5.2f} M, ratio {every50['rate'] / water['rate']:.2f}); one erosion update "
                  f"{1e3 * update:6.1f} ms", flush=True)


def _timed_elastoplastic_bake(desc, fps, substeps):
    """Bake an elastoplastic scene (frames at `fps`, at most `substeps` each) and time it between the first and the
    last substep of each frame (no set-up, no frame output): its statistics and the milliseconds per substep."""
    from .effects import elastoplastic

    settings, objects = elastoplastic.solver_input(desc.validate())
    stamps = {}
    with tempfile.TemporaryDirectory() as folder:
        stats = _core.elastoplastic_bake(settings, objects, folder, 1, desc.frame_end, fps, max_substeps=substeps,
                                         progress=lambda frame, *a: stamps.setdefault(frame, []).append(
                                             time.perf_counter()), fixed_threads=_fixed_threads())
    elapsed = sum(t[-1] - t[0] for t in stamps.values())
    steps = sum(len(t) - 1 for t in stamps.values())
    return stats, 1e3 * elapsed / steps


def _elastoplastic_cube(n, landing=False, paper_step=False):
    """Milliseconds per substep of the elastoplastic solver: a cube of about n masters (the paper's fig. 7
    material: nu 0.35, E 1.2 MPa, theta_s 0.1, theta_c 0.8) falling onto the ground, timed between the first
    and the last substep of each of eleven frames of its fall, with the CG iterations of the last step. (Two
    frames, as until 2026-11-28, gave anywhere from 22 to 37 ms for the same code: the first frame's interval is
    a third shorter than the rest, and one interval is one substep.) Falling whole it needs no CG iteration
    (since 2026-11-29); `landing` starts it touching the ground, so the frames time its impact and squash.
    `paper_step`: substeps of 0.5 ms, the paper's for its bunny (table 2), so the figure compares with the
    paper's per substep; the same 24 ms of impact in twice the substeps."""
    import json

    from . import effects  # noqa: F401
    from .scene import SceneDescription, SceneObject
    from .shapes import box

    radius = 0.005
    side = round(n ** (1 / 3)) * 2 * radius
    bottom = 1.2 * radius if landing else 0.05
    v, t = box((-side / 2, -side / 2, bottom), (side / 2, side / 2, bottom + side))
    params = {"particle_radius": radius, "poisson_ratio": 0.35, "youngs_modulus": 1.2e6, "plastic": True,
              "yield_stretch": 0.1, "yield_compression": 0.8, "write_surface": False}
    substeps = 10
    if paper_step:   # a step rule of 0.1 ms at 1 m/s, which the cap of four substeps a frame makes 0.5 ms exactly
        params["cfl_number"] = 0.01
        substeps = 4
    frames = 12
    desc = SceneDescription("elastoplastic", params, 1, frames, 24.0, 0,
                            [SceneObject("Bunny", "body", v, t, params={"initial_velocity": [0.0, 0.0, -1.0]})])
    # frames of 2 ms: the default step rule (1.82 ms here, below) cuts each into 2 substeps of 1 ms; `substeps`
    # caps them
    stats, ms = _timed_elastoplastic_bake(desc, 500.0, substeps)
    # the step the default rule takes here (elastoplastic.c's stable_dt): 8 spacings of the elastic wave, or the
    # CFL condition at the 1 m/s the cube lands with, whichever is shorter
    lam = 1.2e6 * 0.35 / (1.35 * 0.3)
    mu = 1.2e6 / 2.7
    default_dt = min(8.0 * 2 * radius / ((lam + 2 * mu) / 1000.0) ** 0.5, 0.4 * 2 * radius / 1.0)
    print(json.dumps({"masters": stats["masters"], "slaves": stats["slaves"], "ms": ms, "cg": stats["cg_iterations"],
                      "dt": default_dt, "ms_per_second": ms / default_dt}))


def _elastoplastic_bar_drop(n, seconds=0.6):
    """The scene of the paper's table 2 figure the issue compares with (7.0 s a frame at dt 0.5 ms: fig. 13, top -
    a bunny of 17,263 masters dropped onto a bar; not fig. 7's): a body of about n masters (a cube of 5 mm particles,
    26 cm across at 17,576) with fig. 13 top's material (nu 0.25, E 1.2 MPa, theta_s 0.1, theta_c 0.75, plastic)
    let go 5 cm above a bar 4 cm square, at substeps of exactly 0.5 ms: milliseconds per substep over its fall,
    the hit, the split over the bar and the squash, averaged over the whole bake as the paper's figure is (the
    paper gives neither the drop nor the length: 0.6 s takes the body onto the bar and well into its squash)."""
    import json

    from . import effects  # noqa: F401
    from .scene import SceneDescription, SceneObject
    from .shapes import box

    radius, bar_top, drop = 0.005, 0.3, 0.05
    side = round(n ** (1 / 3)) * 2 * radius
    v, t = box((-side / 2, -side / 2, bar_top + drop), (side / 2, side / 2, bar_top + drop + side))
    bar = box((-0.4, -0.02, bar_top - 0.04), (0.4, 0.02, bar_top))
    params = {"particle_radius": radius, "poisson_ratio": 0.25, "youngs_modulus": 1.2e6, "plastic": True,
              "yield_stretch": 0.1, "yield_compression": 0.75, "write_surface": False,
              "cfl_number": 0.01}   # a step rule of 0.1 ms at 1 m/s, capped at four substeps of frames of 2 ms
    fps = 500.0
    desc = SceneDescription("elastoplastic", params, 1, int(round(seconds * fps)), 24.0, 0,
                            [SceneObject("Bunny", "body", v, t), SceneObject("Bar", "obstacle", *bar)])
    stats, ms = _timed_elastoplastic_bake(desc, fps, 4)
    print(json.dumps({"masters": stats["masters"], "slaves": stats["slaves"], "ms": ms, "seconds": seconds,
                      "cg_per_step": stats["cg_iterations_total"] / max(stats["steps"], 1)}))


def _script(name):
    """A script of the repository's scripts/ folder (the benchmarks' peers)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", name)


def _peer_python(venv, variable):
    """The interpreter of a peer's venv that setup.sh makes (.venv/<venv>; the environment variable overrides),
    or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "..", ".venv", venv, "bin", "python")
    path = os.environ.get(variable, default)
    return path if os.path.exists(path) else None


def bench_elastoplastic():
    """Cubes of 4k, 17k and 100k masters, 1 and 2 threads, each in its own process; beside each size, in the
    same run, an explicit MLS-MPM jelly of as many particles in Taichi (CPU, its own thread pool: both cores)."""
    import json
    import subprocess
    last = landed = landed_paper = bar_drop = None
    taichi = _peer_python("taichi", "TSUBU_TAICHI_PYTHON")
    script = _script("taichi_mpm_jelly.py")
    for n in (4096, 17_576, 97_336):
        for threads in (1, 2):
            r = _in_process(f"_elastoplastic_cube({n})", threads, "elastoplastic")
            print(f"elastoplastic cube masters={r['masters']:>7} slaves={r['slaves']:>7} threads={threads}: "
                  f"{r['ms']:8.1f} ms per substep, {r['cg']} CG iterations at the last step; at the default step "
                  f"({1e3 * r['dt']:.2f} ms) {r['ms_per_second'] / 1e3:7.1f} s per simulated second", flush=True)
            if n == 17_576 and threads == 2:
                last = r
            if n < 50_000:
                r = _in_process(f"_elastoplastic_cube({n}, landing=True)", threads, "elastoplastic")
                print(f"elastoplastic cube landing masters={r['masters']:>7} threads={threads}: {r['ms']:8.1f} ms per "
                      f"substep, {r['cg']} CG iterations at the last step", flush=True)
                if n == 17_576 and threads == 2:
                    landed = r
                    r = _in_process(f"_elastoplastic_cube({n}, landing=True, paper_step=True)", threads,
                                    "elastoplastic")
                    print(f"elastoplastic cube landing at the paper's step (0.5 ms) masters={r['masters']:>7} "
                          f"threads={threads}: {r['ms']:8.1f} ms per substep, {r['cg']} CG iterations at the last "
                          f"step", flush=True)
                    landed_paper = r
                    r = _in_process(f"_elastoplastic_bar_drop({n})", threads, "elastoplastic")
                    print(f"elastoplastic body dropped onto a bar (the paper's fig. 13 scene) "
                          f"masters={r['masters']:>7} threads={threads}: {r['ms']:8.1f} ms per substep of 0.5 ms "
                          f"over {r['seconds']} s, {r['cg_per_step']:.1f} CG iterations a step", flush=True)
                    bar_drop = r
        if taichi and os.path.exists(script):
            out = subprocess.run([taichi, script, str(round(n ** (1 / 3)))], capture_output=True, text=True)
            if out.returncode == 0:
                t = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"taichi MLS-MPM jelly particles={t['particles']:>7} (grid {t['grid']}^3, explicit): "
                      f"{t['ms']:8.1f} ms per substep of {1e3 * t['dt']:.3f} ms, "
                      f"{t['ms_per_second'] / 1e3:7.1f} s per simulated second", flush=True)
            else:
                print(f"taichi peer failed: {out.stderr.strip()[-300:]}", flush=True)
        elif n == 4096:
            print("taichi peer: not installed (scripts/setup.sh makes .venv/taichi)", flush=True)
    print(f"elastoplastic: {bar_drop['ms']:.1f} ms per substep at {bar_drop['masters']} masters on 2 threads, the "
          f"paper's fig. 13 scene at its 0.5 ms, {bar_drop['cg_per_step']:.1f} CG iterations a step (falling alone "
          f"{last['ms']:.1f} ms at 1 ms substeps; landing {landed['ms']:.1f} ms at 1 ms, {landed['cg']} CG iterations, "
          f"{landed_paper['ms']:.1f} ms at 0.5 ms, {landed_paper['cg']}; the paper's bunny onto a bar: about 105 ms "
          f"on 6 cores; the issue's floor: 10.5 ms)")


def run(effect):
    table = {"core": bench_core, "load": bench_load}
    table.update(_effect_benchmarks())
    if effect not in table:
        raise ValueError(f"no benchmark for '{effect}' (have: {', '.join(table)})")
    table[effect]()


def _effect_benchmarks():
    return {"water": bench_water, "surface": bench_surface, "sand": bench_sand, "fracture": bench_fracture, "erosion": bench_erosion,
            "elastoplastic": bench_elastoplastic}
