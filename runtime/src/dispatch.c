/* torchlet runtime: the dispatcher (see tl_dispatch.h and docs/DISPATCHER.md).
 *
 * Layout of the work:
 *   - registrations (rare) take g_lock, edit a list, and recompute the tables
 *     of the operators they affect from scratch (so a table is a function of
 *     the set of registrations, never of their order);
 *   - lookups (every call) read one 64-bit mask and one table slot with
 *     relaxed/acquire atomic loads (plain moves on x86): no lock, no
 *     allocation, no string work.
 * A kernel entry is owned by its registration and is never freed while the
 * process may still call it: a deregistered entry moves to a retired list that
 * only tl_dispatch_reset_for_tests frees, so a concurrent caller that loaded
 * it just before the deregistration still runs valid code.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl_dispatch.h"
#include "tl_error.h"
#include "tl_tensor.h"

#if defined(__GNUC__)
#define TL_LIKELY(x) __builtin_expect(!!(x), 1)
#define TL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TL_LIKELY(x) (x)
#define TL_UNLIKELY(x) (x)
#endif

#define BIT(k) ((tl_keyset)1 << (k))
#define TABLE_SLOTS 64

_Static_assert(TL_NUM_RUNTIME_KEYS <= 63, "runtime keys must fit below the Undefined slot");
_Static_assert(TL_KEY_UNDEFINED == TABLE_SLOTS - 1, "Undefined is the last table slot");

/* ====================================================================== keys */

static const char *const k_runtime_names[TL_NUM_RUNTIME_KEYS] = {
    [TL_KEY_CPU] = "CPU",
    [TL_KEY_CUDA] = "CUDA",
    [TL_KEY_META] = "Meta",
    [TL_KEY_PRIVATEUSE1] = "PrivateUse1",
    [TL_KEY_BACKEND_SELECT] = "BackendSelect",
    [TL_KEY_PYTHON] = "Python",
    [TL_KEY_AD_INPLACE_OR_VIEW] = "ADInplaceOrView",
    [TL_KEY_AUTOGRAD_OTHER] = "AutogradOther",
    [TL_KEY_AUTOGRAD_CPU] = "AutogradCPU",
    [TL_KEY_AUTOGRAD_CUDA] = "AutogradCUDA",
    [TL_KEY_AUTOGRAD_META] = "AutogradMeta",
    [TL_KEY_AUTOGRAD_PRIVATEUSE1] = "AutogradPrivateUse1",
    [TL_KEY_AUTOCAST_CPU] = "AutocastCPU",
    [TL_KEY_AUTOCAST_CUDA] = "AutocastCUDA",
};

static const char *const k_alias_names[TL_KEY_END - TL_KEY_AUTOGRAD] = {
    [TL_KEY_AUTOGRAD - TL_KEY_AUTOGRAD] = "Autograd",
    [TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD - TL_KEY_AUTOGRAD] = "CompositeImplicitAutograd",
    [TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD - TL_KEY_AUTOGRAD] = "CompositeExplicitAutograd",
    [TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL - TL_KEY_AUTOGRAD] =
        "CompositeExplicitAutogradNonFunctional",
};

static const tl_keyset k_all = BIT(TL_NUM_RUNTIME_KEYS) - 1;
static const tl_keyset k_backends =
    BIT(TL_KEY_CPU) | BIT(TL_KEY_CUDA) | BIT(TL_KEY_META) | BIT(TL_KEY_PRIVATEUSE1);
static const tl_keyset k_autograd = BIT(TL_KEY_AUTOGRAD_OTHER) | BIT(TL_KEY_AUTOGRAD_CPU) |
                                    BIT(TL_KEY_AUTOGRAD_CUDA) | BIT(TL_KEY_AUTOGRAD_META) |
                                    BIT(TL_KEY_AUTOGRAD_PRIVATEUSE1);
static const tl_keyset k_autocast = BIT(TL_KEY_AUTOCAST_CPU) | BIT(TL_KEY_AUTOCAST_CUDA);

const char *tl_dispatch_key_name(int key) {
    if (key >= 0 && key < TL_NUM_RUNTIME_KEYS) return k_runtime_names[key];
    if (key == TL_KEY_UNDEFINED) return "Undefined";
    if (key >= TL_KEY_AUTOGRAD && key < TL_KEY_END) return k_alias_names[key - TL_KEY_AUTOGRAD];
    return NULL;
}

int tl_dispatch_key_parse(const char *name) {
    if (name) {
        for (int k = 0; k < TL_NUM_RUNTIME_KEYS; k++)
            if (strcmp(name, k_runtime_names[k]) == 0) return k;
        for (int k = TL_KEY_AUTOGRAD; k < TL_KEY_END; k++)
            if (strcmp(name, k_alias_names[k - TL_KEY_AUTOGRAD]) == 0) return k;
        if (strcmp(name, "Undefined") == 0) return TL_KEY_UNDEFINED;
    }
    tl_set_error(TL_ERR_RUNTIME, "could not parse dispatch key: %s", name ? name : "(null)");
    return TL_KEY_INVALID;
}

int tl_dispatch_key_is_runtime(int key) { return key >= 0 && key < TL_NUM_RUNTIME_KEYS; }
int tl_dispatch_key_is_alias(int key) { return key >= TL_KEY_AUTOGRAD && key < TL_KEY_END; }
int tl_dispatch_key_is_backend(int key) {
    return tl_dispatch_key_is_runtime(key) && (k_backends & BIT(key)) != 0;
}
int tl_dispatch_key_is_autograd(int key) {
    return tl_dispatch_key_is_runtime(key) && (k_autograd & BIT(key)) != 0;
}

int tl_dispatch_key_autograd_of(int backend_key) {
    switch (backend_key) {
    case TL_KEY_CPU: return TL_KEY_AUTOGRAD_CPU;
    case TL_KEY_CUDA: return TL_KEY_AUTOGRAD_CUDA;
    case TL_KEY_META: return TL_KEY_AUTOGRAD_META;
    case TL_KEY_PRIVATEUSE1: return TL_KEY_AUTOGRAD_PRIVATEUSE1;
    default: return TL_KEY_INVALID;
    }
}

