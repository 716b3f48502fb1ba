/* fuzz_cache.c - libFuzzer target for the particle cache reader: any byte
 * string must decode cleanly or be refused with a status, never crash,
 * read out of bounds or leak (run under ASan and UBSan by `make test-c`). */
#include <stdint.h>
#include <stdlib.h>

#include "core/cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_frame f;
    ts_error err;
    if (ts_frame_decode(data, size, "fuzz", &f, &err) == TS_OK) {
        for (int i = 0; i < f.attribute_count; i++)
            if (f.count > 0 && !f.attributes[i].data)
                abort();
        ts_frame_free(&f);
    }
    return 0;
}
