/* The machine the kernels run on (vendor, cache sizes, huge-page setting) and
 * the store policy derived from it (tl_thresholds.h). The rule and the
 * measurements behind it are in docs/UFUNC.md, "Stores".
 *
 * Cache sizes come from sysfs (/sys/devices/system/cpu/cpu0/cache), else from
 * cpuid (leaf 4 on Intel, 0x8000001D on AMD), else conservative defaults.
 * TORCHLET_STREAM_MIN_BYTES, TORCHLET_COPY_STREAM_MIN_BYTES and
 * TORCHLET_CPU_PREFETCH=0|1 override the derived values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "tl_internal.h"
#include "tl_runtime.h"
#include "tl_thresholds.h"

/* what holds before the runtime's first kernel registration */
tl_store_policy tl_cpu_store_policy = {(int64_t)3 << 20, (int64_t)4 << 20, 0};

static tl_cpu_info g_info;
static tl_store_policy g_derived;
static int g_pinned = 0;   /* tl_cpu_set_store_policy was called: thread changes keep it */
static int g_info_done = 0;

static int64_t read_size_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[64] = {0};
    int64_t v = -1;
    if (fgets(buf, sizeof buf, f)) {
        char *end = NULL;
        long long n = strtoll(buf, &end, 10);
        if (end != buf) {
            v = n;
            if (*end == 'K' || *end == 'k') v <<= 10;
            else if (*end == 'M' || *end == 'm') v <<= 20;
        }
    }
    fclose(f);
    return v;
}

static int read_text_file(const char *path, char *buf, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    buf[0] = 0;
    if (!fgets(buf, (int)len, f)) buf[0] = 0;
    fclose(f);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
    return 0;
}

/* the number of CPUs in a sysfs shared_cpu_list such as "0-7,64-71" */
static int count_cpu_list(const char *s) {
    int count = 0;
    while (*s) {
        char *end = NULL;
        long a = strtol(s, &end, 10);
        if (end == s) break;
        long b = a;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            s = end;
        }
        count += (int)(b - a + 1);
        if (*s == ',') s++;
    }
    return count;
}

static void caches_from_sysfs(tl_cpu_info *ci) {
    for (int idx = 0; idx < 8; idx++) {
        char path[128], text[256];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        int64_t level = read_size_file(path);
        if (level < 0) break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        if (read_text_file(path, text, sizeof text) != 0 || strcmp(text, "Instruction") == 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        int64_t size = read_size_file(path);
        if (size <= 0) continue;
        int shared = 1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", idx);
        if (read_text_file(path, text, sizeof text) == 0 && text[0]) shared = count_cpu_list(text);
        if (level == 1) ci->l1d_bytes = size;
        else if (level == 2) ci->l2_bytes = size, ci->l2_shared_cpus = shared;
        else if (level == 3) ci->l3_bytes = size, ci->l3_shared_cpus = shared;
    }
    if (ci->l2_bytes > 0) snprintf(ci->cache_source, sizeof ci->cache_source, "sysfs");
}

#if defined(__x86_64__) || defined(__i386__)
static void vendor_from_cpuid(tl_cpu_info *ci) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return;
    memcpy(ci->vendor + 0, &b, 4);
    memcpy(ci->vendor + 4, &d, 4);
    memcpy(ci->vendor + 8, &c, 4);
    ci->vendor[12] = 0;
}

/* leaf 1, ECX bit 31: set by every hypervisor for its guests */
static void hypervisor_from_cpuid(tl_cpu_info *ci) {
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d)) ci->hypervisor = (c >> 31) & 1;
}