int tl_dispatch_key_backend_of(int autograd_key) {
    switch (autograd_key) {
    case TL_KEY_AUTOGRAD_CPU: return TL_KEY_CPU;
    case TL_KEY_AUTOGRAD_CUDA: return TL_KEY_CUDA;
    case TL_KEY_AUTOGRAD_META: return TL_KEY_META;
    case TL_KEY_AUTOGRAD_PRIVATEUSE1: return TL_KEY_PRIVATEUSE1;
    default: return TL_KEY_INVALID;
    }
}

tl_keyset tl_dispatch_alias_keyset(int key) {
    if (tl_dispatch_key_is_runtime(key)) return BIT(key);
    switch (key) {
    case TL_KEY_AUTOGRAD: return k_autograd;
    case TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD: return k_backends | k_autograd;
    case TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD:
    case TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL: return k_backends;
    default: return 0;
    }
}

int tl_dispatch_key_autocast_of(int backend_key) {
    switch (backend_key) {
    case TL_KEY_CPU: return TL_KEY_AUTOCAST_CPU;
    case TL_KEY_CUDA: return TL_KEY_AUTOCAST_CUDA;
    default: return TL_KEY_INVALID;
    }
}

tl_keyset tl_dispatch_backend_tensor_keyset(int backend_key) {
    int ag = tl_dispatch_key_autograd_of(backend_key);
    if (ag < 0) return 0;
    int ac = tl_dispatch_key_autocast_of(backend_key);
    return BIT(backend_key) | BIT(TL_KEY_AD_INPLACE_OR_VIEW) | BIT(ag) | (ac < 0 ? 0 : BIT(ac));
}

tl_keyset tl_keyset_all(void) { return k_all; }
tl_keyset tl_keyset_autograd(void) { return k_autograd; }
tl_keyset tl_keyset_autocast(void) { return k_autocast; }

int tl_keyset_highest(tl_keyset ks) {
    ks &= k_all;
    return ks ? 63 - __builtin_clzll(ks) : TL_KEY_UNDEFINED;
}

tl_keyset tl_keyset_below(tl_keyset ks, int key) {
    if (key <= 0) return 0;
    if (key >= 63) return ks;
    return ks & (BIT(key) - 1);
}

/* ============================================================ string builder */

typedef struct sb {
    char *buf;
    size_t n;   /* capacity including the NUL */
    size_t len; /* full length that would have been written */
} sb;

static void sb_init(sb *b, char *buf, size_t n) {
    b->buf = buf;
    b->n = buf ? n : 0;
    b->len = 0;
    if (b->n) buf[0] = 0;
}

static void sb_add(sb *b, const char *s) {
    size_t l = strlen(s);
    if (b->n && b->len < b->n - 1) {
        size_t room = b->n - 1 - b->len;
        size_t c = l < room ? l : room;
        memcpy(b->buf + b->len, s, c);
        b->buf[b->len + c] = 0;
    }
    b->len += l;
}

int64_t tl_dispatch_keyset_to_string(tl_keyset ks, char *buf, size_t n) {
    sb b;
    sb_init(&b, buf, n);
    sb_add(&b, "DispatchKeySet(");
    int first = 1;
    for (int k = 0; k < TL_NUM_RUNTIME_KEYS; k++) {
        if (!(ks & BIT(k))) continue;
        if (!first) sb_add(&b, ", ");
        sb_add(&b, k_runtime_names[k]);
        first = 0;
    }
    sb_add(&b, ")");
    return (int64_t)b.len;
}

/* ======================================================== thread-local state */

/* Like PyTorch's LocalDispatchKeySet, the included set is stored XOR the
 * default included set, so a thread's zero-initialised state means "the
 * defaults": BackendSelect (so factory functions, which have no tensor
 * arguments, reach their BackendSelect kernel) and ADInplaceOrView. Both are
 * fallthrough for operators without a kernel there, so they cost nothing. */
static const tl_keyset k_default_included = BIT(TL_KEY_BACKEND_SELECT) | BIT(TL_KEY_AD_INPLACE_OR_VIEW);
/* The excluded set is stored the same way: by default every Autocast key is
 * excluded (autocast off), and "autocast enabled for cpu" means AutocastCPU
 * removed from the set (PyTorch's default_excluded_set). */
static const tl_keyset k_default_excluded = BIT(TL_KEY_AUTOCAST_CPU) | BIT(TL_KEY_AUTOCAST_CUDA);

typedef struct tls_state {
    tl_keyset included_x; /* included ^ k_default_included */
    tl_keyset excluded_x; /* excluded ^ k_default_excluded */
} tls_state;

/* initial-exec: one %fs-relative load instead of a __tls_get_addr call when
 * the runtime is a dlopen()ed extension; 16 bytes fit glibc's static TLS
 * surplus. */
#if defined(__GNUC__) && !defined(TL_DISPATCH_NO_INITIAL_EXEC_TLS)
static _Thread_local tls_state g_tls __attribute__((tls_model("initial-exec")));
#else
static _Thread_local tls_state g_tls;
#endif

tl_keyset tl_tls_default_included(void) { return k_default_included; }
tl_keyset tl_tls_get_included(void) { return g_tls.included_x ^ k_default_included; }
tl_keyset tl_tls_default_excluded(void) { return k_default_excluded; }
tl_keyset tl_tls_get_excluded(void) { return g_tls.excluded_x ^ k_default_excluded; }

static int check_keyset(tl_keyset ks) {
    if (ks & ~k_all)
        return tl_set_error(TL_ERR_VALUE,
                            "keyset 0x%llx has bits that are not runtime dispatch keys",
                            (unsigned long long)ks);
    return 0;
}

int tl_tls_set_included(tl_keyset ks) {
    if (check_keyset(ks)) return -1;
    g_tls.included_x = ks ^ k_default_included;
    return 0;
}

