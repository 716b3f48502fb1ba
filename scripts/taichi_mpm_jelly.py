"""The peer of `python3 -m tsubu bench elastoplastic`: an explicit MLS-MPM jelly (Hu et al. 2018, what
taichi_elements runs in Blender) on Taichi's CPU backend, a cube of n masters' worth of particles of the same
material (nu 0.35, E 1.2 MPa, 1000 kg/m^3) falling onto the ground. Prints one JSON line: particles, grid,
milliseconds per substep, the substep's length and so milliseconds per simulated second.

    .venv/taichi/bin/python scripts/taichi_mpm_jelly.py 26    # 26^3 = 17,576 particles
"""
import json
import sys
import time

import taichi as ti

ti.init(arch=ti.cpu, random_seed=1)

side = int(sys.argv[1])
n = side ** 3
n_grid = 64                      # a 1 m box, cells of 1.56 cm, 2 x 2 x 2 particles per cell
dx = 1.0 / n_grid
spacing = dx / 2
E, nu, rho = 1.2e6, 0.35, 1000.0
mu, lam = E / (2 * (1 + nu)), E * nu / ((1 + nu) * (1 - 2 * nu))
p_vol = spacing ** 3
p_mass = rho * p_vol
wave = ((lam + 2 * mu) / rho) ** 0.5
dt = 0.4 * dx / (wave + 1.0)     # explicit MPM: an elastic wave crosses at most 0.4 cell per step

x = ti.Vector.field(3, float, n)
v = ti.Vector.field(3, float, n)
C = ti.Matrix.field(3, 3, float, n)
F = ti.Matrix.field(3, 3, float, n)
grid_v = ti.Vector.field(3, float, (n_grid,) * 3)
grid_m = ti.field(float, (n_grid,) * 3)


@ti.kernel
def seed():
    for i in range(n):
        a, b, c = i % side, (i // side) % side, i // (side * side)
        x[i] = ti.Vector([0.5 - side * spacing / 2 + (a + 0.5) * spacing, 0.5 - side * spacing / 2 + (b + 0.5) * spacing,
                          0.1 + (c + 0.5) * spacing])
        v[i] = ti.Vector([0.0, 0.0, -1.0])
        F[i] = ti.Matrix.identity(float, 3)
        C[i] = ti.Matrix.zero(float, 3, 3)


@ti.kernel
def substep():
    for I in ti.grouped(grid_m):
        grid_v[I] = ti.Vector.zero(float, 3)
        grid_m[I] = 0.0
    for p in x:                                   # particles to grid (APIC), fixed-corotated stress
        base = (x[p] / dx - 0.5).cast(int)
        fx = x[p] / dx - base.cast(float)
        w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
        F[p] = (ti.Matrix.identity(float, 3) + dt * C[p]) @ F[p]
        R, S = ti.polar_decompose(F[p])
        J = F[p].determinant()
        stress = 2 * mu * (F[p] - R) @ F[p].transpose() + ti.Matrix.identity(float, 3) * lam * J * (J - 1)
        stress = (-dt * p_vol * 4 / dx ** 2) * stress
        affine = stress + p_mass * C[p]
        for i, j, k in ti.static(ti.ndrange(3, 3, 3)):
            offset = ti.Vector([i, j, k])
            dpos = (offset.cast(float) - fx) * dx
            weight = w[i][0] * w[j][1] * w[k][2]
            grid_v[base + offset] += weight * (p_mass * v[p] + affine @ dpos)
            grid_m[base + offset] += weight * p_mass
    for I in ti.grouped(grid_m):                  # grid update: gravity, the floor and the box's walls
        if grid_m[I] > 0:
            grid_v[I] = grid_v[I] / grid_m[I] + dt * ti.Vector([0.0, 0.0, -9.81])
            for d in ti.static(range(3)):
                if I[d] < 3 and grid_v[I][d] < 0:
                    grid_v[I][d] = 0
                if I[d] > n_grid - 3 and grid_v[I][d] > 0:
                    grid_v[I][d] = 0
    for p in x:                                   # grid to particles
        base = (x[p] / dx - 0.5).cast(int)
        fx = x[p] / dx - base.cast(float)
        w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
        new_v = ti.Vector.zero(float, 3)
        new_C = ti.Matrix.zero(float, 3, 3)
        for i, j, k in ti.static(ti.ndrange(3, 3, 3)):
            offset = ti.Vector([i, j, k])
            dpos = offset.cast(float) - fx
            g_v = grid_v[base + offset]
            weight = w[i][0] * w[j][1] * w[k][2]
            new_v += weight * g_v
            new_C += 4 * weight * g_v.outer_product(dpos) / dx
        v[p], C[p] = new_v, new_C
        x[p] += dt * v[p]


seed()
for _ in range(20):                               # compile and warm up
    substep()
ti.sync()
steps = 200
start = time.perf_counter()
for _ in range(steps):
    substep()
ti.sync()
ms = 1e3 * (time.perf_counter() - start) / steps
print(json.dumps({"particles": n, "grid": n_grid, "ms": ms, "dt": dt, "ms_per_second": ms / dt}))
