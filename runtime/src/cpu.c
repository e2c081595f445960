/* CPU capability detection and kernel stubs (DispatchStub). */
#include <stdlib.h>
#include <strings.h>

#include "tl_internal.h"
#include "tl_thresholds.h"

static const char *const k_cap_names[TL_NUM_CAPS] = {"default", "avx2", "avx512"};
static int g_cap_max = -1;
static int g_cap = -1;
static tl_kernel_stub *g_stubs = NULL;

static int detect(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return TL_CAP_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c"))
        return TL_CAP_AVX2;
    return TL_CAP_DEFAULT;
}

static int parse_cap(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < TL_NUM_CAPS; i++)
        if (strcasecmp(name, k_cap_names[i]) == 0) return i;
    return -1;
}

static void ensure_init(void) {
    if (g_cap_max >= 0) return;
    tl__store_policy_init();
    g_cap_max = detect();
    g_cap = g_cap_max;
    int forced = parse_cap(getenv("TORCHLET_CPU_CAPABILITY"));
    if (forced >= 0 && forced < g_cap) g_cap = forced;   /* only ever downgrades */
}

void tl_kernel_stub_register(tl_kernel_stub *stub) {
    ensure_init();
    stub->current = stub->impl[g_cap] ? stub->impl[g_cap] : stub->impl[TL_CAP_DEFAULT];
    stub->next = g_stubs;
    g_stubs = stub;
}

int tl_cpu_capability(void) { ensure_init(); return g_cap; }
int tl_cpu_capability_max(void) { ensure_init(); return g_cap_max; }

const char *tl_cpu_capability_name(int level) {
    return level >= 0 && level < TL_NUM_CAPS ? k_cap_names[level] : "unknown";
}

int tl_set_cpu_capability(const char *name) {
    ensure_init();
    int cap = parse_cap(name);
    if (cap < 0)
        return tl_set_error(TL_ERR_VALUE, "unknown CPU capability '%s' (expected default, avx2 or avx512)",
                            name ? name : "(null)");
    if (cap > g_cap_max)
        return tl_set_error(TL_ERR_VALUE, "CPU capability '%s' is not supported by this CPU (best: %s)", name,
                            k_cap_names[g_cap_max]);
    g_cap = cap;
    for (tl_kernel_stub *s = g_stubs; s; s = s->next)
        s->current = s->impl[cap] ? s->impl[cap] : s->impl[TL_CAP_DEFAULT];
    return 0;
}

/* the copy and fill stubs, filled by kernels/native/runtime_stubs.c */
TL_DEFINE_EMPTY_STUB(tl_copy_stub);
TL_DEFINE_EMPTY_STUB(tl_fill_stub);