int tl_tls_set_excluded(tl_keyset ks) {
    if (check_keyset(ks)) return -1;
    g_tls.excluded_x = ks ^ k_default_excluded;
    return 0;
}

tl_keyset tl_include_guard_enter(tl_keyset keys) {
    tl_keyset prev = tl_tls_get_included();
    g_tls.included_x = (prev | (keys & k_all)) ^ k_default_included;
    return prev;
}

void tl_include_guard_exit(tl_keyset previous) {
    g_tls.included_x = (previous & k_all) ^ k_default_included;
}

tl_keyset tl_exclude_guard_enter(tl_keyset keys) {
    tl_keyset prev = tl_tls_get_excluded();
    g_tls.excluded_x = (prev | (keys & k_all)) ^ k_default_excluded;
    return prev;
}

void tl_exclude_guard_exit(tl_keyset previous) {
    g_tls.excluded_x = (previous & k_all) ^ k_default_excluded;
}

static inline tl_keyset apply_tls(tl_keyset tensor_keys) {
    return (tensor_keys | (g_tls.included_x ^ k_default_included)) &
           ~(g_tls.excluded_x ^ k_default_excluded);
}

tl_keyset tl_dispatch_compute_keyset(tl_keyset tensor_keys) { return apply_tls(tensor_keys); }

/* ================================================================ registry */

enum provenance {
    PROV_MISSING = 0,
    PROV_KERNEL,
    PROV_DEFAULT_BACKEND,
    PROV_MATH,
    PROV_AUTOGRAD,
    PROV_FALLBACK,
};

static const char *const k_prov_names[] = {
    [PROV_MISSING] = "missing",
    [PROV_KERNEL] = "kernel",
    [PROV_DEFAULT_BACKEND] = "default backend kernel",
    [PROV_MATH] = "math kernel",
    [PROV_AUTOGRAD] = "autograd kernel",
    [PROV_FALLBACK] = "backend fallback",
};

typedef struct tl_reg {
    int64_t id;
    tl_operator *op; /* NULL for a backend fallback */
    struct tl_reg *next;
    char *debug;
    tl_kernel kernel;
} tl_reg;

struct tl_operator {
    /* hot: read by every lookup */
    tl_keyset nonfallthrough;               /* runtime keys whose slot is not a fallthrough */
    const tl_kernel *table[TABLE_SLOTS];    /* index = runtime key, or Undefined (63) */
    /* cold */
    uint8_t prov[TABLE_SLOTS];
    char *name;
    char *schema;         /* NULL while declared but not defined */
    int nargs;
    int nrets;
    int defined;          /* 0: declared (kernels may be registered) or undefined again */
    tl_reg *regs; /* newest first */
};

/* a schema string replaced by a redefinition: a concurrent reader of
 * tl_op_schema may still hold it, so it is freed only by the test reset */
typedef struct tl_retired_str {
    struct tl_retired_str *next;
    char *s;
} tl_retired_str;
static tl_retired_str *g_retired_strs;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tl_operator **g_ops;      /* in definition order */
static int64_t g_nops, g_capops;
static tl_operator **g_hash;     /* open addressing, power-of-two capacity */
static size_t g_hcap;
static tl_reg *g_fallbacks[TL_NUM_RUNTIME_KEYS]; /* newest first */
static tl_reg *g_retired;
static int64_t g_next_id;

#define DEFAULT_FT(k) [k] = {NULL, NULL, NULL, "registered in torchlet runtime", 1, k}
static const tl_kernel g_default_fallbacks[TL_NUM_RUNTIME_KEYS] = {
    DEFAULT_FT(TL_KEY_BACKEND_SELECT),      DEFAULT_FT(TL_KEY_PYTHON),
    DEFAULT_FT(TL_KEY_AD_INPLACE_OR_VIEW),  DEFAULT_FT(TL_KEY_AUTOGRAD_OTHER),
    DEFAULT_FT(TL_KEY_AUTOGRAD_CPU),        DEFAULT_FT(TL_KEY_AUTOGRAD_CUDA),
    DEFAULT_FT(TL_KEY_AUTOGRAD_META),       DEFAULT_FT(TL_KEY_AUTOGRAD_PRIVATEUSE1),
    DEFAULT_FT(TL_KEY_AUTOCAST_CPU),        DEFAULT_FT(TL_KEY_AUTOCAST_CUDA),
};

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static tl_operator *hash_find_locked(const char *name) {
    if (!g_hcap) return NULL;
    size_t i = (size_t)hash_name(name) & (g_hcap - 1);
    for (; g_hash[i]; i = (i + 1) & (g_hcap - 1))
        if (strcmp(g_hash[i]->name, name) == 0) return g_hash[i];
    return NULL;
}

static void hash_put(tl_operator **h, size_t cap, tl_operator *op) {
    size_t i = (size_t)hash_name(op->name) & (cap - 1);
    while (h[i]) i = (i + 1) & (cap - 1);
    h[i] = op;
}

/* makes room for one more operator; -1 + MemoryError */
static int reserve_op_locked(void) {
    if (g_nops == g_capops) {
        int64_t ncap = g_capops ? g_capops * 2 : 256;
        tl_operator **n = realloc(g_ops, (size_t)ncap * sizeof *n);
        if (!n) return tl_set_error(TL_ERR_MEMORY, "out of memory defining an operator");
        g_ops = n;
        g_capops = ncap;
    }
    if ((size_t)(g_nops + 1) * 2 > g_hcap) {
        size_t ncap = g_hcap ? g_hcap * 2 : 512;
        tl_operator **h = calloc(ncap, sizeof *h);
        if (!h) return tl_set_error(TL_ERR_MEMORY, "out of memory defining an operator");
        for (int64_t i = 0; i < g_nops; i++) hash_put(h, ncap, g_ops[i]);
        free(g_hash);
        g_hash = h;
        g_hcap = ncap;
    }
    return 0;
}

/* ------------------------------------------------------- table computation */