/* deterministic cache parameters: leaf 4 (Intel) or 0x8000001D (AMD) */
static void caches_from_cpuid(tl_cpu_info *ci) {
    unsigned leaf = strcmp(ci->vendor, "AuthenticAMD") == 0 ? 0x8000001Du : 4u;
    unsigned max = __get_cpuid_max(leaf & 0x80000000u, NULL);
    if (max < leaf) return;
    for (unsigned sub = 0; sub < 8; sub++) {
        unsigned a, b, c, d;
        __cpuid_count(leaf, sub, a, b, c, d);
        unsigned type = a & 31, level = (a >> 5) & 7;
        if (type == 0) break;
        if (type == 2) continue;  /* instruction cache */
        int64_t ways = ((b >> 22) & 0x3ff) + 1, parts = ((b >> 12) & 0x3ff) + 1;
        int64_t line = (b & 0xfff) + 1, sets = (int64_t)c + 1;
        int64_t size = ways * parts * line * sets;
        int shared = (int)((a >> 14) & 0xfff) + 1;
        if (level == 1) ci->l1d_bytes = size;
        else if (level == 2) ci->l2_bytes = size, ci->l2_shared_cpus = shared;
        else if (level == 3) ci->l3_bytes = size, ci->l3_shared_cpus = shared;
    }
    if (ci->l2_bytes > 0) snprintf(ci->cache_source, sizeof ci->cache_source, "cpuid");
}
#endif

static void read_model(tl_cpu_info *ci) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                size_t n = strlen(p);
                while (n && (p[n - 1] == '\n' || p[n - 1] == ' ')) p[--n] = 0;
                snprintf(ci->model, sizeof ci->model, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

/* "always [madvise] never" -> "madvise" */
static void read_thp(tl_cpu_info *ci) {
    char text[128];
    snprintf(ci->huge_pages, sizeof ci->huge_pages, "unknown");
    if (read_text_file("/sys/kernel/mm/transparent_hugepage/enabled", text, sizeof text) != 0) return;
    char *l = strchr(text, '['), *r = l ? strchr(l, ']') : NULL;
    if (l && r && r > l + 1) snprintf(ci->huge_pages, sizeof ci->huge_pages, "%.*s", (int)(r - l - 1), l + 1);
}

static int64_t env_bytes(const char *name, int64_t dflt) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    return end != v && n >= 0 ? (int64_t)n : dflt;
}

/* The rule (docs/UFUNC.md, "Stores", with the measurements). A loop call
 * streams its outputs once the working set it belongs to stops fitting in
 * the cache level that keeps a plain store's output for the next operator:
 *   Intel (its L3 a slower mesh shared by the whole socket): this core's L2;
 *     streaming from 1.5 x L2 moved per call (crossover measured between 1.5
 *     and 3 MiB on a 2 MiB-L2 Xeon), copies from 2 x L2 written;
 *   AMD and other x86 (a CCX's L3 near and fast, a victim cache of the L2s):
 *     the L3 shared by the threads that run the operator: streaming from 3/4
 *     of L3 moved, copies from 3/8 of L3 written (plain stores held a 16 MiB
 *     working set at L3 speed on a 32 MiB-L3 EPYC and lost from 24 MiB), per
 *     call a share of it when `threads` threads split the work -- unless a
 *     hypervisor reports the sharing: a VM's vCPUs said to share one L3 may
 *     sit on different CCDs, each with its own (on the dev VM two threads
 *     each read 16 MiB at the speed one thread alone did, and plain stores
 *     won up to 32 MiB moved on two threads: 95 against 56 GB/s), so there
 *     each thread counts the L3 as its own;
 *   no x86 streaming stores: never.
 * Software prefetch ahead of streamed chunks: on (exp 11.5 -> 9.5 ms at 2^24
 * on the Xeon; neutral on the EPYC). */
