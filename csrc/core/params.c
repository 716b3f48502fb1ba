/* params.c - defaults and range checks from a solver's parameter table (see params.h). */
#include "params.h"

#include <math.h>
#include <string.h>

void ts_params_default(const ts_param_table *t, void *params)
{
    memset(params, 0, t->size);
    for (size_t k = 0; k < t->count; k++) {
        const ts_param_def *d = &t->defs[k];
        void *f = ts_param_field(d, params);
        switch (d->type) {
        case TS_PARAM_REAL: *(double *)f = d->fallback[0]; break;
        case TS_PARAM_INT:
        case TS_PARAM_BOOL:
        case TS_PARAM_ENUM: *(int *)f = (int)d->fallback[0]; break;
        case TS_PARAM_LONG: *(long *)f = (long)d->fallback[0]; break;
        case TS_PARAM_VEC3: memcpy(f, d->fallback, 3 * sizeof(double)); break;
        case TS_PARAM_SEED: *(uint64_t *)f = (uint64_t)d->fallback[0]; break;
        }
    }
}

static int within(const ts_param_def *d, double v) { return isfinite(v) && v >= d->min && v <= d->max; }

ts_status ts_params_check(const ts_param_table *t, const void *params, ts_error *err)
{
    for (size_t k = 0; k < t->count; k++) {
        const ts_param_def *d = &t->defs[k];
        const void *f = ts_param_field_const(d, params);
        double v = 0.0;
        switch (d->type) {
        case TS_PARAM_REAL: v = *(const double *)f; break;
        case TS_PARAM_INT: v = *(const int *)f; break;
        case TS_PARAM_LONG: v = (double)*(const long *)f; break;
        case TS_PARAM_BOOL:
            if (*(const int *)f != 0 && *(const int *)f != 1)
                return ts_fail(err, TS_ERR_INVALID, "%s: %s must be 0 or 1 (got %d)", t->effect, d->name,
                               *(const int *)f);
            continue;
        case TS_PARAM_ENUM: {
            int i = *(const int *)f, n = 0;
            while (n < TS_PARAM_MAX_ITEMS && d->items[n])
                n++;
            if (i < 0 || i >= n)
                return ts_fail(err, TS_ERR_INVALID, "%s: %s must be one of its %d choices (got %d)", t->effect,
                               d->name, n, i);
            continue;
        }
        case TS_PARAM_VEC3: {
            const double *x = f;
            for (int a = 0; a < 3; a++)
                if (!within(d, x[a]))
                    return ts_fail(err, TS_ERR_INVALID, "%s: %s must have each component within %g and %g "
                                   "(got %g, %g, %g)", t->effect, d->name, d->min, d->max, x[0], x[1], x[2]);
            continue;
        }
        case TS_PARAM_SEED: continue;
        }
        if (!within(d, v))
            return ts_fail(err, TS_ERR_INVALID, "%s: %s must be within %g and %g (got %g)", t->effect, d->name,
                           d->min, d->max, v);
    }
    return TS_OK;
}

const ts_param_def *ts_param_find(const ts_param_table *t, const char *name)
{
    for (size_t k = 0; k < t->count; k++)
        if (strcmp(t->defs[k].name, name) == 0)
            return &t->defs[k];
    return NULL;
}

int ts_param_enum_index(const ts_param_def *d, const char *item)
{
    for (int i = 0; i < TS_PARAM_MAX_ITEMS && d->items[i]; i++)
        if (strcmp(d->items[i], item) == 0)
            return i;
    return -1;
}