static const tl_reg *find_reg(const tl_operator *op, int key) {
    for (const tl_reg *r = op->regs; r; r = r->next)
        if (r->kernel.key == key) return r;
    return NULL;
}

static const tl_kernel *backend_fallback(int key) {
    if (g_fallbacks[key]) return &g_fallbacks[key]->kernel;
    if (g_default_fallbacks[key].debug) return &g_default_fallbacks[key];
    return NULL;
}

/* PyTorch's OperatorEntry::computeDispatchTableEntryWithDebug, for torchlet's
 * keys. `slot` is a runtime key or TL_KEY_UNDEFINED. */
static const tl_kernel *compute_entry(const tl_operator *op, int slot, int *prov) {
    const tl_reg *r;
    const int undef = slot == TL_KEY_UNDEFINED;
    const int backend = !undef && (k_backends & BIT(slot));
    const int autograd = !undef && (k_autograd & BIT(slot));

    /* 1. a kernel registered for this very key */
    if (!undef && (r = find_reg(op, slot))) {
        *prov = PROV_KERNEL;
        return &r->kernel;
    }
    /* 2. CompositeExplicitAutograd(NonFunctional) fills backends and Undefined */
    if (undef || backend) {
        if ((r = find_reg(op, TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL)) ||
            (r = find_reg(op, TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD))) {
            *prov = PROV_DEFAULT_BACKEND;
            return &r->kernel;
        }
    }
    /* 3. CompositeImplicitAutograd fills backends, Undefined, and an autograd
     *    key unless its backend has a kernel of its own (direct or
     *    CompositeExplicitAutograd): that backend kernel then needs autograd
     *    from elsewhere, and the decomposition must not hide it. */
    if (undef || backend || autograd) {
        if ((r = find_reg(op, TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD))) {
            int has_backend_kernel = 0;
            if (autograd) {
                int b = tl_dispatch_key_backend_of(slot);
                has_backend_kernel =
                    (b >= 0 && find_reg(op, b)) ||
                    find_reg(op, TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD) ||
                    find_reg(op, TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL);
            }
            if (!has_backend_kernel) {
                *prov = PROV_MATH;
                return &r->kernel;
            }
        }
    }
    /* 4. the Autograd alias fills every autograd key */
    if (autograd && (r = find_reg(op, TL_KEY_AUTOGRAD))) {
        *prov = PROV_AUTOGRAD;
        return &r->kernel;
    }
    /* 5. the backend fallback of the key */
    if (!undef) {
        const tl_kernel *k = backend_fallback(slot);
        if (k) {
            *prov = PROV_FALLBACK;
            return k;
        }
    }
    *prov = PROV_MISSING;
    return NULL;
}

static void compute_table(const tl_operator *op, const tl_kernel **table, uint8_t *prov,
                          tl_keyset *nonfallthrough) {
    tl_keyset mask = 0;
    for (int k = 0; k < TABLE_SLOTS; k++) {
        table[k] = NULL;
        prov[k] = PROV_MISSING;
    }
    for (int k = 0; k < TL_NUM_RUNTIME_KEYS; k++) {
        int p;
        const tl_kernel *kern = compute_entry(op, k, &p);
        table[k] = kern;
        prov[k] = (uint8_t)p;
        if (!kern || !kern->fallthrough) mask |= BIT(k);
    }
    int p;
    const tl_kernel *kern = compute_entry(op, TL_KEY_UNDEFINED, &p);
    if (kern && kern->fallthrough) { /* nothing below Undefined to fall through to */
        kern = NULL;
        p = PROV_MISSING;
    }
    table[TL_KEY_UNDEFINED] = kern;
    prov[TL_KEY_UNDEFINED] = (uint8_t)p;
    *nonfallthrough = mask;
}

static void recompute_locked(tl_operator *op) {
    const tl_kernel *table[TABLE_SLOTS];
    uint8_t prov[TABLE_SLOTS];
    tl_keyset mask;
    compute_table(op, table, prov, &mask);
    /* publish: kernels become visible before the mask can select them */
    for (int k = 0; k < TABLE_SLOTS; k++)
        __atomic_store_n(&op->table[k], table[k], __ATOMIC_RELEASE);
    memcpy(op->prov, prov, sizeof prov);
    __atomic_store_n(&op->nonfallthrough, mask, __ATOMIC_RELEASE);
}

static void recompute_all_locked(void) {
    for (int64_t i = 0; i < g_nops; i++) recompute_locked(g_ops[i]);
}

/* ------------------------------------------------------------ schema parsing */

/* Counts the comma-separated items of the parenthesised list starting at *pp
 * (which points at '('), skipping a bare '*'. Leaves *pp after the ')'.
 * -1 on unbalanced text. */
static int count_items(const char **pp) {
    const char *p = *pp + 1;
    int depth = 0, count = 0;
    const char *item_start = p;
    for (;; p++) {
        char c = *p;
        if (c == 0) return -1;
        if (c == '"' || c == '\'') {
            char q = c;
            for (p++; *p && *p != q; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) return -1;
            continue;
        }
        if (depth == 0 && (c == ',' || c == ')')) {
            /* an item is the text between separators; '*' alone is the kw-only marker */
            const char *a = item_start, *b = p;
            while (a < b && (*a == ' ' || *a == '\t' || *a == '\n')) a++;
            while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n')) b--;
            if (b > a && !(b - a == 1 && *a == '*')) count++;
            else if (b == a && (c == ',' || count > 0)) return -1; /* empty item */
            item_start = p + 1;
            if (c == ')') break;
            continue;
        }
        if (c == '(' || c == '[') depth++;
        else if (c == ')' || c == ']') {
            if (--depth < 0) return -1;
        }
    }
    *pp = p + 1;
    return count;
}

