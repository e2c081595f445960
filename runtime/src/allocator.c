/* CPU allocator: 64-byte aligned blocks; freed large blocks are kept in a small
 * cache and handed out again for the same size class, so `c = a + b` on big
 * tensors does not pay page faults (and zeroing by the kernel) on every call.
 * Blocks of 4 MiB and more are mapped for themselves, 2 MiB aligned and
 * advised for transparent huge pages, which cuts page faults on first touch by
 * up to 512x and TLB misses on every pass. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tl_internal.h"

#define TL_CACHE_SLOTS 64
#define TL_HUGE_MIN (4ll << 20)
#define TL_HUGE_ALIGN (2ll << 20)

typedef struct { void *ptr; int64_t size; uint64_t stamp; } tl_cache_entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tl_cache_entry g_cache[TL_CACHE_SLOTS];
static int g_ncached = 0;
static uint64_t g_stamp = 0;
static int64_t g_threshold = 1ll << 20;
static int64_t g_limit = -1;   /* -1: not yet computed */
static int64_t g_cached_bytes = 0;
static int64_t g_allocated = 0, g_n_allocs = 0, g_n_hits = 0, g_n_sys = 0;

static int64_t default_limit(void) {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int64_t phys = (pages > 0 && psz > 0) ? (int64_t)pages * psz : (8ll << 30);
    int64_t lim = phys / 4;
    return lim < (2ll << 30) ? lim : (2ll << 30);
}

/* size class: 64-byte multiples below 64 KiB, then steps of 1/8 of the power of two */
static int64_t alloc_size(int64_t n) {
    if (n < (64 << 10)) return (n + 63) & ~(int64_t)63;
    int64_t p = 1;
    while (p < n) p <<= 1;
    int64_t step = p >> 3;
    if (step < 4096) step = 4096;
    return (n + step - 1) / step * step;
}

/* Blocks of TL_HUGE_MIN and more are mapped for themselves (mmap), 2 MiB
 * aligned and advised for transparent huge pages. From malloc they came out
 * of the heap once glibc's dynamic mmap threshold had risen (it does after
 * any large free, e.g. during `import torchlet`): memory already faulted in
 * 4 KiB pages, so the advice found nothing to back with huge pages, and an
 * L3-resident `add(out=)` of 2^20 float32 ran ~20% slower from TLB misses.
 * Under AddressSanitizer they stay malloc blocks, which it checks. */
#if defined(MADV_HUGEPAGE) && !defined(__SANITIZE_ADDRESS__)
#define TL_HUGE_MMAP 1
#else
#define TL_HUGE_MMAP 0
#endif

