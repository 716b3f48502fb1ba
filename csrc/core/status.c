/* status.c - error records shared by every core entry point (see status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ts_error_clear(ts_error *err)
{
    if (!err)
        return;
    err->code = TS_OK;
    err->message[0] = '\0';
}

ts_status ts_fail(ts_error *err, ts_status code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list args;
    va_start(args, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, args);
    va_end(args);
    return code;
}

const char *ts_status_name(ts_status code)
{
    switch (code) {
    case TS_OK: return "ok";
    case TS_ERR_INVALID: return "invalid";
    case TS_ERR_NOMEM: return "out of memory";
    case TS_ERR_IO: return "i/o";
    case TS_ERR_CORRUPT: return "corrupt";
    case TS_ERR_CANCELLED: return "cancelled";
    case TS_ERR_UNSTABLE: return "unstable";
    case TS_ERR_INTERNAL: return "internal";
    }
    return "unknown";
}