static int parse_schema(const char *name, const char *schema, int *nargs, int *nrets) {
    const char *p = strchr(schema, '(');
    if (!p) goto bad;
    int a = count_items(&p);
    if (a < 0) goto bad;
    while (*p == ' ') p++;
    if (p[0] != '-' || p[1] != '>') goto bad;
    p += 2;
    while (*p == ' ') p++;
    int r;
    if (*p == '(') {
        r = count_items(&p);
        if (r < 0) goto bad;
    } else {
        if (!*p) goto bad;
        r = 1;
    }
    *nargs = a;
    *nrets = r;
    return 0;
bad:
    return tl_set_error(TL_ERR_RUNTIME, "invalid schema for operator %s: '%s'", name, schema);
}

/* ------------------------------------------------------------------ define */

/* the operator named `name`, created (declared, not defined) when absent;
 * g_lock held. NULL + MemoryError. */
static tl_operator *find_or_declare_locked(const char *name) {
    tl_operator *op = hash_find_locked(name);
    if (op) return op;
    if (reserve_op_locked()) return NULL;
    op = calloc(1, sizeof *op);
    if (!op || !(op->name = dup_str(name))) {
        free(op);
        tl_set_error(TL_ERR_MEMORY, "out of memory defining operator %s", name);
        return NULL;
    }
    op->nargs = op->nrets = -1;
    recompute_locked(op);
    g_ops[g_nops++] = op;
    hash_put(g_hash, g_hcap, op);
    return op;
}

static void retire_str_locked(char *s) {
    tl_retired_str *r = malloc(sizeof *r);
    if (!r) return; /* leak rather than free a string a reader may hold */
    r->s = s;
    r->next = g_retired_strs;
    g_retired_strs = r;
}

