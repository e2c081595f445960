/* Unit tests of the CUDA caching allocator (runtime/src/cuda/caching_allocator.c)
 * on a host-malloc backend with hand-completed events. Built and run by
 * tests/cuda/test_allocator_c.py; prints one line per check, exits 1 on a failure. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_error.h"

/* the runtime's error channel, recorded here (the allocator alone is under test) */
static tl_error_kind g_kind;
static char g_msg[2048];
int (tl_set_error)(tl_error_kind kind, const char *fmt, ...) {   /* parenthesised: not tl_error.h's macro */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_msg, sizeof g_msg, fmt, ap);
    va_end(ap);
    g_kind = kind;
    return -1;
}

/* ---- the host backend */
typedef struct { int done; } ev;
static size_t g_in_use, g_limit = (size_t)1 << 40;
static int g_raw_allocs, g_raw_frees, g_live_events;
static int be_alloc(void *c, int d, size_t n, void **p) {
    (void)c; (void)d;
    if (g_in_use + n > g_limit) return 1;
    *p = malloc(n + sizeof(size_t));
    *(size_t *)*p = n;
    *p = (char *)*p + sizeof(size_t);
    g_in_use += n;
    g_raw_allocs++;
    return 0;
}
static int be_free(void *c, int d, void *p) {
    (void)c; (void)d;
    char *b = (char *)p - sizeof(size_t);
    g_in_use -= *(size_t *)b;
    free(b);
    g_raw_frees++;
    return 0;
}
static int be_record(void *c, int d, void *s, void **e) {
    (void)c; (void)d; (void)s;
    *e = calloc(1, sizeof(ev));
    g_live_events++;
    return 0;
}
static int be_query(void *c, void *e) { (void)c; return ((ev *)e)->done; }
static int be_sync(void *c, void *e) { (void)c; ((ev *)e)->done = 1; return 0; }
static void be_destroy(void *c, void *e) { (void)c; free(e); g_live_events--; }
static int be_info(void *c, int d, size_t *f, size_t *t) {
    (void)c; (void)d;
    *t = g_limit;
    *f = g_limit - g_in_use;
    return 0;
}
static ev *g_last_events[64];
static int g_nlast;
static int be_record_keep(void *c, int d, void *s, void **e) {
    be_record(c, d, s, e);
    g_last_events[g_nlast++] = *e;
    return 0;
}

static int g_fail, g_checks;
#define CHECK(cond)                                                                 \
    do {                                                                            \
        g_checks++;                                                                 \
        if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); g_fail = 1; } \
    } while (0)

#define MiB ((size_t)1 << 20)
static void *S1 = (void *)0x1000, *S2 = (void *)0x2000;   /* stream handles (opaque) */

static tl_caching_allocator *fresh(void) {
    static tl_cuda_alloc_backend be = {NULL, be_alloc, be_free, be_record_keep, be_query, be_sync, be_destroy, be_info};
    g_in_use = 0;
    g_limit = (size_t)1 << 40;
    g_raw_allocs = g_raw_frees = 0;
    g_nlast = 0;
    return tl_caching_allocator_new(&be, 2);
}

static tl_cuda_alloc_stats stats(tl_caching_allocator *a, int d) {
    tl_cuda_alloc_stats s;
    tl_caching_allocator_stats(a, d, &s);
    return s;
}

static void test_sizes(void) {
    CHECK(tl_caching_round_size(1) == 512);
    CHECK(tl_caching_round_size(512) == 512);
    CHECK(tl_caching_round_size(513) == 1024);
    CHECK(tl_caching_allocation_size(512) == 2 * MiB);
    CHECK(tl_caching_allocation_size(MiB) == 2 * MiB);
    CHECK(tl_caching_allocation_size(MiB + 512) == 20 * MiB);
    CHECK(tl_caching_allocation_size(10 * MiB - 512) == 20 * MiB);
    CHECK(tl_caching_allocation_size(10 * MiB) == 10 * MiB);
    CHECK(tl_caching_allocation_size(10 * MiB + 512) == 12 * MiB);
    puts("ok sizes");
}

static void test_small_pool(void) {
    tl_caching_allocator *a = fresh();
    char *p = tl_caching_allocator_malloc(a, 0, 100, S1);
    char *q = tl_caching_allocator_malloc(a, 0, 1000, S1);
    CHECK(p && q);
    CHECK(g_raw_allocs == 1);                 /* one 2 MiB segment */
    CHECK(q == p + 512);                      /* split: the remainder follows */
    tl_cuda_alloc_stats s = stats(a, 0);
    CHECK(s.allocated == 512 + 1024);
    CHECK(s.reserved == (int64_t)(2 * MiB));
    CHECK(tl_caching_allocator_free(a, p) == 0);
    char *r = tl_caching_allocator_malloc(a, 0, 200, S1);   /* best fit: the freed 512 B block */
    CHECK(r == p);
    tl_caching_allocator_free(a, r);
    tl_caching_allocator_free(a, q);
    s = stats(a, 0);
    CHECK(s.allocated == 0);
    CHECK(s.n_blocks_free == 1);              /* merged back into one 2 MiB block */
    CHECK(s.max_allocated == 512 + 1024);
    CHECK(tl_caching_allocator_empty_cache(a) == 0);
    CHECK(g_raw_frees == 1 && stats(a, 0).reserved == 0);
    CHECK(tl_caching_allocator_malloc(a, 0, 0, S1) == NULL);  /* 0 bytes: NULL, no segment */
    CHECK(g_raw_allocs == 1);
    tl_caching_allocator_destroy(a);
    puts("ok small pool: split, best fit, merge, empty_cache");
}