static void *sys_alloc(int64_t size) {
#if TL_HUGE_MMAP
    if (size >= TL_HUGE_MIN) {
        const size_t len = (size_t)size, span = len + (size_t)TL_HUGE_ALIGN;
        char *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        char *p = (char *)(((uintptr_t)m + (uintptr_t)(TL_HUGE_ALIGN - 1)) & ~(uintptr_t)(TL_HUGE_ALIGN - 1));
        if (p > m) munmap(m, (size_t)(p - m));
        if (m + span > p + len) munmap(p + len, (size_t)(m + span - (p + len)));
        madvise(p, len, MADV_HUGEPAGE);
        return p;
    }
#endif
    void *p = NULL;
    size_t align = size >= TL_HUGE_MIN ? (size_t)TL_HUGE_ALIGN : (size_t)TL_ALIGNMENT;
    if (posix_memalign(&p, align, (size_t)size) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    if (size >= TL_HUGE_MIN) madvise(p, (size_t)size, MADV_HUGEPAGE);
#endif
    return p;
}

/* size: the block's alloc_size, which says how sys_alloc got it */
static void sys_free(void *p, int64_t size) {
#if TL_HUGE_MMAP
    if (size >= TL_HUGE_MIN) {
        munmap(p, (size_t)size);
        return;
    }
#endif
    (void)size;
    free(p);
}

void *tl_alloc(int64_t nbytes) {
    if (nbytes <= 0) {
        if (nbytes < 0) tl_set_error(TL_ERR_RUNTIME, "Trying to create tensor with negative dimension");
        return NULL;
    }
    if (nbytes > (INT64_MAX >> 2)) {
        tl_set_error(TL_ERR_MEMORY, "DefaultCPUAllocator: not enough memory: you tried to allocate %lld bytes.",
                     (long long)nbytes);
        return NULL;
    }
    int64_t size = alloc_size(nbytes);
    void *p = NULL;
    if (size < __atomic_load_n(&g_threshold, __ATOMIC_RELAXED)) {
        /* small blocks never touch the cache: no lock */
        p = sys_alloc(size);
        if (!p) {
            tl_set_error(TL_ERR_MEMORY, "DefaultCPUAllocator: not enough memory: you tried to allocate %lld bytes.",
                         (long long)nbytes);
            return NULL;
        }
        __atomic_add_fetch(&g_n_allocs, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&g_n_sys, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&g_allocated, size, __ATOMIC_RELAXED);
        return p;
    }
    pthread_mutex_lock(&g_lock);
    __atomic_add_fetch(&g_n_allocs, 1, __ATOMIC_RELAXED);
    {
        for (int i = 0; i < g_ncached; i++) {
            if (g_cache[i].size == size) {
                p = g_cache[i].ptr;
                g_cached_bytes -= size;
                g_cache[i] = g_cache[--g_ncached];
                g_n_hits++;
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (p) __atomic_add_fetch(&g_allocated, size, __ATOMIC_RELAXED);
    if (p) return p;
    p = sys_alloc(size);
    if (!p) {
        /* give the cache back to the system and try once more */
        tl_allocator_empty_cache();
        p = sys_alloc(size);
    }
    if (!p) {
        tl_set_error(TL_ERR_MEMORY, "DefaultCPUAllocator: not enough memory: you tried to allocate %lld bytes.",
                     (long long)nbytes);
        return NULL;
    }
    __atomic_add_fetch(&g_allocated, size, __ATOMIC_RELAXED);
    __atomic_add_fetch(&g_n_sys, 1, __ATOMIC_RELAXED);
    return p;
}

void tl_free(void *p, int64_t nbytes) {
    if (!p) return;
    int64_t size = alloc_size(nbytes);
    __atomic_sub_fetch(&g_allocated, size, __ATOMIC_RELAXED);
    if (size < __atomic_load_n(&g_threshold, __ATOMIC_RELAXED)) {
        sys_free(p, size);
        return;
    }
    tl_cache_entry evict[TL_CACHE_SLOTS];
    int nevict = 0;
    int cached = 0;
    pthread_mutex_lock(&g_lock);
    if (g_limit < 0) g_limit = default_limit();
    if (size >= g_threshold && size <= g_limit) {
        /* evict oldest entries until it fits */
        while (g_ncached > 0 && (g_ncached == TL_CACHE_SLOTS || g_cached_bytes + size > g_limit)) {
            int old = 0;
            for (int i = 1; i < g_ncached; i++)
                if (g_cache[i].stamp < g_cache[old].stamp) old = i;
            evict[nevict++] = g_cache[old];
            g_cached_bytes -= g_cache[old].size;
            g_cache[old] = g_cache[--g_ncached];
        }
        g_cache[g_ncached].ptr = p;
        g_cache[g_ncached].size = size;
        g_cache[g_ncached].stamp = ++g_stamp;
        g_ncached++;
        g_cached_bytes += size;
        cached = 1;
    }
    pthread_mutex_unlock(&g_lock);
    for (int i = 0; i < nevict; i++) sys_free(evict[i].ptr, evict[i].size);
    if (!cached) sys_free(p, size);
}

void tl_allocator_empty_cache(void) {
    tl_cache_entry blocks[TL_CACHE_SLOTS];
    int n;
    pthread_mutex_lock(&g_lock);
    n = g_ncached;
    for (int i = 0; i < n; i++) blocks[i] = g_cache[i];
    g_ncached = 0;
    g_cached_bytes = 0;
    pthread_mutex_unlock(&g_lock);
    for (int i = 0; i < n; i++) sys_free(blocks[i].ptr, blocks[i].size);
}

void tl_allocator_set_cache(int64_t threshold, int64_t limit) {
    pthread_mutex_lock(&g_lock);
    __atomic_store_n(&g_threshold, threshold < 4096 ? 4096 : threshold, __ATOMIC_RELAXED);
    g_limit = limit < 0 ? default_limit() : limit;
    pthread_mutex_unlock(&g_lock);
    tl_allocator_empty_cache();
}

void tl_allocator_get_stats(tl_allocator_stats *out) {
    pthread_mutex_lock(&g_lock);
    out->allocated_bytes = __atomic_load_n(&g_allocated, __ATOMIC_RELAXED);
    out->cached_bytes = g_cached_bytes;
    out->cached_blocks = g_ncached;
    out->n_allocs = __atomic_load_n(&g_n_allocs, __ATOMIC_RELAXED);
    out->n_cache_hits = g_n_hits;
    out->n_system_allocs = __atomic_load_n(&g_n_sys, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_lock);
}

static void atfork_child(void) { pthread_mutex_init(&g_lock, NULL); }

__attribute__((constructor)) static void allocator_init(void) {
    pthread_atfork(NULL, NULL, atfork_child);
}