tl_operator *tl_op_define(const char *name, const char *schema) {
    if (!name || !*name) {
        tl_set_error(TL_ERR_VALUE, "tl_op_define: operator name is NULL or empty");
        return NULL;
    }
    if (!schema) {
        tl_set_error(TL_ERR_VALUE, "tl_op_define: schema of %s is NULL", name);
        return NULL;
    }
    int nargs = 0, nrets = 0;
    if (parse_schema(name, schema, &nargs, &nrets)) return NULL;

    pthread_mutex_lock(&g_lock);
    tl_operator *op = find_or_declare_locked(name);
    if (op && op->defined) {
        if (strcmp(op->schema, schema) != 0) {
            tl_set_error(TL_ERR_RUNTIME,
                         "Tried to register an operator (%s) with the same name and overload "
                         "name multiple times. Each overload's schema should only be "
                         "registered once. Duplicate registration: %s. Original registration: %s",
                         name, schema, op->schema);
            op = NULL;
        }
    } else if (op) {
        char *text = dup_str(schema);
        if (!text) {
            tl_set_error(TL_ERR_MEMORY, "out of memory defining operator %s", name);
            op = NULL;
        } else {
            if (op->schema) retire_str_locked(op->schema);
            op->schema = text;
            op->nargs = nargs;
            op->nrets = nrets;
            __atomic_store_n(&op->defined, 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return op;
}

tl_operator *tl_op_declare(const char *name) {
    if (!name || !*name) {
        tl_set_error(TL_ERR_VALUE, "tl_op_declare: operator name is NULL or empty");
        return NULL;
    }
    pthread_mutex_lock(&g_lock);
    tl_operator *op = find_or_declare_locked(name);
    pthread_mutex_unlock(&g_lock);
    return op;
}

int tl_op_undefine(tl_operator *op) {
    if (!op) return tl_set_error(TL_ERR_VALUE, "tl_op_undefine: NULL operator");
    pthread_mutex_lock(&g_lock);
    int was = op->defined;
    __atomic_store_n(&op->defined, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_lock);
    if (!was) return tl_set_error(TL_ERR_RUNTIME, "operator %s is not defined", op->name);
    return 0;
}

int tl_op_is_defined(const tl_operator *op) {
    return op ? __atomic_load_n(&op->defined, __ATOMIC_ACQUIRE) : 0;
}

tl_operator *tl_dispatch_operator_at(int64_t i) {
    pthread_mutex_lock(&g_lock);
    tl_operator *op = i >= 0 && i < g_nops ? g_ops[i] : NULL;
    pthread_mutex_unlock(&g_lock);
    return op;
}

tl_operator *tl_op_find(const char *name) {
    if (!name) {
        tl_set_error(TL_ERR_RUNTIME, "No such operator (null)");
        return NULL;
    }
    pthread_mutex_lock(&g_lock);
    tl_operator *op = hash_find_locked(name);
    if (op && !op->defined) op = NULL;
    pthread_mutex_unlock(&g_lock);
    if (!op) tl_set_error(TL_ERR_RUNTIME, "No such operator %s", name);
    return op;
}

const char *tl_op_name(const tl_operator *op) { return op ? op->name : NULL; }
const char *tl_op_schema(const tl_operator *op) { return op ? op->schema : NULL; }
int tl_op_num_arguments(const tl_operator *op) { return op ? op->nargs : -1; }
int tl_op_num_returns(const tl_operator *op) { return op ? op->nrets : -1; }

int64_t tl_dispatch_num_operators(void) {
    pthread_mutex_lock(&g_lock);
    int64_t n = g_nops;
    pthread_mutex_unlock(&g_lock);
    return n;
}

/* ------------------------------------------------------------ registration */

static tl_reg *new_reg(int key, void *unboxed, tl_boxed_fn boxed, void *ctx, const char *debug,
                       int fallthrough) {
    tl_reg *r = calloc(1, sizeof *r);
    if (!r) {
        tl_set_error(TL_ERR_MEMORY, "out of memory registering a kernel");
        return NULL;
    }
    r->debug = dup_str(debug ? debug : "unnamed kernel");
    if (!r->debug) {
        free(r);
        tl_set_error(TL_ERR_MEMORY, "out of memory registering a kernel");
        return NULL;
    }
    r->kernel.unboxed = fallthrough ? NULL : unboxed;
    r->kernel.boxed = fallthrough ? NULL : boxed;
    r->kernel.ctx = fallthrough ? NULL : ctx;
    r->kernel.debug = r->debug;
    r->kernel.fallthrough = fallthrough;
    r->kernel.key = key;
    return r;
}

static void free_reg(tl_reg *r) {
    free(r->debug);
    free(r);
}

static int check_op_key(const tl_operator *op, int key) {
    if (!op) return tl_set_error(TL_ERR_VALUE, "kernel registration: NULL operator");
    if (!tl_dispatch_key_is_runtime(key) && !tl_dispatch_key_is_alias(key)) {
        const char *kn = tl_dispatch_key_name(key);
        if (kn)
            return tl_set_error(TL_ERR_RUNTIME, "cannot register a kernel of %s for key %s",
                                op->name, kn);
        return tl_set_error(TL_ERR_RUNTIME, "cannot register a kernel of %s for key number %d",
                            op->name, key);
    }
    return 0;
}

static int64_t add_op_reg(tl_operator *op, tl_reg *r) {
    pthread_mutex_lock(&g_lock);
    r->id = ++g_next_id;
    r->op = op;
    r->next = op->regs;
    op->regs = r;
    recompute_locked(op);
    int64_t id = r->id;
    pthread_mutex_unlock(&g_lock);
    return id;
}

int64_t tl_op_register_kernel(tl_operator *op, int key, void *unboxed, tl_boxed_fn boxed,
                              void *ctx, const char *debug) {
    if (check_op_key(op, key)) return -1;
    if (!boxed)
        return tl_set_error(TL_ERR_VALUE,
                            "kernel registration for %s at %s: a boxed function is required "
                            "(the operator's generated boxed adapter, or a boxed kernel)",
                            op->name, tl_dispatch_key_name(key));
    tl_reg *r = new_reg(key, unboxed, boxed, ctx, debug, 0);
    if (!r) return -1;
    return add_op_reg(op, r);
}

int64_t tl_op_register_fallthrough(tl_operator *op, int key, const char *debug) {
    if (check_op_key(op, key)) return -1;
    tl_reg *r = new_reg(key, NULL, NULL, NULL, debug ? debug : "registered by tl_op_register_fallthrough", 1);
    if (!r) return -1;
    return add_op_reg(op, r);
}

static int64_t add_fallback(int key, tl_boxed_fn boxed, void *ctx, const char *debug,
                            int fallthrough) {
    if (!tl_dispatch_key_is_runtime(key)) {
        const char *kn = tl_dispatch_key_name(key);
        if (kn)
            return tl_set_error(TL_ERR_RUNTIME,
                                "backend fallbacks are registered for runtime keys, not %s", kn);
        return tl_set_error(TL_ERR_RUNTIME, "cannot register a backend fallback for key number %d",
                            key);
    }
    if (!fallthrough && !boxed)
        return tl_set_error(TL_ERR_VALUE, "backend fallback for %s: a boxed function is required",
                            k_runtime_names[key]);
    tl_reg *r = new_reg(key, NULL, boxed, ctx, debug, fallthrough);
    if (!r) return -1;
    pthread_mutex_lock(&g_lock);
    r->id = ++g_next_id;
    r->op = NULL;
    r->next = g_fallbacks[key];
    g_fallbacks[key] = r;
    recompute_all_locked();
    int64_t id = r->id;
    pthread_mutex_unlock(&g_lock);
    return id;
}

int64_t tl_register_backend_fallback(int key, tl_boxed_fn boxed, void *ctx, const char *debug) {
    return add_fallback(key, boxed, ctx, debug, 0);
}

int64_t tl_register_backend_fallthrough(int key, const char *debug) {
    return add_fallback(key, NULL, NULL, debug ? debug : "registered by tl_register_backend_fallthrough", 1);
}

/* unlinks the registration `id` from *list; returns it or NULL */
static tl_reg *unlink_reg(tl_reg **list, int64_t id) {
    for (tl_reg **pp = list; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            tl_reg *r = *pp;
            *pp = r->next;
            return r;
        }
    }
    return NULL;
}

int tl_dispatch_deregister(int64_t id) {
    pthread_mutex_lock(&g_lock);
    tl_reg *r = NULL;
    for (int64_t i = 0; i < g_nops && !r; i++) {
        r = unlink_reg(&g_ops[i]->regs, id);
        if (r) recompute_locked(g_ops[i]);
    }
    for (int k = 0; k < TL_NUM_RUNTIME_KEYS && !r; k++) {
        r = unlink_reg(&g_fallbacks[k], id);
        if (r) recompute_all_locked();
    }
    if (r) {
        r->next = g_retired; /* a concurrent call may still be running it */
        g_retired = r;
    }
    pthread_mutex_unlock(&g_lock);
    if (!r)
        return tl_set_error(TL_ERR_RUNTIME,
                            "no dispatcher registration with id %lld (never made or already removed)",
                            (long long)id);
    return 0;
}

static void free_reg_list(tl_reg *r) {
    while (r) {
        tl_reg *next = r->next;
        free_reg(r);
        r = next;
    }
}

void tl_dispatch_reset_for_tests(void) {
    pthread_mutex_lock(&g_lock);
    for (int64_t i = 0; i < g_nops; i++) {
        tl_operator *op = g_ops[i];
        free_reg_list(op->regs);
        free(op->name);
        free(op->schema);
        free(op);
    }
    while (g_retired_strs) {
        tl_retired_str *r = g_retired_strs;
        g_retired_strs = r->next;
        free(r->s);
        free(r);
    }
    free(g_ops);
    free(g_hash);
    g_ops = NULL;
    g_hash = NULL;
    g_nops = g_capops = 0;
    g_hcap = 0;
    for (int k = 0; k < TL_NUM_RUNTIME_KEYS; k++) {
        free_reg_list(g_fallbacks[k]);
        g_fallbacks[k] = NULL;
    }
    free_reg_list(g_retired);
    g_retired = NULL;
    pthread_mutex_unlock(&g_lock);
    g_tls.included_x = 0;
    g_tls.excluded_x = 0;
}

/* ============================================================ introspection */

static void dump_table_locked(const tl_operator *op, sb *b) {
    static const int order_first = TL_KEY_UNDEFINED;
    for (int i = -1; i < TL_NUM_RUNTIME_KEYS; i++) {
        int k = i < 0 ? order_first : i;
        const tl_kernel *kern = op->table[k];
        if (!kern) continue;
        sb_add(b, tl_dispatch_key_name(k));
        sb_add(b, ": ");
        if (kern->fallthrough) sb_add(b, "fallthrough ");
        sb_add(b, kern->debug);
        sb_add(b, " [");
        sb_add(b, k_prov_names[op->prov[k]]);
        sb_add(b, "]\n");
    }
}

static void list_keys_locked(const tl_operator *op, sb *b) {
    sb_add(b, "[");
    int first = 1;
    for (int k = 0; k < TL_NUM_RUNTIME_KEYS; k++) {
        if (!op->table[k]) continue;
        if (!first) sb_add(b, ", ");
        sb_add(b, k_runtime_names[k]);
        first = 0;
    }
    sb_add(b, "]");
}

int64_t tl_op_dump_table(const tl_operator *op, char *buf, size_t n) {
    if (!op) return tl_set_error(TL_ERR_VALUE, "tl_op_dump_table: NULL operator");
    sb b;
    sb_init(&b, buf, n);
    pthread_mutex_lock(&g_lock);
    dump_table_locked(op, &b);
    pthread_mutex_unlock(&g_lock);
    return (int64_t)b.len;
}

int64_t tl_dispatch_dump_table(const char *name, char *buf, size_t n) {
    tl_operator *op = tl_op_find(name);
    if (!op) return -1;
    return tl_op_dump_table(op, buf, n);
}

int64_t tl_op_dump_registrations(const tl_operator *op, char *buf, size_t n) {
    if (!op) return tl_set_error(TL_ERR_VALUE, "tl_op_dump_registrations: NULL operator");
    sb b;
    sb_init(&b, buf, n);
    pthread_mutex_lock(&g_lock);
    for (const tl_reg *r = op->regs; r; r = r->next) {
        sb_add(&b, tl_dispatch_key_name(r->kernel.key));
        sb_add(&b, ": ");
        if (r->kernel.fallthrough) sb_add(&b, "fallthrough ");
        sb_add(&b, r->debug);
        sb_add(&b, "\n");
    }
    pthread_mutex_unlock(&g_lock);
    return (int64_t)b.len;
}

int64_t tl_op_list_keys(const tl_operator *op, char *buf, size_t n) {
    if (!op) return tl_set_error(TL_ERR_VALUE, "tl_op_list_keys: NULL operator");
    sb b;
    sb_init(&b, buf, n);
    pthread_mutex_lock(&g_lock);
    list_keys_locked(op, &b);
    pthread_mutex_unlock(&g_lock);
    return (int64_t)b.len;
}

int tl_op_has_registration(const tl_operator *op, int key) {
    if (!op) return 0;
    pthread_mutex_lock(&g_lock);
    int r = find_reg(op, key) != NULL;
    pthread_mutex_unlock(&g_lock);
    return r;
}

int tl_op_has_kernel_for_key(const tl_operator *op, int key) {
    if (!op || !(tl_dispatch_key_is_runtime(key) || key == TL_KEY_UNDEFINED)) return 0;
    return __atomic_load_n(&op->table[key], __ATOMIC_ACQUIRE) != NULL;
}

int tl_dispatch_check_invariants(void) {
    int bad = 0;
    const char *bad_name = NULL;
    pthread_mutex_lock(&g_lock);
    for (int64_t i = 0; i < g_nops && !bad; i++) {
        const tl_kernel *table[TABLE_SLOTS];
        uint8_t prov[TABLE_SLOTS];
        tl_keyset mask;
        compute_table(g_ops[i], table, prov, &mask);
        if (mask != g_ops[i]->nonfallthrough ||
            memcmp(table, g_ops[i]->table, sizeof table) != 0 ||
            memcmp(prov, g_ops[i]->prov, sizeof prov) != 0) {
            bad = 1;
            bad_name = g_ops[i]->name;
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (bad)
        return tl_set_error(TL_ERR_RUNTIME, "dispatch table of %s is stale", bad_name);
    return 0;
}

/* ================================================================ dispatch */

/* the error path of a lookup: PyTorch's OperatorEntry::reportError wording */
static const tl_kernel *report_missing(const tl_operator *op, int key) {
    char keys[1024], dump[4096];
    sb bk, bd;
    sb_init(&bk, keys, sizeof keys);
    sb_init(&bd, dump, sizeof dump);
    pthread_mutex_lock(&g_lock);
    list_keys_locked(op, &bk);
    dump_table_locked(op, &bd);
    pthread_mutex_unlock(&g_lock);
    if (key == TL_KEY_META) {
        /* PyTorch's Meta backend fallback (MetaFallbackKernel.cpp) */
        tl_set_error(TL_ERR_NOT_IMPLEMENTED,
                     "%s: attempted to run this operator with Meta tensors, but there was no fake "
                     "impl or Meta kernel registered. You may have run into this message while "
                     "using an operator with PT2 compilation APIs (torch.compile/torch.export); in "
                     "order to use this operator with those APIs you'll need to add a fake impl. "
                     "Please see the following for next steps:  "
                     "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html",
                     op->name);
    } else if (key == TL_KEY_UNDEFINED) {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED,
                     "There were no tensor arguments to this function (e.g., you passed an empty "
                     "list of Tensors), but no fallback function is registered for schema %s.  "
                     "This usually means that this function requires a non-empty list of "
                     "Tensors, or that you (the operator writer) forgot to register a fallback "
                     "function.  Available functions are %s.\n\n%s",
                     op->name, keys, dump);
    } else {
        tl_set_error(TL_ERR_NOT_IMPLEMENTED,
                     "Could not run '%s' with arguments from the '%s' backend. This could be "
                     "because the operator doesn't exist for this backend, or was omitted during "
                     "the selective/custom build process (if using custom build). '%s' is only "
                     "available for these backends: %s.\n\n%s",
                     op->name, tl_dispatch_key_name(key), op->name, keys, dump);
    }
    return NULL;
}

static inline int select_index(const tl_operator *op, tl_keyset ks) {
    tl_keyset m = ks & __atomic_load_n(&op->nonfallthrough, __ATOMIC_ACQUIRE);
    return m ? 63 - __builtin_clzll(m) : TL_KEY_UNDEFINED;
}

static inline const tl_kernel *lookup(const tl_operator *op, tl_keyset ks) {
    int idx = select_index(op, ks);
    const tl_kernel *k = __atomic_load_n(&op->table[idx], __ATOMIC_ACQUIRE);
    if (TL_LIKELY(k != NULL)) return k;
    return report_missing(op, idx);
}

const tl_kernel *tl_op_lookup(const tl_operator *op, tl_keyset ks) {
    if (TL_UNLIKELY(!op)) {
        tl_set_error(TL_ERR_VALUE, "dispatch on a NULL operator");
        return NULL;
    }
    return lookup(op, ks);
}

const tl_kernel *tl_op_lookup_below(const tl_operator *op, tl_keyset ks, int key) {
    return tl_op_lookup(op, tl_keyset_below(ks, key));
}

const tl_kernel *tl_op_select(const tl_operator *op, tl_keyset tensor_keys, tl_keyset *ks_out) {
    tl_keyset ks = apply_tls(tensor_keys);
    if (TL_LIKELY(ks_out != NULL)) *ks_out = ks;
    if (TL_UNLIKELY(!op)) {
        tl_set_error(TL_ERR_VALUE, "dispatch on a NULL operator");
        return NULL;
    }
    return lookup(op, ks);
}

int tl_op_dispatch_key(const tl_operator *op, tl_keyset ks) {
    if (!op) return TL_KEY_INVALID;
    return select_index(op, ks);
}

tl_keyset tl_op_fallthrough_keys(const tl_operator *op) {
    if (!op) return 0;
    return k_all & ~__atomic_load_n(&op->nonfallthrough, __ATOMIC_ACQUIRE);
}

tl_keyset tl_op_stack_keyset(const tl_operator *op, const tl_stack *stack) {
    if (!op || !stack) return 0;
    int64_t n = op->nargs < tl_stack_size(stack) ? op->nargs : tl_stack_size(stack);
    tl_keyset ks = 0;
    for (int64_t d = 0; d < n; d++) {
        const tl_ivalue *v = tl_stack_peek(stack, d);
        if (v->tag == TL_IV_TENSOR) {
            if (v->u.t) ks |= tl_tensor_key_set(v->u.t);
        } else if (v->tag == TL_IV_TENSOR_LIST || v->tag == TL_IV_OPT_TENSOR_LIST) {
            for (int64_t i = 0; i < v->u.tensors.len; i++)
                if (v->u.tensors.data[i]) ks |= tl_tensor_key_set(v->u.tensors.data[i]);
        }
    }
    return ks;
}

int tl_kernel_call_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks,
                         tl_stack *stack) {
    if (!kernel || !op || !stack)
        return tl_set_error(TL_ERR_VALUE, "tl_kernel_call_boxed: NULL argument");
    if (!kernel->boxed)
        return tl_set_error(TL_ERR_RUNTIME, "kernel '%s' of %s has no boxed function%s",
                            kernel->debug, op->name,
                            kernel->fallthrough ? " (it is a fallthrough)" : "");
    int64_t before = tl_stack_size(stack);
    if (before < op->nargs)
        return tl_set_error(TL_ERR_RUNTIME,
                            "%s takes %d arguments but the stack holds %lld values",
                            op->name, op->nargs, (long long)before);
    if (kernel->boxed(kernel, op, ks, stack) != 0) {
        if (tl_error_kind_get() == TL_OK)
            tl_set_error(TL_ERR_RUNTIME, "kernel '%s' of %s failed without setting an error",
                         kernel->debug, op->name);
        return -1;
    }
    int64_t expect = before - op->nargs + op->nrets;
    if (tl_stack_size(stack) != expect)
        return tl_set_error(TL_ERR_RUNTIME,
                            "kernel '%s' of %s left %lld values on the stack; expected %lld "
                            "(%d arguments replaced by %d returns)",
                            kernel->debug, op->name, (long long)tl_stack_size(stack),
                            (long long)expect, op->nargs, op->nrets);
    return 0;
}

/* boxed calls of a removed run-time operator fail (its handle stays valid) */
static int check_defined(const tl_operator *op) {
    if (TL_LIKELY(__atomic_load_n(&op->defined, __ATOMIC_ACQUIRE))) return 0;
    return tl_set_error(TL_ERR_RUNTIME, "operator %s is not defined (its schema was removed)", op->name);
}

int tl_op_call_boxed(const tl_operator *op, tl_stack *stack) {
    if (!op || !stack) return tl_set_error(TL_ERR_VALUE, "tl_op_call_boxed: NULL argument");
    if (check_defined(op)) return -1;
    if (tl_stack_size(stack) < op->nargs)
        return tl_set_error(TL_ERR_RUNTIME,
                            "%s takes %d arguments but the stack holds %lld values", op->name,
                            op->nargs, (long long)tl_stack_size(stack));
    tl_keyset ks = tl_dispatch_compute_keyset(tl_op_stack_keyset(op, stack));
    const tl_kernel *k = lookup(op, ks);
    if (!k) return -1;
    return tl_kernel_call_boxed(k, op, ks, stack);
}

int tl_op_redispatch_boxed(const tl_operator *op, tl_keyset ks, tl_stack *stack) {
    if (!op || !stack) return tl_set_error(TL_ERR_VALUE, "tl_op_redispatch_boxed: NULL argument");
    if (check_defined(op)) return -1;
    const tl_kernel *k = lookup(op, ks);
    if (!k) return -1;
    return tl_kernel_call_boxed(k, op, ks, stack);
}
