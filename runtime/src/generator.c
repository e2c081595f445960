/* Random generators: PyTorch's CPU generator, reproduced.
 *
 * The engine is MT19937 as PyTorch's at::mt19937 (seeded with the low 32
 * bits of the seed by the reference init_genrand, the full 64-bit seed kept
 * for initial_seed), with PyTorch's two cached Box-Muller samples (double and
 * float). random() is one 32-bit draw, random64() two (high word first):
 * together with PyTorch's transformations (kernels/native/random_draws.h)
 * and its serial kernels, a seeded program draws the numbers PyTorch draws.
 * get_state / set_state use PyTorch's 5,056-byte CPUGeneratorImplState
 * layout, so a state saved by either library loads in the other.
 *
 * Kernels that fill in parallel (dropout's mask) take one random64() as the
 * key of a Philox-4x32-10 stream and split its counter space: reproducible
 * under manual_seed, not PyTorch's numbers (PyTorch draws those through
 * MKL's streams). A generator is locked by the kernel that draws from it
 * (PyTorch's generator mutex): two threads may share one. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tl_internal.h"

#define MT_N 624
#define MT_M 397

struct tl_generator {
    uint64_t seed;
    int left;
    uint32_t next;
    uint32_t state[MT_N];
    int has_double_normal, has_float_normal;
    double double_normal;
    float float_normal;
    pthread_mutex_t lock;
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

/* ------------------------------------------------------------ MT19937 */

static void mt_seed(tl_generator *g, uint64_t seed) {
    g->seed = seed;
    g->state[0] = (uint32_t)seed;
    for (uint32_t j = 1; j < MT_N; j++) g->state[j] = 1812433253u * (g->state[j - 1] ^ (g->state[j - 1] >> 30)) + j;
    g->left = 1;
    g->next = 0;
    g->has_double_normal = g->has_float_normal = 0;
}

