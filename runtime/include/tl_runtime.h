/* torchlet runtime: process-wide services (public C API, cdef-clean).
 * CPU capability (kernel ISA level), threads, the CPU allocator, warnings,
 * random generators. */
#ifndef TL_RUNTIME_H
#define TL_RUNTIME_H

#include <stdint.h>

#include "tl_tensor.h"

/* ------------------------------------------------------- CPU capability */
/* levels: 0 = "default" (baseline x86-64), 1 = "avx2" (AVX2+FMA+F16C),
 * 2 = "avx512" (AVX-512 F/BW/VL/DQ). The best supported level is chosen once at
 * load time; TORCHLET_CPU_CAPABILITY=default|avx2|avx512 forces a lower one. */
int tl_cpu_capability(void);                    /* current level */
int tl_cpu_capability_max(void);                /* best level this CPU supports */
const char *tl_cpu_capability_name(int level);  /* "default", "avx2", "avx512" */
/* switch all kernel tables to the named level (case-insensitive); only levels
 * the CPU supports; -1 + ValueError otherwise */
int tl_set_cpu_capability(const char *name);

/* ------------------------------------------------- machine, store policy */
/* The machine as the runtime sees it, and the store policy in effect
 * (tl_thresholds.h; the rule in docs/UFUNC.md "Stores"): what the rule derived
 * from the machine, and what holds now (environment overrides, or
 * tl_cpu_set_store_policy). Sizes in bytes; 0 when unknown. */
typedef struct tl_cpu_info {
    char vendor[16];              /* cpuid's: "GenuineIntel", "AuthenticAMD" */
    char model[96];               /* /proc/cpuinfo's model name */
    char huge_pages[16];          /* transparent huge pages: always, madvise, never */
    char cache_source[16];        /* sysfs, cpuid or default */
    int64_t l1d_bytes, l2_bytes, l3_bytes;
    int l2_shared_cpus, l3_shared_cpus;
    int hypervisor;               /* cpuid's hypervisor bit: the cache sharing above is the VM's claim */
    int64_t stream_min_bytes, copy_stream_min_bytes;
    int prefetch;
    int64_t derived_stream_min_bytes, derived_copy_stream_min_bytes;
    int derived_prefetch;
} tl_cpu_info;
int tl_cpu_get_info(tl_cpu_info *out);
/* sets the policy the kernels read (byte thresholds >= 0, prefetch 0 or 1) */
int tl_cpu_set_store_policy(int64_t stream_min_bytes, int64_t copy_stream_min_bytes, int prefetch);

/* -------------------------------------------------------------- threads */
int tl_get_num_threads(void);
int tl_set_num_threads(int n);                  /* n >= 1 */
int64_t tl_get_grain_size(void);                /* elements below which work stays serial */
void tl_set_grain_size(int64_t grain);

/* ------------------------------------------------------------ allocator */
typedef struct tl_allocator_stats {
    int64_t allocated_bytes;     /* live, handed out */
    int64_t cached_bytes;        /* freed large blocks kept for reuse */
    int64_t cached_blocks;
    int64_t n_allocs;            /* total allocations */
    int64_t n_cache_hits;        /* served from the cache */
    int64_t n_system_allocs;     /* went to the system allocator */
} tl_allocator_stats;
void tl_allocator_get_stats(tl_allocator_stats *out);
void tl_allocator_empty_cache(void);
/* blocks >= threshold bytes are cached when freed (default 1 MiB); at most
 * limit bytes stay cached (default 2 GiB); limit 0 disables the cache */
void tl_allocator_set_cache(int64_t threshold, int64_t limit);
void *tl_alloc(int64_t nbytes);                 /* 64-byte aligned; NULL + MemoryError */
void tl_free(void *p, int64_t nbytes);

/* ------------------------------------------------------------- warnings */
/* The runtime records warnings (e.g. an out= tensor was resized) per thread,
 * in order (up to 8 pending; later ones are dropped); the Python side
 * turns them into UserWarnings at the caller's line. */
int tl_has_warning(void);                       /* how many are pending */
const char *tl_take_warning(void);              /* the oldest ("" when none), removed */
/* Re-arms every warn-once site (TL_WARN_ONCE, PyTorch's TORCH_WARN_ONCE) so
 * it warns again: for tests, which must not depend on the order they run in. */
void tl_reset_warn_once(void);
/* The Python boundary (docs/PYTHON_BINDINGS.md, "Warnings"): in the cffi
 * module only, generated/cdef/python_abi.h wraps each entry point a binding
 * calls directly, so that a call returning with a warning pending says so in
 * the status it already returns, at no cost to Python otherwise:
 *   tl_pyabi_tensor: a tensor result is parked (per thread) and NULL returned;
 *                    the binding's NULL path takes it back
 *                    (tl_pyabi_take_parked) after raising the warnings;
 *   tl_pyabi_rc:     an int status 0 becomes 1. */
tl_tensor *tl_pyabi_tensor(tl_tensor *r);
int tl_pyabi_rc(int rc);
tl_tensor *tl_pyabi_take_parked(void);          /* new reference or NULL */

/* ----------------------------------------------------------- generators */
/* PyTorch's CPU generator: MT19937 with PyTorch's seeding, draws and cached
 * Box-Muller samples (runtime/src/generator.c). A kernel holds the lock
 * while it draws; the distributions' transformations are in
 * kernels/native/random_draws.h. */
typedef struct tl_generator tl_generator;
tl_generator *tl_generator_new(uint64_t seed);
void tl_generator_free(tl_generator *g);
tl_generator *tl_default_generator(void);       /* borrowed, process-wide */
void tl_generator_manual_seed(tl_generator *g, uint64_t seed);
uint64_t tl_generator_initial_seed(const tl_generator *g);
uint64_t tl_generator_seed_random(tl_generator *g);   /* non-deterministic seed, returns it */
void tl_generator_lock(tl_generator *g);
void tl_generator_unlock(tl_generator *g);
uint32_t tl_generator_random(tl_generator *g);        /* one engine draw (caller holds the lock) */
uint64_t tl_generator_random64(tl_generator *g);      /* two draws, the first the high word */
void tl_generator_random_fill(tl_generator *g, uint32_t *out, int64_t n);   /* n random() draws */
int tl_generator_take_double_normal(tl_generator *g, double *v);   /* 1: the cached sample, consumed */
void tl_generator_put_double_normal(tl_generator *g, double v);
int tl_generator_take_float_normal(tl_generator *g, float *v);
void tl_generator_put_float_normal(tl_generator *g, float v);
/* PyTorch's CPUGeneratorImplState bytes */
int64_t tl_generator_state_size(void);
void tl_generator_get_state(tl_generator *g, uint8_t *out);
int tl_generator_set_state(tl_generator *g, const uint8_t *in, int64_t n);
/* the 4 words of Philox(seed, counter = offset): parallel fills keyed by one random64() */
void tl_philox4x32(uint64_t seed, uint64_t offset, uint32_t *out4);

#endif
