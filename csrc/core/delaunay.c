/* delaunay.c - Delaunay edges through Qhull (see delaunay.h). */
#include "delaunay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

static int compare_edges(const void *pa, const void *pb)
{
    const ts_edge *a = pa, *b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* Qhull's message, minus its trailing newlines, for our own error text. */
static void qhull_message(char *buf, size_t size, char *log, size_t log_size)
{
    size_t len = log_size < size - 1 ? log_size : size - 1;
    memcpy(buf, log ? log : "", log ? len : 0);
    buf[log ? len : 0] = '\0';
    for (char *p = buf; *p; p++)
        if (*p == '\n')
            *p = ' ';
}

static ts_status collect_edges(qhT *qh, size_t n, ts_edge **edges, size_t *count, ts_error *err)
{
    size_t cap = 8 * n + 16, m = 0;
    ts_edge *e = malloc(cap * sizeof *e);
    if (!e)
        return ts_fail(err, TS_ERR_NOMEM, "Delaunay: out of memory for %zu points", n);
    facetT *facet;
    FORALLfacets {
        if (facet->upperdelaunay)
            continue;
        uint32_t id[4];
        int k = 0;
        vertexT *vertex, **vertexp;
        FOREACHvertex_(facet->vertices) {
            if (k < 4)
                id[k] = (uint32_t)qh_pointid(qh, vertex->point);
            k++;
        }
        if (k != 4)
            continue;
        if (m + 6 > cap) {
            cap *= 2;
            ts_edge *grown = realloc(e, cap * sizeof *e);
            if (!grown) {
                free(e);
                return ts_fail(err, TS_ERR_NOMEM, "Delaunay: out of memory for %zu points", n);
            }
            e = grown;
        }
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                uint32_t a = id[i] < id[j] ? id[i] : id[j], b = id[i] < id[j] ? id[j] : id[i];
                e[m++] = (ts_edge){a, b};
            }
    }
    qsort(e, m, sizeof *e, compare_edges);
    size_t unique = 0;
    for (size_t i = 0; i < m; i++)
        if (unique == 0 || compare_edges(&e[unique - 1], &e[i]) != 0)
            e[unique++] = e[i];
    *edges = e;
    *count = unique;
    return TS_OK;
}

ts_status ts_delaunay_edges(const double *points, size_t n, ts_edge **edges, size_t *count, ts_error *err)
{
    *edges = NULL;
    *count = 0;
    if (n < 5)
        return ts_fail(err, TS_ERR_INVALID, "Delaunay: need at least 5 points (got %zu)", n);
    char *log = NULL;
    size_t log_size = 0;
    FILE *errfile = open_memstream(&log, &log_size);
    if (!errfile)
        return ts_fail(err, TS_ERR_NOMEM, "Delaunay: cannot open a message buffer");
    qhT qh_storage, *qh = &qh_storage;
    qh_zero(qh, errfile);
    coordT *copy = malloc(3 * n * sizeof *copy);  /* Qhull may scale its input in place (Qbb) */
    ts_status st = TS_OK;
    if (!copy) {
        st = ts_fail(err, TS_ERR_NOMEM, "Delaunay: out of memory for %zu points", n);
    } else {
        memcpy(copy, points, 3 * n * sizeof *copy);
        char flags[] = "qhull d Qbb Qt Qz";
        int exitcode = qh_new_qhull(qh, 3, (int)n, copy, False, flags, NULL, errfile);
        if (exitcode != 0) {
            fflush(errfile);
            char msg[300];
            qhull_message(msg, sizeof msg, log, log_size);
            st = ts_fail(err, TS_ERR_INVALID, "Delaunay of %zu element centres failed (are they all in one plane?): "
                         "%s", n, msg);
        } else {
            st = collect_edges(qh, n, edges, count, err);
        }
    }
    int curlong, totlong;
    qh_freeqhull(qh, !qh_ALL);
    qh_memfreeshort(qh, &curlong, &totlong);
    fclose(errfile);
    free(log);
    free(copy);
    return st;
}

int ts_edge_incidence(size_t n, const ts_edge *edges, size_t m, uint32_t **start, uint32_t **incident)
{
    *start = calloc(n + 1, sizeof **start);
    *incident = malloc((2 * m + 1) * sizeof **incident);
    uint32_t *fill = malloc((n + 1) * sizeof *fill);
    if (!*start || !*incident || !fill) {
        free(fill);
        return -1;
    }
    for (size_t e = 0; e < m; e++)
        (*start)[edges[e].a + 1]++, (*start)[edges[e].b + 1]++;
    for (size_t i = 0; i < n; i++)
        (*start)[i + 1] += (*start)[i];
    memcpy(fill, *start, n * sizeof *fill);
    for (size_t e = 0; e < m; e++)
        (*incident)[fill[edges[e].a]++] = (uint32_t)e, (*incident)[fill[edges[e].b]++] = (uint32_t)e;
    free(fill);
    return 0;
}