static inline uint32_t twist(uint32_t u, uint32_t v) {
    return (((u & 0x80000000u) | (v & 0x7fffffffu)) >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
}

static void mt_next_state(tl_generator *g) {
    uint32_t *p = g->state;
    g->left = MT_N;
    g->next = 0;
    for (int j = MT_N - MT_M + 1; --j; p++) *p = p[MT_M] ^ twist(p[0], p[1]);
    for (int j = MT_M; --j; p++) *p = p[MT_M - MT_N] ^ twist(p[0], p[1]);
    *p = p[MT_M - MT_N] ^ twist(p[0], g->state[0]);
}

static inline uint32_t mt_draw(tl_generator *g) {
    if (--g->left == 0) mt_next_state(g);
    uint32_t y = g->state[g->next++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

uint32_t tl_generator_random(tl_generator *g) { return mt_draw(g); }

void tl_generator_random_fill(tl_generator *g, uint32_t *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) out[i] = mt_draw(g);
}

uint64_t tl_generator_random64(tl_generator *g) {
    const uint64_t hi = tl_generator_random(g);
    return hi << 32 | tl_generator_random(g);
}

/* ------------------------------------------------------------ life cycle */

tl_generator *tl_generator_new(uint64_t seed) {
    tl_generator *g = calloc(1, sizeof *g);
    if (!g) { tl_set_error(TL_ERR_MEMORY, "out of memory allocating a generator"); return NULL; }
    pthread_mutex_init(&g->lock, NULL);
    mt_seed(g, seed);
    return g;
}

void tl_generator_free(tl_generator *g) {
    if (g && g != tl_default_generator()) {
        pthread_mutex_destroy(&g->lock);
        free(g);
    }
}

/* PyTorch's default CPU generator starts from a non-deterministic seed
 * (getNonDeterministicRandom: /dev/urandom, else the clock) */
static uint64_t nondeterministic_seed(void) {
    uint64_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    if (f) {
        if (fread(&s, sizeof s, 1, f) != 1) s = 0;
        fclose(f);
    }
    if (s == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint32_t out[4];
        tl_philox4x32((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30), (uint64_t)(uintptr_t)&s, out);
        s = (uint64_t)out[0] << 32 | out[1];
    }
    return s;
}

static tl_generator g_default = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t g_default_once = PTHREAD_ONCE_INIT;
static void seed_default(void) { mt_seed(&g_default, nondeterministic_seed()); }

tl_generator *tl_default_generator(void) {
    pthread_once(&g_default_once, seed_default);
    return &g_default;
}

void tl_generator_lock(tl_generator *g) { pthread_mutex_lock(&g->lock); }
void tl_generator_unlock(tl_generator *g) { pthread_mutex_unlock(&g->lock); }

void tl_generator_manual_seed(tl_generator *g, uint64_t seed) {
    tl_generator_lock(g);
    mt_seed(g, seed);
    tl_generator_unlock(g);
}

uint64_t tl_generator_initial_seed(const tl_generator *g) { return g->seed; }

uint64_t tl_generator_seed_random(tl_generator *g) {
    const uint64_t seed = nondeterministic_seed();
    tl_generator_manual_seed(g, seed);
    return seed;
}

/* ------------------------------------------------------------ Box-Muller caches */

int tl_generator_take_double_normal(tl_generator *g, double *v) {
    if (!g->has_double_normal) return 0;
    *v = g->double_normal;
    g->has_double_normal = 0;
    return 1;
}
void tl_generator_put_double_normal(tl_generator *g, double v) {
    g->double_normal = v;
    g->has_double_normal = 1;
}
int tl_generator_take_float_normal(tl_generator *g, float *v) {
    if (!g->has_float_normal) return 0;
    *v = g->float_normal;
    g->has_float_normal = 0;
    return 1;
}
void tl_generator_put_float_normal(tl_generator *g, float v) {
    g->float_normal = v;
    g->has_float_normal = 1;
}

/* ------------------------------------------------------------ state bytes */
/* PyTorch's CPUGeneratorImplState (x86-64 layout): the legacy POD
 *   u64 the_initial_seed; i32 left; i32 seeded; u64 next; u64 state[624];
 *   f64 normal_x, normal_y, normal_rho; i32 normal_is_valid; (4 pad)
 * then f32 next_float_normal_sample; u8 is_next_float_normal_sample_valid;
 * (3 pad). */
enum {
    ST_SEED = 0, ST_LEFT = 8, ST_SEEDED = 12, ST_NEXT = 16, ST_STATE = 24, ST_NORMAL_X = ST_STATE + 8 * MT_N,
    ST_NORMAL_Y = ST_NORMAL_X + 8, ST_NORMAL_RHO = ST_NORMAL_Y + 8, ST_NORMAL_VALID = ST_NORMAL_RHO + 8,
    ST_FLOAT_NORMAL = ST_NORMAL_VALID + 8, ST_FLOAT_VALID = ST_FLOAT_NORMAL + 4, ST_SIZE = ST_FLOAT_VALID + 4
};

int64_t tl_generator_state_size(void) { return ST_SIZE; }

void tl_generator_get_state(tl_generator *g, uint8_t *out) {
    tl_generator_lock(g);
    memset(out, 0, ST_SIZE);
    const int32_t left = g->left, seeded = 1, valid = g->has_double_normal;
    const uint64_t next = g->next;
    memcpy(out + ST_SEED, &g->seed, 8);
    memcpy(out + ST_LEFT, &left, 4);
    memcpy(out + ST_SEEDED, &seeded, 4);
    memcpy(out + ST_NEXT, &next, 8);
    for (int i = 0; i < MT_N; i++) {
        const uint64_t w = g->state[i];
        memcpy(out + ST_STATE + 8 * i, &w, 8);
    }
    if (valid) memcpy(out + ST_NORMAL_Y, &g->double_normal, 8);
    memcpy(out + ST_NORMAL_VALID, &valid, 4);
    if (g->has_float_normal) {
        memcpy(out + ST_FLOAT_NORMAL, &g->float_normal, 4);
        out[ST_FLOAT_VALID] = 1;
    }
    tl_generator_unlock(g);
}

int tl_generator_set_state(tl_generator *g, const uint8_t *in, int64_t n) {
    if (n != ST_SIZE)
        return tl_set_error(TL_ERR_RUNTIME, "Expected a CPUGeneratorImplState of size %d but found the input RNG "
                            "state size to be %lld", ST_SIZE, (long long)n);
    int32_t left, seeded, valid;
    uint64_t next, seed;
    memcpy(&seed, in + ST_SEED, 8);
    memcpy(&left, in + ST_LEFT, 4);
    memcpy(&seeded, in + ST_SEEDED, 4);
    memcpy(&next, in + ST_NEXT, 8);
    memcpy(&valid, in + ST_NORMAL_VALID, 4);
    /* at::mt19937::is_valid */
    if (!(seeded == 1 && left > 0 && left <= MT_N && next <= MT_N))
        return tl_set_error(TL_ERR_RUNTIME, "Invalid mt19937 state");
    tl_generator_lock(g);
    g->seed = seed;
    g->left = left;
    g->next = (uint32_t)next;
    for (int i = 0; i < MT_N; i++) {
        uint64_t w;
        memcpy(&w, in + ST_STATE + 8 * i, 8);
        g->state[i] = (uint32_t)w;
    }
    g->has_double_normal = valid != 0;
    if (valid) memcpy(&g->double_normal, in + ST_NORMAL_Y, 8);
    g->has_float_normal = in[ST_FLOAT_VALID] != 0;
    if (g->has_float_normal) memcpy(&g->float_normal, in + ST_FLOAT_NORMAL, 4);
    tl_generator_unlock(g);
    return 0;
}
