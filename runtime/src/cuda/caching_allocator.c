/* A caching device-memory allocator with PyTorch's rules
 * (c10/cuda/CUDACachingAllocator.cpp), written against a small backend
 * (cuda_internal.h) so tests drive it with host memory and fake events.
 *
 * Requests are rounded up to 512 B. Requests up to 1 MiB come from the small
 * pool, carved out of 2 MiB segments; larger ones from the large pool: 20 MiB
 * segments for 1-10 MiB, else the size rounded up to 2 MiB. A request takes
 * the best-fitting free block of its pool that was allocated on the same
 * stream (smallest size, then lowest address); a block bigger than needed is
 * split (small pool: remainder >= 512 B, large pool: remainder > 1 MiB), and a
 * freed block merges with its free neighbours of the same segment. A block used
 * on other streams (record_stream) is freed only after an event recorded on
 * each of them at free time has completed. When the backend is out of memory,
 * the cached unsplit segments are released (after the pending events are
 * waited for) and the allocation retried once; then a TL_ERR_CUDA_OOM error
 * with PyTorch's wording. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "tl_error.h"

#define K_MIN_BLOCK ((size_t)512)
#define K_SMALL_SIZE ((size_t)1 << 20)
#define K_SMALL_BUFFER ((size_t)2 << 20)
#define K_MIN_LARGE_ALLOC ((size_t)10 << 20)
#define K_LARGE_BUFFER ((size_t)20 << 20)
#define K_ROUND_LARGE ((size_t)2 << 20)

typedef struct block {
    int device, pool;            /* pool: 0 small, 1 large */
    void *stream;                /* the stream it was allocated on */
    size_t size;                 /* bytes of the block (rounded) */
    char *ptr;
    int allocated;
    int event_count;             /* pending record_stream events */
    struct block *prev, *next;   /* neighbours in the same segment */
    void **uses;                 /* other streams that used it (record_stream) */
    int nuses, capuses;
} block;

/* free blocks of one pool, sorted by (stream, size, ptr) */
typedef struct { block **v; int n, cap; } block_set;

typedef struct { void *event; block *b; } pending_event;

typedef struct {
    block_set pools[2];
    pending_event *events;
    int nevents, capevents;
    tl_cuda_alloc_stats st;
} device_state;

/* allocated blocks by pointer: open addressing, linear probing */
typedef struct { block **slots; size_t cap, n; } block_map;

struct tl_caching_allocator {
    tl_cuda_alloc_backend be;
    int ndevices;
    device_state *dev;
    block_map live;
    pthread_mutex_t lock;
};

size_t tl_caching_round_size(size_t n) {
    return n < K_MIN_BLOCK ? K_MIN_BLOCK : (n + K_MIN_BLOCK - 1) / K_MIN_BLOCK * K_MIN_BLOCK;
}

size_t tl_caching_allocation_size(size_t rounded) {
    if (rounded <= K_SMALL_SIZE) return K_SMALL_BUFFER;
    if (rounded < K_MIN_LARGE_ALLOC) return K_LARGE_BUFFER;
    return (rounded + K_ROUND_LARGE - 1) / K_ROUND_LARGE * K_ROUND_LARGE;
}

/* ---------------------------------------------------------------- block set */
static int block_less(const block *a, const block *b) {
    if (a->stream != b->stream) return (uintptr_t)a->stream < (uintptr_t)b->stream;
    if (a->size != b->size) return a->size < b->size;
    return (uintptr_t)a->ptr < (uintptr_t)b->ptr;
}

static int set_lower_bound(const block_set *s, const block *key) {
    int lo = 0, hi = s->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (block_less(s->v[mid], key)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int set_insert(block_set *s, block *b) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 32;
        block **v = realloc(s->v, sizeof *v * (size_t)cap);
        if (!v) return tl_set_error(TL_ERR_MEMORY, "out of memory in the CUDA caching allocator");
        s->v = v;
        s->cap = cap;
    }
    int i = set_lower_bound(s, b);
    memmove(s->v + i + 1, s->v + i, sizeof *s->v * (size_t)(s->n - i));
    s->v[i] = b;
    s->n++;
    return 0;
}

