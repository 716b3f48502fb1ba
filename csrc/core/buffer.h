/* buffer.h - growing arrays: one place for the doubling realloc that span
 * maps, fragments and the fracture solver's debris each needed.
 *
 * A failed growth leaves the array as it was (still valid, still owned by
 * the caller), so the caller reports "out of memory" and frees as usual.
 */
#ifndef TSUBU_BUFFER_H
#define TSUBU_BUFFER_H

#include <stddef.h>

/* The capacity to grow to: capacity (or `first` when 0) doubled until it holds need. */
size_t ts_grown_capacity(size_t capacity, size_t need, size_t first);

/* Reallocate *p to exactly count items of `item` bytes; 0, or -1 with *p unchanged. */
int ts_resize(void **p, size_t count, size_t item);

/* Make *p hold at least need items (doubling from 64); 0, or -1 with *p and *capacity unchanged. */
int ts_grow(void **p, size_t *capacity, size_t need, size_t item);

#endif
