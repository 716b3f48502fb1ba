/* buffer.c - growing arrays (see buffer.h). */
#include "buffer.h"

#include <stdlib.h>

size_t ts_grown_capacity(size_t capacity, size_t need, size_t first)
{
    size_t c = capacity ? capacity : first;
    while (c < need)
        c *= 2;
    return c;
}

int ts_resize(void **p, size_t count, size_t item)
{
    void *q = realloc(*p, (count ? count : 1) * item);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

int ts_grow(void **p, size_t *capacity, size_t need, size_t item)
{
    if (need <= *capacity)
        return 0;
    size_t c = ts_grown_capacity(*capacity, need, 64);
    if (ts_resize(p, c, item) < 0)
        return -1;
    *capacity = c;
    return 0;
}
