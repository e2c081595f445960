/* Random generators: Philox-4x32-10 (counter based), seed + offset state.
 * A counter-based generator lets parallel kernels reserve disjoint blocks of
 * the stream (tl_generator_reserve) and fill them independently. */
#include <stdlib.h>
#include <time.h>

#include "tl_internal.h"

struct tl_generator {
    uint64_t seed;
    uint64_t offset;   /* next 128-bit block */
};

void tl_philox4x32(uint64_t seed, uint64_t offset, uint32_t *out4) {
    uint32_t c0 = (uint32_t)offset, c1 = (uint32_t)(offset >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        uint32_t n3 = (uint32_t)p0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out4[0] = c0; out4[1] = c1; out4[2] = c2; out4[3] = c3;
}

tl_generator *tl_generator_new(uint64_t seed) {
    tl_generator *g = calloc(1, sizeof *g);
    if (!g) { tl_set_error(TL_ERR_MEMORY, "out of memory allocating a generator"); return NULL; }
    g->seed = seed;
    return g;
}

void tl_generator_free(tl_generator *g) {
    if (g && g != tl_default_generator()) free(g);
}

tl_generator *tl_default_generator(void) {
    static tl_generator g = {67280421310721ull, 0};  /* PyTorch's default seed */
    return &g;
}

void tl_generator_manual_seed(tl_generator *g, uint64_t seed) {
    g->seed = seed;
    g->offset = 0;
}

uint64_t tl_generator_initial_seed(const tl_generator *g) { return g->seed; }

uint64_t tl_generator_seed_random(tl_generator *g) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint32_t out[4];
    tl_philox4x32((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30), (uint64_t)(uintptr_t)g, out);
    uint64_t seed = ((uint64_t)out[0] << 32 | out[1]) & 0x7fffffffffffffffull;
    tl_generator_manual_seed(g, seed);
    return seed;
}

uint64_t tl_generator_get_offset(const tl_generator *g) { return g->offset; }

void tl_generator_set_offset(tl_generator *g, uint64_t offset) {
    g->offset = offset;
}

uint64_t tl_generator_reserve(tl_generator *g, uint64_t n) {
    uint64_t first = g->offset;
    g->offset += n;
    return first;
}

uint64_t tl_generator_next_u64(tl_generator *g) {
    /* one counter block per draw: the state is exactly (seed, offset) */
    uint32_t out[4];
    tl_philox4x32(g->seed, g->offset++, out);
    return (uint64_t)out[0] << 32 | out[1];
}

double tl_generator_next_double(tl_generator *g) {
    return (double)(tl_generator_next_u64(g) >> 11) * 0x1.0p-53;
}
