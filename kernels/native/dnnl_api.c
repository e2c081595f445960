/* oneDNN loaded lazily (tl_dnnl.h): dlopen of the library torchlet was
 * pointed at (the installed wheel's libdnnl.so.3), every entry point of
 * dnnl_api.h resolved by name, one CPU engine for the process and one
 * stream per calling thread. A missing library or entry point leaves the
 * table unloaded and says why; nothing fails at import.
 *
 * Threads: the wheel's oneDNN runs on GNU OpenMP. Before each call its
 * thread count is set to torchlet's (tl_get_num_threads), and to 1 inside
 * a torchlet parallel region, so torchlet.set_num_threads(1) means one
 * thread here too (omp_set_num_threads is per calling thread: set when it
 * differs). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnnl_api.h"
#include "tl_dnnl.h"
#include "tl_internal.h"
#include "tl_runtime.h"

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static tl_dnnl_api g_api;
static int g_loaded;
static char g_reason[8192] = "oneDNN was not loaded yet";
static char g_path[4096];
static dnnl_engine_t g_engine;
static void (*g_omp_set)(int);
static int (*g_omp_get)(void);
static atomic_int g_enabled = -1; /* -1: TORCHLET_ONEDNN not read yet */
static _Thread_local dnnl_stream_t t_stream;

void tl_dnnl_set_library(const char *path) {
    if (path) snprintf(g_path, sizeof g_path, "%s", path);
}

static void load(void) {
    const char *path = getenv("TORCHLET_LIBDNNL");
    if (!path || !*path) path = g_path[0] ? g_path : "libdnnl.so.3";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(g_reason, sizeof g_reason, "oneDNN could not be loaded: %s", e ? e : path);
        return;
    }
    static const struct { const char *name; size_t off; } entries[] = {
#define E(n) {"dnnl_" #n, offsetof(tl_dnnl_api, n)}
        E(engine_create), E(stream_create), E(stream_wait), E(memory_desc_create_with_tag),
        E(memory_desc_destroy), E(memory_desc_equal), E(memory_desc_get_size), E(memory_create),
        E(memory_destroy), E(primitive_attr_create), E(primitive_attr_destroy),
        E(primitive_attr_set_scratchpad_mode), E(convolution_forward_primitive_desc_create),
        E(convolution_backward_data_primitive_desc_create), E(convolution_backward_weights_primitive_desc_create),
        E(reorder_primitive_desc_create), E(primitive_desc_query_md), E(primitive_desc_query),
        E(primitive_desc_destroy), E(primitive_create), E(primitive_destroy), E(primitive_execute),
#undef E
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *fn = dlsym(h, entries[i].name);
        if (!fn) {
            snprintf(g_reason, sizeof g_reason, "oneDNN at %s lacks %s (torchlet needs oneDNN 3.x)", path,
                     entries[i].name);
            return;
        }
        memcpy((char *)&g_api + entries[i].off, &fn, sizeof fn);
    }
    /* the OpenMP runtime oneDNN was linked with (absent in a sequential or TBB build: then left alone) */
    *(void **)&g_omp_set = dlsym(h, "omp_set_num_threads");
    *(void **)&g_omp_get = dlsym(h, "omp_get_max_threads");
    if (!g_omp_set || !g_omp_get) g_omp_set = NULL;
    if (g_api.engine_create(&g_engine, TL_DNNL_CPU, 0) != TL_DNNL_SUCCESS) {
        snprintf(g_reason, sizeof g_reason, "oneDNN at %s could not create a CPU engine", path);
        return;
    }
    g_reason[0] = 0;
    g_loaded = 1;
    /* the library stays loaded for the life of the process */
}

int tl_dnnl_is_available(void) {
    pthread_once(&g_once, load);
    return g_loaded;
}

const char *tl_dnnl_unavailable_reason(void) { return tl_dnnl_is_available() ? "" : g_reason; }

int tl_dnnl_enabled(void) {
    int e = atomic_load(&g_enabled);
    if (e < 0) {
        const char *v = getenv("TORCHLET_ONEDNN");
        e = !(v && (!strcmp(v, "0") || !strcmp(v, "OFF") || !strcmp(v, "off")));
        int expect = -1;
        if (!atomic_compare_exchange_strong(&g_enabled, &expect, e)) e = expect;
    }
    return e;
}

void tl_dnnl_set_enabled(int enabled) { atomic_store(&g_enabled, enabled ? 1 : 0); }

const tl_dnnl_api *tl__dnnl(void) {
    if (!tl_dnnl_enabled() || !tl_dnnl_is_available()) return NULL;
    if (!t_stream && g_api.stream_create(&t_stream, g_engine, TL_DNNL_STREAM_DEFAULT) != TL_DNNL_SUCCESS) {
        t_stream = NULL;
        return NULL;
    }
    return &g_api;
}

dnnl_engine_t tl__dnnl_engine(void) { return g_engine; }

dnnl_stream_t tl__dnnl_stream(void) { return t_stream; }

int tl__dnnl_set_threads(void) {
    const int want = tl__in_parallel_region() ? 1 : tl_get_num_threads();
    if (g_omp_set && g_omp_get() != want) g_omp_set(want);
    return want;
}
