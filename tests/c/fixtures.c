/* fixtures.c - meshes and checks shared by the C tests. */
#include "fixtures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

box_mesh make_box(const float lo[3], const float hi[3])
{
    box_mesh m;
    for (int i = 0; i < 8; i++) {
        m.vertices[3 * i + 0] = (i & 1) ? hi[0] : lo[0];
        m.vertices[3 * i + 1] = (i & 2) ? hi[1] : lo[1];
        m.vertices[3 * i + 2] = (i & 4) ? hi[2] : lo[2];
    }
    static const int32_t t[36] = {
        0, 2, 1, 1, 2, 3, /* z = lo */
        4, 5, 6, 5, 7, 6, /* z = hi */
        0, 1, 4, 1, 5, 4, /* y = lo */
        2, 6, 3, 3, 6, 7, /* y = hi */
        0, 4, 2, 2, 4, 6, /* x = lo */
        1, 3, 5, 3, 7, 5, /* x = hi */
    };
    for (int i = 0; i < 36; i++)
        m.triangles[i] = t[i];
    return m;
}

void make_sphere(sphere_mesh *m, const float c[3], float r, double *volume)
{
    float *v = m->vertices;
    int32_t *t = m->triangles;
    int nv = 0, nt = 0;
    v[0] = c[0], v[1] = c[1], v[2] = c[2] - r, nv = 1;   /* the south pole, the rings, the north pole */
    for (int i = 1; i < SPHERE_RINGS; i++)
        for (int j = 0; j < SPHERE_SEGMENTS; j++, nv++) {
            const double theta = M_PI * i / SPHERE_RINGS, phi = 2.0 * M_PI * j / SPHERE_SEGMENTS;
            v[3 * nv] = c[0] + r * (float)(sin(theta) * cos(phi));
            v[3 * nv + 1] = c[1] + r * (float)(sin(theta) * sin(phi));
            v[3 * nv + 2] = c[2] - r * (float)cos(theta);
        }
    v[3 * nv] = c[0], v[3 * nv + 1] = c[1], v[3 * nv + 2] = c[2] + r;
    const int north = nv++;
#define RING(i, j) (1 + ((i) - 1) * SPHERE_SEGMENTS + (j) % SPHERE_SEGMENTS)
#define TRIANGLE(a, b, d) (t[3 * nt] = (a), t[3 * nt + 1] = (b), t[3 * nt + 2] = (d), nt++)
    for (int j = 0; j < SPHERE_SEGMENTS; j++) {
        TRIANGLE(0, RING(1, j + 1), RING(1, j));
        for (int i = 1; i < SPHERE_RINGS - 1; i++) {
            TRIANGLE(RING(i, j), RING(i, j + 1), RING(i + 1, j + 1));
            TRIANGLE(RING(i, j), RING(i + 1, j + 1), RING(i + 1, j));
        }
        TRIANGLE(north, RING(SPHERE_RINGS - 1, j), RING(SPHERE_RINGS - 1, j + 1));
    }
#undef TRIANGLE
#undef RING
    double sum = 0.0;   /* the divergence theorem over the triangles */
    for (int k = 0; k < nt; k++) {
        const float *a = v + 3 * t[3 * k], *b = v + 3 * t[3 * k + 1], *d = v + 3 * t[3 * k + 2];
        sum += a[0] * ((double)b[1] * d[2] - (double)b[2] * d[1]) - a[1] * ((double)b[0] * d[2] - (double)b[2] * d[0]) +
               a[2] * ((double)b[0] * d[1] - (double)b[1] * d[0]);
    }
    *volume = sum / 6.0;
}

int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        same = ca == cb;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

int remove_dir(const char *dir)
{
    char cmd[1100];
    if (snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= (int)sizeof cmd)
        return 0;
    return system(cmd) == 0;
}
