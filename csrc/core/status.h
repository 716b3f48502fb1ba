/* status.h - how every C entry point of the Tsubu core reports failure.
 *
 * A function that can fail returns a ts_status and fills a caller-owned
 * ts_error with a human-readable message naming what was wrong (the
 * parameter, object, file or frame). Nothing in the core aborts, exits or
 * prints: the caller (C test, Python binding) decides what to show.
 */
#ifndef TSUBU_STATUS_H
#define TSUBU_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ts_status {
    TS_OK = 0,
    TS_ERR_INVALID = 1,   /* a parameter or input is out of range or malformed */
    TS_ERR_NOMEM = 2,     /* an allocation failed or a memory budget was exceeded */
    TS_ERR_IO = 3,        /* a file could not be opened, written or renamed */
    TS_ERR_CORRUPT = 4,   /* a file exists but is truncated, damaged or foreign */
    TS_ERR_CANCELLED = 5, /* the progress callback asked to stop */
    TS_ERR_UNSTABLE = 6,  /* the simulation produced NaN/inf or exploded */
    TS_ERR_INTERNAL = 7   /* a library the core calls failed unexpectedly */
} ts_status;

#define TS_ERROR_MESSAGE_SIZE 512

typedef struct ts_error {
    ts_status code;
    char message[TS_ERROR_MESSAGE_SIZE];
} ts_error;

/* Clear an error record before use. */
void ts_error_clear(ts_error *err);

/* Record a failure (printf-style message) and return its code, so that
 * callers can write `return ts_fail(err, TS_ERR_INVALID, "...", ...);`.
 * err may be NULL, in which case only the code is returned. */
ts_status ts_fail(ts_error *err, ts_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A short name for a status code ("invalid", "corrupt", ...). */
const char *ts_status_name(ts_status code);

#ifdef __cplusplus
}
#endif

#endif