static void set_erase(block_set *s, block *b) {
    int i = set_lower_bound(s, b);
    if (i < s->n && s->v[i] == b) {
        memmove(s->v + i, s->v + i + 1, sizeof *s->v * (size_t)(s->n - i - 1));
        s->n--;
    }
}

/* ---------------------------------------------------------------- live map */
static size_t hash_ptr(const void *p, size_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static int map_grow(block_map *m) {
    size_t cap = m->cap ? 2 * m->cap : 256;
    block **slots = calloc(cap, sizeof *slots);
    if (!slots) return tl_set_error(TL_ERR_MEMORY, "out of memory in the CUDA caching allocator");
    for (size_t i = 0; i < m->cap; i++) {
        block *b = m->slots[i];
        if (!b) continue;
        size_t j = hash_ptr(b->ptr, cap);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = b;
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

static int map_put(block_map *m, block *b) {
    if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0) return -1;
    size_t j = hash_ptr(b->ptr, m->cap);
    while (m->slots[j]) j = (j + 1) & (m->cap - 1);
    m->slots[j] = b;
    m->n++;
    return 0;
}

static block *map_get(const block_map *m, const void *p) {
    if (!m->cap) return NULL;
    size_t j = hash_ptr(p, m->cap);
    while (m->slots[j]) {
        if (m->slots[j]->ptr == p) return m->slots[j];
        j = (j + 1) & (m->cap - 1);
    }
    return NULL;
}

static block *map_take(block_map *m, const void *p) {
    if (!m->cap) return NULL;
    size_t j = hash_ptr(p, m->cap);
    while (m->slots[j] && m->slots[j]->ptr != p) j = (j + 1) & (m->cap - 1);
    block *b = m->slots[j];
    if (!b) return NULL;
    m->slots[j] = NULL;
    m->n--;
    /* re-insert the rest of the probe run (deletion without tombstones) */
    for (size_t k = (j + 1) & (m->cap - 1); m->slots[k]; k = (k + 1) & (m->cap - 1)) {
        block *r = m->slots[k];
        m->slots[k] = NULL;
        size_t h = hash_ptr(r->ptr, m->cap);
        while (m->slots[h]) h = (h + 1) & (m->cap - 1);
        m->slots[h] = r;
    }
    return b;
}

/* ---------------------------------------------------------------- lifecycle */
tl_caching_allocator *tl_caching_allocator_new(const tl_cuda_alloc_backend *backend, int ndevices) {
    tl_caching_allocator *a = calloc(1, sizeof *a);
    if (!a || ndevices <= 0 || !(a->dev = calloc((size_t)ndevices, sizeof *a->dev))) {
        free(a);
        tl_set_error(TL_ERR_MEMORY, "out of memory creating the CUDA caching allocator");
        return NULL;
    }
    a->be = *backend;
    a->ndevices = ndevices;
    pthread_mutex_init(&a->lock, NULL);
    return a;
}

static void stat_add(int64_t *cur, int64_t *peak, int64_t delta) {
    *cur += delta;
    if (*cur > *peak) *peak = *cur;
}

static void release_segment(tl_caching_allocator *a, block *b) {
    device_state *d = &a->dev[b->device];
    a->be.raw_free(a->be.ctx, b->device, b->ptr);
    d->st.reserved -= (int64_t)b->size;
    d->st.n_segments--;
    free(b->uses);
    free(b);
}

void tl_caching_allocator_destroy(tl_caching_allocator *a) {
    if (!a) return;
    for (int dv = 0; dv < a->ndevices; dv++) {
        device_state *d = &a->dev[dv];
        for (int i = 0; i < d->nevents; i++) {
            a->be.event_synchronize(a->be.ctx, d->events[i].event);
            a->be.event_destroy(a->be.ctx, d->events[i].event);
        }
        free(d->events);
        /* whole free segments go back; a segment with a live block is the
         * caller's leak (destroy expects every block freed) */
        for (int p = 0; p < 2; p++)
            for (int i = 0; i < d->pools[p].n; i++) {
                block *b = d->pools[p].v[i];
                if (!b->prev && !b->next) a->be.raw_free(a->be.ctx, dv, b->ptr);
            }
    }
    /* blocks themselves (free and live ones) */
    for (int dv = 0; dv < a->ndevices; dv++)
        for (int p = 0; p < 2; p++) {
            for (int i = 0; i < a->dev[dv].pools[p].n; i++) {
                free(a->dev[dv].pools[p].v[i]->uses);
                free(a->dev[dv].pools[p].v[i]);
            }
            free(a->dev[dv].pools[p].v);
        }
    for (size_t i = 0; i < a->live.cap; i++)
        if (a->live.slots[i]) { free(a->live.slots[i]->uses); free(a->live.slots[i]); }
    free(a->live.slots);
    free(a->dev);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

/* ---------------------------------------------------------------- free path */
/* merge b with its neighbour nb (same segment) when nb is free */
static void try_merge(device_state *d, block *b, block *nb) {
    if (!nb || nb->allocated || nb->event_count > 0 || nb->nuses > 0) return;
    set_erase(&d->pools[b->pool], nb);
    d->st.n_blocks_free--;
    if (b->prev == nb) {   /* nb is before b */
        b->ptr = nb->ptr;
        b->prev = nb->prev;
        if (b->prev) b->prev->next = b;
    } else {
        b->next = nb->next;
        if (b->next) b->next->prev = b;
    }
    b->size += nb->size;
    free(nb->uses);
    free(nb);
}

static int free_block(tl_caching_allocator *a, block *b) {
    device_state *d = &a->dev[b->device];
    try_merge(d, b, b->prev);
    try_merge(d, b, b->next);
    d->st.n_blocks_free++;
    return set_insert(&d->pools[b->pool], b);
}

/* pending events whose work completed: their blocks go back to the pools */
static int process_events(tl_caching_allocator *a, int dv, int wait) {
    device_state *d = &a->dev[dv];
    int keep = 0, rc = 0;
    for (int i = 0; i < d->nevents; i++) {
        pending_event pe = d->events[i];
        int done = wait ? (a->be.event_synchronize(a->be.ctx, pe.event) == 0 ? 1 : -1)
                        : a->be.event_query(a->be.ctx, pe.event);
        if (done < 0) rc = -1;
        if (done != 1) {
            d->events[keep++] = pe;
            continue;
        }
        a->be.event_destroy(a->be.ctx, pe.event);
        if (--pe.b->event_count == 0 && free_block(a, pe.b) != 0) rc = -1;
    }
    d->nevents = keep;
    d->st.n_pending_events = keep;
    return rc;
}

static int insert_events(tl_caching_allocator *a, block *b) {
    device_state *d = &a->dev[b->device];
    for (int i = 0; i < b->nuses; i++) {
        if (d->nevents == d->capevents) {
            int cap = d->capevents ? 2 * d->capevents : 16;
            pending_event *v = realloc(d->events, sizeof *v * (size_t)cap);
            if (!v) return tl_set_error(TL_ERR_MEMORY, "out of memory in the CUDA caching allocator");
            d->events = v;
            d->capevents = cap;
        }
        void *ev = NULL;
        if (a->be.event_record(a->be.ctx, b->device, b->uses[i], &ev) != 0) return -1;
        d->events[d->nevents++] = (pending_event){ev, b};
        b->event_count++;
    }
    b->nuses = 0;
    d->st.n_pending_events = d->nevents;
    return 0;
}

int tl_caching_allocator_free(tl_caching_allocator *a, void *ptr) {
    if (!ptr) return 0;
    pthread_mutex_lock(&a->lock);
    block *b = map_take(&a->live, ptr);
    int rc;
    if (!b) {
        rc = tl_set_error(TL_ERR_RUNTIME, "invalid device pointer: %p", ptr);
    } else {
        device_state *d = &a->dev[b->device];
        b->allocated = 0;
        d->st.allocated -= (int64_t)b->size;
        if (b->nuses > 0) {
            rc = insert_events(a, b);
            /* events that could not be recorded: wait for what was recorded
             * (the block is then safe to reuse) rather than leak it */
            if (rc != 0) {
                b->nuses = 0;
                if (b->event_count == 0) free_block(a, b);
                else process_events(a, b->device, 1);
            }
        } else {
            rc = free_block(a, b);
        }
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

/* every cached unsplit segment back to the backend (after waiting for the
 * pending events, whose blocks then join the pools); PyTorch's
 * release_cached_blocks */
static int release_cached(tl_caching_allocator *a, int dv) {
    device_state *d = &a->dev[dv];
    int rc = process_events(a, dv, 1);
    for (int p = 0; p < 2; p++) {
        block_set *s = &d->pools[p];
        int keep = 0;
        for (int i = 0; i < s->n; i++) {
            block *b = s->v[i];
            if (!b->prev && !b->next) {
                d->st.n_blocks_free--;
                release_segment(a, b);
            } else {
                s->v[keep++] = b;
            }
        }
        s->n = keep;
    }
    return rc;
}

int tl_caching_allocator_empty_cache(tl_caching_allocator *a) {
    pthread_mutex_lock(&a->lock);
    int rc = 0;
    for (int dv = 0; dv < a->ndevices; dv++)
        if (release_cached(a, dv) != 0) rc = -1;
    pthread_mutex_unlock(&a->lock);
    return rc;
}

/* ---------------------------------------------------------------- malloc */
static void format_size(char *buf, size_t cap, double n) {
    if (n <= 1024) snprintf(buf, cap, "%.0f bytes", n);
    else if (n <= 1048576) snprintf(buf, cap, "%.2f KiB", n / 1024);
    else if (n <= 1073741824) snprintf(buf, cap, "%.2f MiB", n / 1048576);
    else snprintf(buf, cap, "%.2f GiB", n / 1073741824);
}

static void set_oom(tl_caching_allocator *a, int dv, size_t requested) {
    device_state *d = &a->dev[dv];
    char req[32], tot[32], fre[32], alloc[32], unal[32];
    size_t free_b = 0, total_b = 0;
    int have = a->be.mem_info && a->be.mem_info(a->be.ctx, dv, &free_b, &total_b) == 0;
    format_size(req, sizeof req, (double)requested);
    format_size(tot, sizeof tot, (double)total_b);
    format_size(fre, sizeof fre, (double)free_b);
    format_size(alloc, sizeof alloc, (double)d->st.allocated);
    format_size(unal, sizeof unal, (double)(d->st.reserved - d->st.allocated));
    if (have)
        tl_set_error(TL_ERR_CUDA_OOM,
                     "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is "
                     "free. Of the allocated memory %s is allocated by torchlet, and %s is reserved by torchlet but "
                     "unallocated. If reserved but unallocated memory is large, try torchlet.cuda.empty_cache() to "
                     "give cached blocks back.",
                     req, dv, tot, fre, alloc, unal);
    else
        tl_set_error(TL_ERR_CUDA_OOM,
                     "CUDA out of memory. Tried to allocate %s. GPU %d: of the allocated memory %s is allocated by "
                     "torchlet, and %s is reserved by torchlet but unallocated.",
                     req, dv, alloc, unal);
}

static block *new_block(int dv, int pool, void *stream, size_t size, char *ptr) {
    block *b = calloc(1, sizeof *b);
    if (!b) {
        tl_set_error(TL_ERR_MEMORY, "out of memory in the CUDA caching allocator");
        return NULL;
    }
    b->device = dv;
    b->pool = pool;
    b->stream = stream;
    b->size = size;
    b->ptr = ptr;
    return b;
}

void *tl_caching_allocator_malloc(tl_caching_allocator *a, int dv, size_t nbytes, void *stream) {
    if (nbytes == 0) return NULL;
    if (dv < 0 || dv >= a->ndevices) {
        tl_set_error(TL_ERR_RUNTIME, "CUDA error: invalid device ordinal");
        return NULL;
    }
    if (nbytes > ((size_t)1 << 62)) {   /* rounding would overflow: no device has that much */
        pthread_mutex_lock(&a->lock);
        a->dev[dv].st.n_ooms++;
        set_oom(a, dv, nbytes);
        pthread_mutex_unlock(&a->lock);
        return NULL;
    }
    const size_t size = tl_caching_round_size(nbytes);
    const int pool = size <= K_SMALL_SIZE ? 0 : 1;
    pthread_mutex_lock(&a->lock);
    device_state *d = &a->dev[dv];
    block *b = NULL;
    if (process_events(a, dv, 0) != 0) goto fail;
    /* best fit on this stream */
    {
        block key = {.stream = stream, .size = size, .ptr = NULL};
        block_set *s = &d->pools[pool];
        int i = set_lower_bound(s, &key);
        if (i < s->n && s->v[i]->stream == stream) {
            b = s->v[i];
            set_erase(s, b);
            d->st.n_blocks_free--;
        }
    }
    if (!b) {
        const size_t seg = tl_caching_allocation_size(size);
        void *p = NULL;
        int r = a->be.raw_alloc(a->be.ctx, dv, seg, &p);
        if (r == 1) {   /* out of memory: give the cache back, try once more */
            d->st.n_alloc_retries++;
            if (release_cached(a, dv) != 0) goto fail;
            r = a->be.raw_alloc(a->be.ctx, dv, seg, &p);
        }
        if (r == 1) {
            d->st.n_ooms++;
            set_oom(a, dv, nbytes);
            goto fail;
        }
        if (r != 0) goto fail;
        b = new_block(dv, pool, stream, seg, p);
        if (!b) {
            a->be.raw_free(a->be.ctx, dv, p);
            goto fail;
        }
        stat_add(&d->st.reserved, &d->st.max_reserved, (int64_t)seg);
        d->st.n_segments++;
    }
    /* split off the remainder when it is big enough to be useful */
    {
        size_t rest = b->size - size;
        if (pool == 0 ? rest >= K_MIN_BLOCK : rest > K_SMALL_SIZE) {
            block *r = new_block(dv, pool, stream, rest, b->ptr + size);
            if (r) {
                r->prev = b;
                r->next = b->next;
                if (r->next) r->next->prev = r;
                b->next = r;
                b->size = size;
                if (set_insert(&d->pools[pool], r) != 0) {   /* keep it attached: merged back on free */
                    b->next = r->next;
                    if (b->next) b->next->prev = b;
                    b->size += rest;
                    free(r);
                } else {
                    d->st.n_blocks_free++;
                }
            }
        }
    }
    b->allocated = 1;
    if (map_put(&a->live, b) != 0) {
        b->allocated = 0;
        free_block(a, b);
        goto fail;
    }
    stat_add(&d->st.allocated, &d->st.max_allocated, (int64_t)b->size);
    pthread_mutex_unlock(&a->lock);
    return b->ptr;
fail:
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

int tl_caching_allocator_record_stream(tl_caching_allocator *a, void *ptr, void *stream) {
    if (!ptr) return 0;
    pthread_mutex_lock(&a->lock);
    block *b = map_get(&a->live, ptr);
    int rc = 0;
    if (!b) {
        rc = tl_set_error(TL_ERR_RUNTIME, "record_stream: the pointer %p is not a block of the CUDA caching "
                                          "allocator", ptr);
    } else if (stream != b->stream) {
        int seen = 0;
        for (int i = 0; i < b->nuses; i++) seen |= b->uses[i] == stream;
        if (!seen) {
            if (b->nuses == b->capuses) {
                int cap = b->capuses ? 2 * b->capuses : 4;
                void **v = realloc(b->uses, sizeof *v * (size_t)cap);
                if (!v) rc = tl_set_error(TL_ERR_MEMORY, "out of memory in the CUDA caching allocator");
                else { b->uses = v; b->capuses = cap; }
            }
            if (rc == 0) b->uses[b->nuses++] = stream;
        }
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int tl_caching_allocator_stats(tl_caching_allocator *a, int dv, tl_cuda_alloc_stats *out) {
    if (dv < 0 || dv >= a->ndevices) return tl_set_error(TL_ERR_RUNTIME, "CUDA error: invalid device ordinal");
    pthread_mutex_lock(&a->lock);
    *out = a->dev[dv].st;
    pthread_mutex_unlock(&a->lock);
    return 0;
}

int tl_caching_allocator_reset_peak(tl_caching_allocator *a, int dv) {
    if (dv < 0 || dv >= a->ndevices) return tl_set_error(TL_ERR_RUNTIME, "CUDA error: invalid device ordinal");
    pthread_mutex_lock(&a->lock);
    a->dev[dv].st.max_allocated = a->dev[dv].st.allocated;
    a->dev[dv].st.max_reserved = a->dev[dv].st.reserved;
    pthread_mutex_unlock(&a->lock);
    return 0;
}

int tl_caching_allocator_device_of(tl_caching_allocator *a, const void *ptr) {
    pthread_mutex_lock(&a->lock);
    block *b = map_get(&a->live, ptr);
    int dv = b ? b->device : -1;
    pthread_mutex_unlock(&a->lock);
    return dv;
}
