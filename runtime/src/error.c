/* Thread-local error and warning state (tl_error.h, tl_runtime.h). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_internal.h"

#define TL_MSG_MAX 2048

/* Only small thread-locals here: the message buffers live on the heap (one
 * per thread, made on first use). A shared library's TLS block may have to
 * come from the loader's small static TLS reserve (libgomp and the
 * dispatcher use initial-exec TLS), so it must stay tiny. */
static _Thread_local tl_error_kind g_kind = TL_OK;
static _Thread_local char *g_msg_buf = NULL;
/* pending warnings: their count is read on every return to Python
 * (tl_pyabi_*), so it is one initial-exec int; the messages are on the heap */
#define TL_MAX_WARNINGS 8
static _Thread_local int g_has_warning __attribute__((tls_model("initial-exec"))) = 0;
static _Thread_local char *g_warning_buf = NULL; /* TL_MAX_WARNINGS messages, oldest first */
static _Thread_local char *g_taken_buf = NULL;   /* the last one taken */
static _Thread_local tl_tensor *g_parked = NULL; /* tl_pyabi_tensor's result */
static char g_msg_fallback[] = "out of memory while formatting an error message";

static char *buffer(char **slot) {
    if (!*slot) *slot = malloc(TL_MSG_MAX);
    return *slot;
}

int (tl_set_error)(tl_error_kind kind, const char *fmt, ...) {   /* parenthesised: not the macro */
    char *msg = buffer(&g_msg_buf);
    if (msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, TL_MSG_MAX, fmt, ap);
        va_end(ap);
    }
    g_kind = kind == TL_OK ? TL_ERR_RUNTIME : kind;
    return -1;
}

tl_error_kind tl_error_kind_get(void) { return g_kind; }

const char *tl_error_message(void) {
    if (g_kind == TL_OK) return "";
    return g_msg_buf ? g_msg_buf : g_msg_fallback;
}

void tl_clear_error(void) {
    g_kind = TL_OK;
    if (g_msg_buf) g_msg_buf[0] = '\0';
}

static void vwarn(const char *fmt, va_list ap) {
    if (!g_warning_buf) g_warning_buf = malloc((size_t)TL_MAX_WARNINGS * TL_MSG_MAX);
    if (!g_warning_buf || g_has_warning == TL_MAX_WARNINGS) return;
    vsnprintf(g_warning_buf + (size_t)g_has_warning * TL_MSG_MAX, TL_MSG_MAX, fmt, ap);
    g_has_warning++;
}

void tl__warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

/* warn-once: a site's flag (0 = never) holds the generation it fired in;
 * it fires again only after tl_reset_warn_once moved the generation on. The
 * compare-exchange lets exactly one of several racing threads warn. */
static _Atomic unsigned g_warn_once_gen = 1;

void tl__warn_once(tl_warn_once_flag *flag, const char *fmt, ...) {
    const unsigned gen = atomic_load_explicit(&g_warn_once_gen, memory_order_relaxed);
    unsigned seen = atomic_load_explicit(flag, memory_order_relaxed);
    if (seen == gen || !atomic_compare_exchange_strong_explicit(flag, &seen, gen, memory_order_relaxed,
                                                                memory_order_relaxed))
        return;
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

void tl_reset_warn_once(void) { atomic_fetch_add_explicit(&g_warn_once_gen, 1, memory_order_relaxed); }

int tl_has_warning(void) { return g_has_warning; }

const char *tl_take_warning(void) {
    if (!g_has_warning) return "";
    char *out = buffer(&g_taken_buf);
    if (!out) {
        g_has_warning = 0;
        return g_msg_fallback;
    }
    memcpy(out, g_warning_buf, TL_MSG_MAX);
    g_has_warning--;
    memmove(g_warning_buf, g_warning_buf + TL_MSG_MAX, (size_t)g_has_warning * TL_MSG_MAX);
    return out;  /* valid until the next tl_take_warning on this thread */
}

/* ------------------------------------------------- the Python boundary */
tl_tensor *tl_pyabi_tensor(tl_tensor *r) {
    if (__builtin_expect(g_has_warning == 0, 1) || !r) return r;
    tl_tensor_release(g_parked); /* none: the binding takes it back at once */
    g_parked = r;
    return NULL;
}

int tl_pyabi_rc(int rc) { return rc == 0 && g_has_warning ? 1 : rc; }

tl_tensor *tl_pyabi_take_parked(void) {
    tl_tensor *r = g_parked;
    g_parked = NULL;
    return r;
}