static void test_large_pool(void) {
    tl_caching_allocator *a = fresh();
    char *p = tl_caching_allocator_malloc(a, 0, 5 * MiB, S1);
    char *q = tl_caching_allocator_malloc(a, 0, 5 * MiB, S1);
    CHECK(g_raw_allocs == 1);                 /* 20 MiB segment for 1-10 MiB requests */
    CHECK(q == p + 5 * MiB);
    CHECK(stats(a, 0).reserved == (int64_t)(20 * MiB));
    char *big = tl_caching_allocator_malloc(a, 0, 12 * MiB + 1, S1);
    CHECK(g_raw_allocs == 2 && stats(a, 0).reserved == (int64_t)(34 * MiB));  /* 14 MiB: 2 MiB rounding */
    /* remainder <= 1 MiB is not split off in the large pool */
    tl_caching_allocator_free(a, big);
    char *big2 = tl_caching_allocator_malloc(a, 0, 13 * MiB + 512, S1);
    CHECK(big2 == big);
    CHECK(stats(a, 0).allocated == (int64_t)(10 * MiB + 14 * MiB));
    /* a small request never comes from the large pool */
    char *sm = tl_caching_allocator_malloc(a, 0, 4096, S1);
    CHECK(g_raw_allocs == 3);
    tl_caching_allocator_free(a, sm);
    tl_caching_allocator_free(a, big2);
    tl_caching_allocator_free(a, p);
    tl_caching_allocator_free(a, q);
    CHECK(stats(a, 0).allocated == 0);
    tl_caching_allocator_empty_cache(a);
    CHECK(g_in_use == 0 && stats(a, 0).reserved == 0 && stats(a, 0).n_segments == 0);
    tl_caching_allocator_destroy(a);
    puts("ok large pool: 20 MiB segments, 2 MiB rounding, split threshold");
}

static void test_streams(void) {
    tl_caching_allocator *a = fresh();
    char *p = tl_caching_allocator_malloc(a, 0, 100, S1);
    tl_caching_allocator_free(a, p);
    char *q = tl_caching_allocator_malloc(a, 0, 100, S2);   /* a block freed on S1 is not S2's */
    CHECK(q != p && g_raw_allocs == 2);
    char *r = tl_caching_allocator_malloc(a, 0, 100, S1);
    CHECK(r == p);
    tl_caching_allocator_free(a, q);
    tl_caching_allocator_free(a, r);
    /* devices are separate */
    char *d1 = tl_caching_allocator_malloc(a, 1, 100, S1);
    CHECK(d1 && g_raw_allocs == 3 && tl_caching_allocator_device_of(a, d1) == 1);
    CHECK(stats(a, 1).allocated == 512 && stats(a, 0).allocated == 0);
    tl_caching_allocator_free(a, d1);
    tl_caching_allocator_destroy(a);
    puts("ok per-stream and per-device pools");
}

static void test_record_stream(void) {
    tl_caching_allocator *a = fresh();
    char *p = tl_caching_allocator_malloc(a, 0, 100, S1);
    CHECK(tl_caching_allocator_record_stream(a, p, S2) == 0);
    CHECK(tl_caching_allocator_record_stream(a, p, S2) == 0);   /* once per stream */
    CHECK(tl_caching_allocator_record_stream(a, p, S1) == 0);   /* the allocation stream: nothing */
    tl_caching_allocator_free(a, p);
    CHECK(g_nlast == 1);                      /* one event, on S2 */
    CHECK(stats(a, 0).n_pending_events == 1);
    char *q = tl_caching_allocator_malloc(a, 0, 100, S1);
    CHECK(q != p);                            /* still in use on S2 */
    g_last_events[0]->done = 1;               /* S2's work finished */
    char *r = tl_caching_allocator_malloc(a, 0, 100, S1);
    CHECK(r == p);
    CHECK(stats(a, 0).n_pending_events == 0 && g_live_events == 0);
    tl_caching_allocator_free(a, q);
    tl_caching_allocator_free(a, r);
    /* empty_cache waits for pending events, then frees */
    p = tl_caching_allocator_malloc(a, 0, 100, S1);
    tl_caching_allocator_record_stream(a, p, S2);
    tl_caching_allocator_free(a, p);
    CHECK(stats(a, 0).n_pending_events == 1);
    tl_caching_allocator_empty_cache(a);
    CHECK(stats(a, 0).n_pending_events == 0 && stats(a, 0).reserved == 0 && g_in_use == 0);
    CHECK(tl_caching_allocator_record_stream(a, (void *)0x10, S2) == -1 && g_kind == TL_ERR_RUNTIME);
    tl_caching_allocator_destroy(a);
    puts("ok record_stream defers reuse until the events complete");
}

