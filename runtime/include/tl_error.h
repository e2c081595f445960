/* torchlet runtime: error reporting.
 *
 * Nothing in the runtime aborts on user error. A failing entry point records a
 * thread-local error (kind + message) and returns its failure value (NULL for
 * pointers, -1 for ints). The Python side reads the error and raises the
 * matching exception type (see runtime/torchlet/_errors.py).
 *
 * This header is cdef-clean (no macros, no includes) except for the guarded
 * printf attribute, so build_ffi.py can feed the declarations to cffi.
 */
#ifndef TL_ERROR_H
#define TL_ERROR_H

typedef enum tl_error_kind {
    TL_OK = 0,
    TL_ERR_RUNTIME = 1,          /* RuntimeError */
    TL_ERR_VALUE = 2,            /* ValueError */
    TL_ERR_INDEX = 3,            /* IndexError */
    TL_ERR_TYPE = 4,             /* TypeError */
    TL_ERR_NOT_IMPLEMENTED = 5,  /* NotImplementedError */
    TL_ERR_MEMORY = 6,           /* MemoryError */
    TL_ERR_CUDA_OOM = 7,         /* torchlet.cuda.OutOfMemoryError (a RuntimeError) */
    TL_ERR_LINALG = 8            /* torchlet.linalg.LinAlgError (a RuntimeError) */
} tl_error_kind;

/* Records an error (printf-style message, truncated to 2 KiB). Returns -1 so
 * callers can write `return tl_set_error(...)`. */
int tl_set_error(tl_error_kind kind, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;
#ifdef __GNUC__
/* Calls spelled so the compiler sees the -1: after `if (helper(&out)) return
 * ...;` it then knows `out` was set, and warns of no maybe-uninitialized use
 * on error paths it cannot otherwise follow into error.c. */
#define tl_set_error(...) __extension__({ tl_set_error(__VA_ARGS__); -1; })
#endif
tl_error_kind tl_error_kind_get(void);   /* TL_OK when no error is pending */
const char *tl_error_message(void);      /* "" when no error is pending */
void tl_clear_error(void);

#endif
