/* Thread-local error and warning state (tl_error.h, tl_runtime.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl_internal.h"

#define TL_MSG_MAX 2048

/* Only small thread-locals here: the message buffers live on the heap (one
 * per thread, made on first use). A shared library's TLS block may have to
 * come from the loader's small static TLS reserve (libgomp and the
 * dispatcher use initial-exec TLS), so it must stay tiny. */
static _Thread_local tl_error_kind g_kind = TL_OK;
static _Thread_local char *g_msg_buf = NULL;
static _Thread_local int g_has_warning = 0;
static _Thread_local char *g_warning_buf = NULL;
static char g_msg_fallback[] = "out of memory while formatting an error message";

static char *buffer(char **slot) {
    if (!*slot) *slot = malloc(TL_MSG_MAX);
    return *slot;
}

int tl_set_error(tl_error_kind kind, const char *fmt, ...) {
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

void tl__warn(const char *fmt, ...) {
    char *msg = buffer(&g_warning_buf);
    if (!msg) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, TL_MSG_MAX, fmt, ap);
    va_end(ap);
    g_has_warning = 1;
}

int tl_has_warning(void) { return g_has_warning; }

const char *tl_take_warning(void) {
    if (!g_has_warning) return "";
    g_has_warning = 0;
    return g_warning_buf;  /* valid until the next warning on this thread */
}