static void test_oom(void) {
    tl_caching_allocator *a = fresh();
    g_limit = 21 * MiB;
    char *p = tl_caching_allocator_malloc(a, 0, 100, S1);   /* a 2 MiB segment */
    tl_caching_allocator_free(a, p);                        /* cached */
    char *big = tl_caching_allocator_malloc(a, 0, 5 * MiB, S1);   /* 20 MiB: fits after the cache is freed */
    CHECK(big != NULL);
    tl_cuda_alloc_stats s = stats(a, 0);
    CHECK(s.n_alloc_retries == 1 && s.reserved == (int64_t)(20 * MiB) && s.n_ooms == 0);
    g_kind = TL_OK;
    char *none = tl_caching_allocator_malloc(a, 0, 3 * MiB, S2);  /* another 20 MiB: no */
    CHECK(none == NULL && g_kind == TL_ERR_CUDA_OOM);
    CHECK(strncmp(g_msg, "CUDA out of memory. Tried to allocate 3.00 MiB. GPU 0 has a total capacity of 21.00 MiB "
                         "of which 1024.00 KiB is free.", 100) == 0);   /* PyTorch's format_size */
    CHECK(stats(a, 0).n_ooms == 1);
    CHECK(tl_caching_allocator_malloc(a, 0, (size_t)1 << 63, S1) == NULL && g_kind == TL_ERR_CUDA_OOM);
    tl_caching_allocator_free(a, big);
    tl_caching_allocator_destroy(a);
    puts("ok out of memory: free-and-retry, then PyTorch's message");
}

static void test_peaks_and_errors(void) {
    tl_caching_allocator *a = fresh();
    char *p = tl_caching_allocator_malloc(a, 0, 3000, S1);
    char *q = tl_caching_allocator_malloc(a, 0, 3000, S1);
    tl_caching_allocator_free(a, p);
    tl_cuda_alloc_stats s = stats(a, 0);
    CHECK(s.allocated == 3072 && s.max_allocated == 6144);
    tl_caching_allocator_reset_peak(a, 0);
    CHECK(stats(a, 0).max_allocated == 3072 && stats(a, 0).max_reserved == (int64_t)(2 * MiB));
    CHECK(tl_caching_allocator_free(a, p) == -1 && g_kind == TL_ERR_RUNTIME);   /* double free */
    CHECK(tl_caching_allocator_free(a, NULL) == 0);
    CHECK(tl_caching_allocator_malloc(a, 5, 10, S1) == NULL && strstr(g_msg, "invalid device ordinal"));
    tl_caching_allocator_free(a, q);
    tl_caching_allocator_destroy(a);
    puts("ok peaks, reset, bad frees and devices");
}

/* random traffic: live blocks never overlap, and everything merges back */
static void test_random(void) {
    tl_caching_allocator *a = fresh();
    enum { N = 300 };
    char *live[N] = {0};
    size_t sz[N] = {0};
    unsigned x = 12345;
    for (int it = 0; it < 20000; it++) {
        x = x * 1103515245u + 12345u;
        int i = (int)((x >> 8) % N);
        if (live[i]) {
            tl_caching_allocator_free(a, live[i]);
            live[i] = NULL;
        } else {
            x = x * 1103515245u + 12345u;
            size_t n = (x >> 4) % 4 == 0 ? ((x >> 8) % (12 * MiB)) + 1 : ((x >> 8) % 70000) + 1;
            live[i] = tl_caching_allocator_malloc(a, 0, n, (x >> 3) % 3 == 0 ? S2 : S1);
            sz[i] = n;
            if (!live[i]) { CHECK(0); break; }
            memset(live[i], i & 0xff, n);   /* the backend memory is real: writes must stay in bounds */
        }
    }
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            if (live[i] && live[j]) CHECK(live[i] + sz[i] <= live[j] || live[j] + sz[j] <= live[i]);
    for (int i = 0; i < N; i++) tl_caching_allocator_free(a, live[i]);
    tl_cuda_alloc_stats s = stats(a, 0);
    CHECK(s.allocated == 0);
    CHECK(s.n_blocks_free == s.n_segments);   /* every segment merged back into one block */
    tl_caching_allocator_empty_cache(a);
    CHECK(g_in_use == 0 && stats(a, 0).reserved == 0);
    tl_caching_allocator_destroy(a);
    puts("ok random traffic");
}

int main(void) {
    test_sizes();
    test_small_pool();
    test_large_pool();
    test_streams();
    test_record_stream();
    test_oom();
    test_peaks_and_errors();
    test_random();
    printf("%d checks, %s\n", g_checks, g_fail ? "FAILED" : "passed");
    return g_fail;
}