static void derive_policy(const tl_cpu_info *ci, int threads, tl_store_policy *p) {
#if defined(__x86_64__) || defined(__i386__)
    int64_t l2 = ci->l2_bytes > 0 ? ci->l2_bytes : (int64_t)1 << 20;
    int64_t l3 = ci->l3_bytes > 0 ? ci->l3_bytes : 0;
    if (strcmp(ci->vendor, "GenuineIntel") == 0 || l3 <= l2) {
        p->stream_min_bytes = l2 + l2 / 2;
        p->copy_stream_min_bytes = 2 * l2;
    } else {
        int sharing = threads < 1 || ci->hypervisor ? 1 : threads;
        if (ci->l3_shared_cpus > 0 && sharing > ci->l3_shared_cpus) sharing = ci->l3_shared_cpus;
        p->stream_min_bytes = l3 / 4 * 3 / sharing;
        p->copy_stream_min_bytes = l3 / 8 * 3 / sharing;
        if (p->stream_min_bytes < l2 + l2 / 2) p->stream_min_bytes = l2 + l2 / 2;
        if (p->copy_stream_min_bytes < 2 * l2) p->copy_stream_min_bytes = 2 * l2;
    }
    p->prefetch = 1;
#else
    (void)ci;
    (void)threads;
    p->stream_min_bytes = p->copy_stream_min_bytes = INT64_MAX;
    p->prefetch = 0;
#endif
}

static void ensure_info(void) {
    if (g_info_done) return;
    tl_cpu_info *ci = &g_info;
    memset(ci, 0, sizeof *ci);
    snprintf(ci->vendor, sizeof ci->vendor, "unknown");
    snprintf(ci->model, sizeof ci->model, "unknown");
    snprintf(ci->cache_source, sizeof ci->cache_source, "default");
#if defined(__x86_64__) || defined(__i386__)
    vendor_from_cpuid(ci);
    hypervisor_from_cpuid(ci);
#endif
    read_model(ci);
    caches_from_sysfs(ci);
#if defined(__x86_64__) || defined(__i386__)
    if (ci->l2_bytes <= 0) caches_from_cpuid(ci);
#endif
    read_thp(ci);
    g_info_done = 1;
}

void tl__store_policy_init(void) {
    ensure_info();
    derive_policy(&g_info, tl_get_num_threads(), &g_derived);
    tl_store_policy p = g_derived;
    p.stream_min_bytes = env_bytes("TORCHLET_STREAM_MIN_BYTES", p.stream_min_bytes);
    p.copy_stream_min_bytes = env_bytes("TORCHLET_COPY_STREAM_MIN_BYTES", p.copy_stream_min_bytes);
    const char *pf = getenv("TORCHLET_CPU_PREFETCH");
    if (pf && (pf[0] == '0' || pf[0] == '1') && pf[1] == 0) p.prefetch = pf[0] == '1';
    tl_cpu_store_policy = p;
}

void tl__store_policy_threads_changed(void) {
    if (!g_info_done) return;
    if (g_pinned)  /* the rule's figures follow the threads; the pinned policy stays */
        derive_policy(&g_info, tl_get_num_threads(), &g_derived);
    else
        tl__store_policy_init();
}

int tl_cpu_get_info(tl_cpu_info *out) {
    ensure_info();
    *out = g_info;
    out->derived_stream_min_bytes = g_derived.stream_min_bytes;
    out->derived_copy_stream_min_bytes = g_derived.copy_stream_min_bytes;
    out->derived_prefetch = g_derived.prefetch;
    out->stream_min_bytes = tl_cpu_store_policy.stream_min_bytes;
    out->copy_stream_min_bytes = tl_cpu_store_policy.copy_stream_min_bytes;
    out->prefetch = tl_cpu_store_policy.prefetch;
    return 0;
}

int tl_cpu_set_store_policy(int64_t stream_min_bytes, int64_t copy_stream_min_bytes, int prefetch) {
    if (stream_min_bytes < 0 || copy_stream_min_bytes < 0 || prefetch < 0 || prefetch > 1)
        return tl_set_error(TL_ERR_VALUE, "store policy: byte thresholds must be >= 0 and prefetch 0 or 1");
    tl_cpu_store_policy.stream_min_bytes = stream_min_bytes;
    tl_cpu_store_policy.copy_stream_min_bytes = copy_stream_min_bytes;
    tl_cpu_store_policy.prefetch = prefetch;
    g_pinned = 1;
    return 0;
}
