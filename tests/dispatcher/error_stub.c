/* Test-only stand-in for runtime/src/error.c, used by test_dispatch_core.py
 * when that file does not exist (the dispatcher is tested on its own). */
#include <stdarg.h>
#include <stdio.h>

#include "tl_error.h"

static _Thread_local tl_error_kind g_kind = TL_OK;
static _Thread_local char g_msg[2048];

int (tl_set_error)(tl_error_kind kind, const char *fmt, ...) {   /* parenthesised: not tl_error.h's macro */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_msg, sizeof g_msg, fmt, ap);
    va_end(ap);
    g_kind = kind == TL_OK ? TL_ERR_RUNTIME : kind;
    return -1;
}

tl_error_kind tl_error_kind_get(void) { return g_kind; }
const char *tl_error_message(void) { return g_kind == TL_OK ? "" : g_msg; }
void tl_clear_error(void) {
    g_kind = TL_OK;
    g_msg[0] = 0;
}
