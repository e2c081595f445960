/* Test harness for the dispatcher (runtime/src/dispatch.c, runtime/src/ivalue.c),
 * built and run by tests/dispatcher/test_dispatch_core.py:
 *
 *     dispatch_harness <scenario>
 *
 * The dispatcher only needs three tensor functions (retain, release,
 * key_set); this file provides them for fake tensors that carry a keyset and
 * a number, so the dispatcher is tested without the tensor runtime. The
 * operator glue below (entry point, boxing wrapper, boxed adapter) is written
 * the way the generator is expected to emit it (docs/DISPATCHER.md).
 *
 * A scenario prints what the Python side checks and ends with "PASS <name>";
 * a failed CHECK prints "FAIL file:line: ..." and exits 1.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tl_dispatch.h"
#include "tl_error.h"

/* ------------------------------------------------------------------ checks */

static int g_checks;

#define CHECK(cond)                                                                \
    do {                                                                           \
        g_checks++;                                                                \
        if (!(cond)) {                                                             \
            printf("FAIL %s:%d: %s\n  pending error: %s\n", __FILE__, __LINE__,    \
                   #cond, tl_error_message());                                     \
            fflush(stdout);                                                        \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                            \
    do {                                                                           \
        g_checks++;                                                                \
        const char *a_ = (a), *b_ = (b);                                           \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                   \
            printf("FAIL %s:%d: %s == %s\n  got:      [%s]\n  expected: [%s]\n",   \
                   __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",                 \
                   b_ ? b_ : "(null)");                                            \
            fflush(stdout);                                                        \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#define CHECK_ERR(kind, text)                                                      \
    do {                                                                           \
        CHECK(tl_error_kind_get() == (kind));                                      \
        CHECK_STR(tl_error_message(), (text));                                     \
        tl_clear_error();                                                          \
    } while (0)

/* ------------------------------------------------------------ fake tensors */

struct tl_tensor {
    int64_t refs;
    tl_keyset ks;
    double value;
};

static int64_t g_live_tensors;

static tl_tensor *fake_new(tl_keyset ks, double value) {
    tl_tensor *t = malloc(sizeof *t);
    if (!t) abort();
    t->refs = 1;
    t->ks = ks;
    t->value = value;
    __atomic_add_fetch(&g_live_tensors, 1, __ATOMIC_RELAXED);
    return t;
}

void tl_tensor_retain(tl_tensor *t) { __atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED); }

void tl_tensor_release(tl_tensor *t) {
    if (!t) return;
    if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(t);
        __atomic_sub_fetch(&g_live_tensors, 1, __ATOMIC_RELAXED);
    }
}

uint64_t tl_tensor_key_set(const tl_tensor *t) { return t->ks; }

#define KS(k) ((tl_keyset)1 << (k))

static tl_keyset cpu_ks(void) { return tl_dispatch_backend_tensor_keyset(TL_KEY_CPU); }
static tl_keyset meta_ks(void) { return tl_dispatch_backend_tensor_keyset(TL_KEY_META); }

/* ------------------------------------------------------------ trace */

static char g_trace[512];

static void trace(const char *what) {
    if (g_trace[0]) strncat(g_trace, ",", sizeof g_trace - strlen(g_trace) - 1);
    strncat(g_trace, what, sizeof g_trace - strlen(g_trace) - 1);
}

/* ============ "generated" glue for test::add.Tensor, as the generator emits it ==== */

static const char *ADD_SCHEMA =
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";

/* the operator's unboxed kernel signature: keyset first, then the schema's arguments */
typedef tl_tensor *(*add_Tensor_fn)(tl_keyset ks, tl_tensor *self, tl_tensor *other,
                                    tl_scalar alpha);

static tl_operator *op_add; /* set once by register_add_op() */

static double scalar_to_double(tl_scalar s) {
    return s.kind == TL_SCALAR_DOUBLE ? s.d : (double)s.i;
}

/* boxed adapter: runs an unboxed kernel (kernel->unboxed) on a stack */
static int add_Tensor_boxed_adapter(const tl_kernel *kernel, const tl_operator *op,
                                    tl_keyset ks, tl_stack *stack) {
    (void)op;
    tl_scalar alpha;
    tl_tensor *self, *other;
    if (tl_stack_pop_scalar(stack, &alpha)) return -1;
    if (tl_stack_pop_tensor(stack, &other)) return -1;
    if (tl_stack_pop_tensor(stack, &self)) {
        tl_tensor_release(other);
        return -1;
    }
    tl_tensor *out = ((add_Tensor_fn)kernel->unboxed)(ks, self, other, alpha);
    tl_tensor_release(self);
    tl_tensor_release(other);
    if (!out) return -1;
    return tl_stack_push_tensor_steal(stack, out);
}

/* boxing wrapper: runs a boxed-only kernel from the unboxed entry point */
static tl_tensor *add_Tensor_call_boxed(const tl_kernel *kernel, tl_keyset ks, tl_tensor *self,
                                        tl_tensor *other, tl_scalar alpha) {
    tl_stack stack;
    tl_stack_init(&stack);
    tl_tensor *out = NULL;
    if (tl_stack_push_tensor(&stack, self) == 0 && tl_stack_push_tensor(&stack, other) == 0 &&
        tl_stack_push_scalar(&stack, alpha) == 0 &&
        tl_kernel_call_boxed(kernel, op_add, ks, &stack) == 0)
        tl_stack_pop_tensor(&stack, &out);
    tl_stack_free(&stack);
    return out;
}

/* entry point: at::_ops::add_Tensor::call */
static tl_tensor *tl_add_Tensor(tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
    tl_keyset ks;
    const tl_kernel *k =
        tl_op_select(op_add, tl_tensor_key_set(self) | tl_tensor_key_set(other), &ks);
    if (!k) return NULL;
    if (k->unboxed) return ((add_Tensor_fn)k->unboxed)(ks, self, other, alpha);
    return add_Tensor_call_boxed(k, ks, self, other, alpha);
}

/* redispatch: at::_ops::add_Tensor::redispatch (keyset used as given) */
static tl_tensor *tl_add_Tensor_redispatch(tl_keyset ks, tl_tensor *self, tl_tensor *other,
                                           tl_scalar alpha) {
    const tl_kernel *k = tl_op_lookup(op_add, ks);
    if (!k) return NULL;
    if (k->unboxed) return ((add_Tensor_fn)k->unboxed)(ks, self, other, alpha);
    return add_Tensor_call_boxed(k, ks, self, other, alpha);
}

static void register_add_op(void) {
    op_add = tl_op_define("test::add.Tensor", ADD_SCHEMA);
    CHECK(op_add != NULL);
}

/* kernels */
static tl_tensor *add_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
    (void)ks;
    trace("CPU");
    return fake_new(cpu_ks(), self->value + scalar_to_double(alpha) * other->value);
}

static tl_tensor *add_meta(tl_keyset ks, tl_tensor *self, tl_tensor *other, tl_scalar alpha) {
    (void)ks; (void)self; (void)other; (void)alpha;
    trace("Meta");
    return fake_new(meta_ks(), 0.0);
}

static tl_tensor *add_autograd_cpu(tl_keyset ks, tl_tensor *self, tl_tensor *other,
                                   tl_scalar alpha) {
    trace("AutogradCPU");
    return tl_add_Tensor_redispatch(tl_keyset_below(ks, TL_KEY_AUTOGRAD_CPU), self, other, alpha);
}

static tl_scalar alpha1(void) { return tl_scalar_from_int(1); }

/* tl_scalar_from_int lives in dtype.c; the harness has its own */
tl_scalar tl_scalar_from_int(int64_t v) {
    tl_scalar s;
    memset(&s, 0, sizeof s);
    s.kind = TL_SCALAR_INT;
    s.i = v;
    return s;
}

static tl_scalar scalar_double(double d) {
    tl_scalar s;
    memset(&s, 0, sizeof s);
    s.kind = TL_SCALAR_DOUBLE;
    s.d = d;
    return s;
}

/* a kernel that is only boxed and does nothing useful: for table tests */
static int dummy_boxed(const tl_kernel *k, const tl_operator *op, tl_keyset ks, tl_stack *st) {
    (void)k; (void)op; (void)ks; (void)st;
    return 0;
}

static char *dump_of(const tl_operator *op) {
    int64_t n = tl_op_dump_table(op, NULL, 0);
    CHECK(n >= 0);
    char *buf = malloc((size_t)n + 1);
    CHECK(buf != NULL);
    CHECK(tl_op_dump_table(op, buf, (size_t)n + 1) == n);
    return buf;
}

static const char *keyset_str(tl_keyset ks) {
    static char buf[512];
    tl_dispatch_keyset_to_string(ks, buf, sizeof buf);
    return buf;
}

/* ================================================================ scenarios */

static void scenario_priority(void) {
    /* names in increasing priority */
    const char *expected[] = {"CPU", "CUDA", "Meta", "PrivateUse1", "BackendSelect", "Python",
                              "ADInplaceOrView", "AutogradOther", "AutogradCPU", "AutogradCUDA",
                              "AutogradMeta", "AutogradPrivateUse1", "AutocastCPU", "AutocastCUDA"};
    CHECK(TL_NUM_RUNTIME_KEYS == (int)(sizeof expected / sizeof expected[0]));
    for (int k = 0; k < TL_NUM_RUNTIME_KEYS; k++) {
        CHECK_STR(tl_dispatch_key_name(k), expected[k]);
        CHECK(tl_dispatch_key_parse(expected[k]) == k);
    }
    CHECK(tl_keyset_highest(0) == TL_KEY_UNDEFINED);
    CHECK(tl_keyset_highest(cpu_ks()) == TL_KEY_AUTOCAST_CPU);
    CHECK(tl_keyset_highest(meta_ks()) == TL_KEY_AUTOGRAD_META); /* Meta has no autocast key */
    CHECK(tl_dispatch_key_autocast_of(TL_KEY_CUDA) == TL_KEY_AUTOCAST_CUDA);
    CHECK(tl_dispatch_key_autocast_of(TL_KEY_META) == TL_KEY_INVALID);
    CHECK(tl_keyset_autocast() == (KS(TL_KEY_AUTOCAST_CPU) | KS(TL_KEY_AUTOCAST_CUDA)));
    CHECK(tl_keyset_highest(KS(TL_KEY_CPU) | KS(TL_KEY_PYTHON)) == TL_KEY_PYTHON);
    CHECK(tl_keyset_highest(KS(TL_KEY_PYTHON) | KS(TL_KEY_AD_INPLACE_OR_VIEW)) ==
          TL_KEY_AD_INPLACE_OR_VIEW);
    CHECK(tl_keyset_highest(KS(TL_KEY_META) | KS(TL_KEY_CPU)) == TL_KEY_META);
    CHECK(tl_dispatch_key_autograd_of(TL_KEY_CPU) == TL_KEY_AUTOGRAD_CPU);
    CHECK(tl_dispatch_key_autograd_of(TL_KEY_META) == TL_KEY_AUTOGRAD_META);
    CHECK(tl_dispatch_key_autograd_of(TL_KEY_PYTHON) == TL_KEY_INVALID);
    CHECK(tl_dispatch_key_backend_of(TL_KEY_AUTOGRAD_CUDA) == TL_KEY_CUDA);
    CHECK(tl_dispatch_key_backend_of(TL_KEY_AUTOGRAD_OTHER) == TL_KEY_INVALID);
    CHECK(tl_dispatch_key_is_alias(TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD));
    CHECK(!tl_dispatch_key_is_runtime(TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD));
    CHECK(tl_dispatch_alias_keyset(TL_KEY_AUTOGRAD) == tl_keyset_autograd());
    CHECK(tl_dispatch_backend_tensor_keyset(TL_KEY_CPU) == TL_KEYSET_CPU_BITS);
    CHECK(tl_dispatch_backend_tensor_keyset(TL_KEY_META) == TL_KEYSET_META_BITS);
    CHECK(tl_dispatch_backend_tensor_keyset(TL_KEY_CUDA) == TL_KEYSET_CUDA_BITS);
    CHECK(tl_dispatch_backend_tensor_keyset(TL_KEY_PYTHON) == 0);
    CHECK(tl_keyset_below(cpu_ks(), TL_KEY_AUTOGRAD_CPU) ==
          (KS(TL_KEY_CPU) | KS(TL_KEY_AD_INPLACE_OR_VIEW)));

    /* the highest key with a kernel wins; fallthrough keys are skipped */
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_AUTOGRAD_CPU, (void *)add_autograd_cpu,
                                add_Tensor_boxed_adapter, NULL, "add_autograd_cpu") > 0);
    CHECK(tl_op_dispatch_key(op_add, cpu_ks()) == TL_KEY_AUTOGRAD_CPU);
    CHECK(tl_op_dispatch_key(op_add, KS(TL_KEY_CPU) | KS(TL_KEY_AD_INPLACE_OR_VIEW)) ==
          TL_KEY_CPU); /* ADInplaceOrView: default fallthrough */
    CHECK(tl_op_dispatch_key(op_add, KS(TL_KEY_CPU) | KS(TL_KEY_PYTHON)) == TL_KEY_CPU);
    CHECK(tl_op_dispatch_key(op_add, 0) == TL_KEY_UNDEFINED);
    CHECK(tl_op_fallthrough_keys(op_add) ==
          (KS(TL_KEY_BACKEND_SELECT) | KS(TL_KEY_PYTHON) | KS(TL_KEY_AD_INPLACE_OR_VIEW) |
           KS(TL_KEY_AUTOGRAD_OTHER) | KS(TL_KEY_AUTOGRAD_CUDA) | KS(TL_KEY_AUTOGRAD_META) |
           KS(TL_KEY_AUTOGRAD_PRIVATEUSE1) | tl_keyset_autocast()));
    const tl_kernel *k = tl_op_lookup(op_add, cpu_ks());
    CHECK(k && k->unboxed == (void *)add_autograd_cpu);
    CHECK_STR(k->debug, "add_autograd_cpu");
    CHECK(k->key == TL_KEY_AUTOGRAD_CPU);
    k = tl_op_lookup(op_add, KS(TL_KEY_CPU) | KS(TL_KEY_BACKEND_SELECT));
    CHECK(k && k->unboxed == (void *)add_cpu);
    /* bits that are not runtime keys never select anything */
    k = tl_op_lookup(op_add, KS(TL_KEY_CPU) | KS(40) | KS(62));
    CHECK(k && k->unboxed == (void *)add_cpu);

    /* a Python kernel (here: any boxed kernel) above autograd is chosen when in the keyset */
    CHECK(tl_op_register_kernel(op_add, TL_KEY_PYTHON, NULL, dummy_boxed, NULL, "py") > 0);
    CHECK(tl_op_dispatch_key(op_add, cpu_ks() | KS(TL_KEY_PYTHON)) == TL_KEY_AUTOGRAD_CPU);
    CHECK(tl_op_dispatch_key(op_add, KS(TL_KEY_CPU) | KS(TL_KEY_PYTHON)) == TL_KEY_PYTHON);
}

/* ---- every permutation of registrations and deregistrations */

typedef struct perm_reg {
    int key;
    const char *debug;
    int fallthrough;
} perm_reg;

static const perm_reg k_perm_regs[] = {
    {TL_KEY_CPU, "cpu_kernel", 0},
    {TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, "cea_kernel", 0},
    {TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, "cia_kernel", 0},
    {TL_KEY_AUTOGRAD_CPU, "autograd_cpu_kernel", 0},
    {TL_KEY_CUDA, "cuda_fallthrough", 1},
    {TL_KEY_AUTOGRAD, "autograd_kernel", 0},
};
#define NPERM ((int)(sizeof k_perm_regs / sizeof k_perm_regs[0]))

static char *g_seen[1 << NPERM];
static long g_states;

static void perm_record(tl_operator *op, unsigned mask) {
    CHECK(tl_dispatch_check_invariants() == 0);
    char *d = dump_of(op);
    char ft[512];
    tl_dispatch_keyset_to_string(tl_op_fallthrough_keys(op), ft, sizeof ft);
    size_t need = strlen(d) + strlen(ft) + 8;
    char *state = malloc(need);
    CHECK(state != NULL);
    snprintf(state, need, "%sFT %s\n", d, ft);
    free(d);
    g_states++;
    if (!g_seen[mask]) {
        g_seen[mask] = state;
        return;
    }
    if (strcmp(g_seen[mask], state) != 0) {
        printf("FAIL order dependence for registration subset %u:\nfirst:\n%s\nnow:\n%s\n", mask,
               g_seen[mask], state);
        exit(1);
    }
    free(state);
}

static int next_permutation(int *a, int n) {
    int i = n - 2;
    while (i >= 0 && a[i] >= a[i + 1]) i--;
    if (i < 0) return 0;
    int j = n - 1;
    while (a[j] <= a[i]) j--;
    int t = a[i]; a[i] = a[j]; a[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) {
        t = a[l]; a[l] = a[r]; a[r] = t;
    }
    return 1;
}

static void scenario_perm(void) {
    tl_operator *op = tl_op_define("test::perm", "perm(Tensor self) -> Tensor");
    CHECK(op != NULL);
    int order[NPERM];
    for (int i = 0; i < NPERM; i++) order[i] = i;
    long perms = 0;
    perm_record(op, 0);
    do {
        int64_t ids[NPERM];
        unsigned mask = 0;
        for (int i = 0; i < NPERM; i++) {
            const perm_reg *r = &k_perm_regs[order[i]];
            ids[order[i]] = r->fallthrough
                                ? tl_op_register_fallthrough(op, r->key, r->debug)
                                : tl_op_register_kernel(op, r->key, NULL, dummy_boxed, NULL,
                                                        r->debug);
            CHECK(ids[order[i]] > 0);
            mask |= 1u << order[i];
            perm_record(op, mask);
        }
        /* deregister in registration order: the remaining sets are suffixes */
        for (int i = 0; i < NPERM; i++) {
            CHECK(tl_dispatch_deregister(ids[order[i]]) == 0);
            mask &= ~(1u << order[i]);
            perm_record(op, mask);
        }
        perms++;
    } while (next_permutation(order, NPERM));
    printf("permutations %ld states %ld\n", perms, g_states);
    for (unsigned m = 0; m < (1u << NPERM); m++) {
        CHECK(g_seen[m] != NULL);
        printf("STATE %u\n%sEND\n", m, g_seen[m]);
        free(g_seen[m]);
    }
}

/* ---- thread-local include / exclude */

static void scenario_tls(void) {
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_AUTOGRAD_CPU, (void *)add_autograd_cpu,
                                add_Tensor_boxed_adapter, NULL, "add_autograd_cpu") > 0);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_PYTHON, NULL, dummy_boxed, NULL, "py_mode") > 0);

    /* defaults: BackendSelect and ADInplaceOrView included, the autocast keys excluded */
    const tl_keyset dflt = KS(TL_KEY_BACKEND_SELECT) | KS(TL_KEY_AD_INPLACE_OR_VIEW);
    const tl_keyset dex = tl_keyset_autocast();
    CHECK(tl_tls_default_included() == dflt);
    CHECK(tl_tls_default_excluded() == dex);
    CHECK(tl_tls_get_included() == dflt && tl_tls_get_excluded() == dex);
    CHECK(tl_dispatch_compute_keyset(cpu_ks()) == ((cpu_ks() & ~dex) | KS(TL_KEY_BACKEND_SELECT)));
    CHECK(tl_dispatch_compute_keyset(0) == dflt);

    /* exclude autograd ("no_grad"): the CPU kernel runs directly */
    tl_keyset prev = tl_exclude_guard_enter(tl_keyset_autograd());
    CHECK(prev == dex);
    CHECK(tl_dispatch_compute_keyset(cpu_ks()) ==
          (KS(TL_KEY_CPU) | KS(TL_KEY_AD_INPLACE_OR_VIEW) | KS(TL_KEY_BACKEND_SELECT)));
    tl_tensor *a = fake_new(cpu_ks(), 1), *b = fake_new(cpu_ks(), 2);
    g_trace[0] = 0;
    tl_tensor *c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 3);
    CHECK_STR(g_trace, "CPU");
    tl_tensor_release(c);

    /* nested: include Python (a dispatch mode) while autograd is excluded */
    tl_keyset prev_inc = tl_include_guard_enter(KS(TL_KEY_PYTHON));
    CHECK(prev_inc == dflt);
    CHECK(tl_tls_get_included() == (dflt | KS(TL_KEY_PYTHON)));
    tl_keyset ks;
    const tl_kernel *k = tl_op_select(op_add, tl_tensor_key_set(a), &ks);
    CHECK(k && strcmp(k->debug, "py_mode") == 0);
    CHECK(ks == (KS(TL_KEY_CPU) | KS(TL_KEY_AD_INPLACE_OR_VIEW) | KS(TL_KEY_PYTHON) |
                 KS(TL_KEY_BACKEND_SELECT)));
    /* exclusion beats inclusion */
    tl_keyset prev2 = tl_exclude_guard_enter(KS(TL_KEY_PYTHON));
    k = tl_op_select(op_add, tl_tensor_key_set(a), &ks);
    CHECK(k && strcmp(k->debug, "add_cpu") == 0);
    tl_exclude_guard_exit(prev2);
    tl_include_guard_exit(prev_inc);
    CHECK(tl_tls_get_included() == dflt);
    tl_exclude_guard_exit(prev);
    CHECK(tl_tls_get_excluded() == dex);

    /* autograd back on */
    g_trace[0] = 0;
    c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 3);
    CHECK_STR(g_trace, "AutogradCPU,CPU");
    tl_tensor_release(c);

    /* setters validate; include can add a backend to a tensor-less call */
    CHECK(tl_tls_set_included(KS(50)) == -1);
    CHECK_ERR(TL_ERR_VALUE, "keyset 0x4000000000000 has bits that are not runtime dispatch keys");
    CHECK(tl_tls_set_excluded(KS(63)) == -1);
    tl_clear_error();
    CHECK(tl_tls_set_included(KS(TL_KEY_CPU)) == 0); /* replaces the defaults */
    CHECK(tl_tls_get_included() == KS(TL_KEY_CPU));
    CHECK(tl_dispatch_compute_keyset(0) == KS(TL_KEY_CPU));
    CHECK(tl_tls_set_included(dflt) == 0);
    CHECK(tl_tls_set_excluded(KS(TL_KEY_CPU)) == 0);
    k = tl_op_select(op_add, KS(TL_KEY_CPU), &ks);
    CHECK(k == NULL && ks == dflt);
    CHECK(tl_error_kind_get() == TL_ERR_NOT_IMPLEMENTED);
    tl_clear_error();
    CHECK(tl_tls_set_excluded(0) == 0); /* replaces the defaults: autocast on */
    CHECK(tl_dispatch_compute_keyset(cpu_ks()) == (cpu_ks() | KS(TL_KEY_BACKEND_SELECT)));
    CHECK(tl_tls_set_excluded(dex) == 0);
    /* guards ignore bits that are not keys */
    prev = tl_include_guard_enter(KS(60) | KS(TL_KEY_META));
    CHECK(tl_tls_get_included() == (dflt | KS(TL_KEY_META)));
    tl_include_guard_exit(prev);
    CHECK(tl_tls_get_included() == dflt);
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ---- thread locality + lookups racing with registrations */

typedef struct thread_arg {
    tl_keyset seen_included, seen_excluded;
    tl_keyset set_included;
    long lookups_ok;
    int stop;
} thread_arg;

static void *tls_thread(void *p) {
    thread_arg *a = p;
    a->seen_included = tl_tls_get_included();
    a->seen_excluded = tl_tls_get_excluded();
    tl_include_guard_enter(KS(TL_KEY_PYTHON));
    a->set_included = tl_tls_get_included();
    return NULL;
}

static void *lookup_thread(void *p) {
    thread_arg *a = p;
    tl_keyset ks_in = KS(TL_KEY_CPU) | KS(TL_KEY_AD_INPLACE_OR_VIEW) | KS(TL_KEY_AUTOGRAD_CPU);
    while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
        tl_keyset ks;
        const tl_kernel *k = tl_op_select(op_add, ks_in, &ks);
        /* CPU is always registered; AutogradCPU comes and goes */
        if (k && (k->key == TL_KEY_CPU || k->key == TL_KEY_AUTOGRAD_CPU))
            __atomic_add_fetch(&a->lookups_ok, 1, __ATOMIC_RELAXED);
        else {
            printf("FAIL racing lookup got %s\n", k ? k->debug : tl_error_message());
            exit(1);
        }
    }
    return NULL;
}

static void scenario_threads(void) {
    tl_exclude_guard_enter(tl_keyset_autograd());
    tl_include_guard_enter(KS(TL_KEY_META));
    thread_arg arg;
    memset(&arg, 0, sizeof arg);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, tls_thread, &arg) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    /* a new thread starts from the defaults, not from this thread's state */
    CHECK(arg.seen_included == tl_tls_default_included() && arg.seen_excluded == tl_tls_default_excluded());
    CHECK(arg.set_included == (tl_tls_default_included() | KS(TL_KEY_PYTHON)));
    /* and nothing the thread did leaked back */
    CHECK(tl_tls_get_included() == (tl_tls_default_included() | KS(TL_KEY_META)));
    CHECK(tl_tls_get_excluded() == (tl_keyset_autograd() | tl_tls_default_excluded()));
    tl_tls_set_included(tl_tls_default_included());
    tl_tls_set_excluded(tl_tls_default_excluded());

    /* lookups on 3 threads while this thread registers and deregisters */
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    thread_arg args[3];
    pthread_t ths[3];
    memset(args, 0, sizeof args);
    for (int i = 0; i < 3; i++) CHECK(pthread_create(&ths[i], NULL, lookup_thread, &args[i]) == 0);
    for (int i = 0; i < 2000; i++) {
        int64_t id = tl_op_register_kernel(op_add, TL_KEY_AUTOGRAD_CPU, (void *)add_autograd_cpu,
                                           add_Tensor_boxed_adapter, NULL, "add_autograd_cpu");
        CHECK(id > 0);
        int64_t fb = tl_register_backend_fallthrough(TL_KEY_AUTOGRAD_CPU, "racing fallthrough");
        CHECK(fb > 0);
        CHECK(tl_dispatch_deregister(fb) == 0);
        CHECK(tl_dispatch_deregister(id) == 0);
    }
    for (int i = 0; i < 3; i++) {
        /* on a loaded machine a reader may not have run yet: let each look up
         * at least once before it is stopped */
        while (__atomic_load_n(&args[i].lookups_ok, __ATOMIC_RELAXED) == 0) sched_yield();
        __atomic_store_n(&args[i].stop, 1, __ATOMIC_RELEASE);
        CHECK(pthread_join(ths[i], NULL) == 0);
        CHECK(args[i].lookups_ok > 0);
    }
    CHECK(tl_dispatch_check_invariants() == 0);
}

/* ---- fallthrough */

static void scenario_fallthrough(void) {
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    int64_t ag = tl_op_register_kernel(op_add, TL_KEY_AUTOGRAD_CPU, (void *)add_autograd_cpu,
                                       add_Tensor_boxed_adapter, NULL, "add_autograd_cpu");
    CHECK(ag > 0);
    tl_tensor *a = fake_new(cpu_ks(), 1), *b = fake_new(cpu_ks(), 2);

    g_trace[0] = 0;
    tl_tensor *c = tl_add_Tensor(a, b, alpha1());
    CHECK_STR(g_trace, "AutogradCPU,CPU");
    tl_tensor_release(c);

    /* an operator-level fallthrough at AutogradCPU (newest wins over the kernel) */
    int64_t ft = tl_op_register_fallthrough(op_add, TL_KEY_AUTOGRAD_CPU, "no autograd");
    CHECK(ft > 0);
    CHECK(tl_op_has_registration(op_add, TL_KEY_AUTOGRAD_CPU));
    CHECK(!tl_op_has_registration(op_add, TL_KEY_META));
    CHECK(tl_op_has_kernel_for_key(op_add, TL_KEY_AUTOGRAD_CPU)); /* slot filled (fallthrough) */
    CHECK(!tl_op_has_kernel_for_key(op_add, TL_KEY_META));
    CHECK(!tl_op_has_kernel_for_key(op_add, TL_KEY_AUTOGRAD) && !tl_op_has_kernel_for_key(NULL, 0));
    CHECK(tl_op_fallthrough_keys(op_add) & KS(TL_KEY_AUTOGRAD_CPU));
    g_trace[0] = 0;
    c = tl_add_Tensor(a, b, alpha1());
    CHECK_STR(g_trace, "CPU");
    tl_tensor_release(c);
    /* removing it brings the kernel back */
    CHECK(tl_dispatch_deregister(ft) == 0);
    g_trace[0] = 0;
    c = tl_add_Tensor(a, b, alpha1());
    CHECK_STR(g_trace, "AutogradCPU,CPU");
    tl_tensor_release(c);

    /* a fallthrough on a backend key falls to the next backend in the keyset */
    CHECK(tl_op_register_kernel(op_add, TL_KEY_META, (void *)add_meta, add_Tensor_boxed_adapter,
                                NULL, "add_meta") > 0);
    tl_keyset both = KS(TL_KEY_CPU) | KS(TL_KEY_META);
    CHECK(tl_op_dispatch_key(op_add, both) == TL_KEY_META);
    int64_t mft = tl_op_register_fallthrough(op_add, TL_KEY_META, NULL);
    CHECK(tl_op_dispatch_key(op_add, both) == TL_KEY_CPU);
    CHECK(tl_dispatch_deregister(mft) == 0);
    CHECK(tl_op_dispatch_key(op_add, both) == TL_KEY_META);

    /* a fallthrough for an alias key covers all its keys */
    int64_t aft = tl_op_register_fallthrough(op_add, TL_KEY_AUTOGRAD, "alias fallthrough");
    CHECK(tl_dispatch_deregister(ag) == 0);
    CHECK((tl_op_fallthrough_keys(op_add) & tl_keyset_autograd()) == tl_keyset_autograd());
    CHECK(tl_dispatch_deregister(aft) == 0);

    /* a backend fallthrough: Python key in the keyset but no Python kernel */
    g_trace[0] = 0;
    tl_keyset prev = tl_include_guard_enter(KS(TL_KEY_PYTHON));
    c = tl_add_Tensor(a, b, alpha1());
    tl_include_guard_exit(prev);
    CHECK_STR(g_trace, "CPU");
    tl_tensor_release(c);

    /* a dispatch with every key falling through to the Undefined slot */
    tl_operator *op2 = tl_op_define("test::ft_only", "ft_only(Tensor self) -> ()");
    CHECK(tl_op_register_fallthrough(op2, TL_KEY_CPU, NULL) > 0);
    CHECK(tl_op_dispatch_key(op2, cpu_ks()) == TL_KEY_UNDEFINED);
    CHECK(tl_op_lookup(op2, cpu_ks()) == NULL);
    CHECK(tl_error_kind_get() == TL_ERR_NOT_IMPLEMENTED);
    tl_clear_error();
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ---- backend fallback */

static int g_fallback_calls;
static char g_fallback_op[128];

/* a boxed fallback serving any operator: records the name, replaces the
 * arguments by one tensor holding the number of arguments */
static int counting_fallback(const tl_kernel *k, const tl_operator *op, tl_keyset ks,
                             tl_stack *stack) {
    (void)ks;
    CHECK(k->ctx == (void *)&g_fallback_calls);
    g_fallback_calls++;
    snprintf(g_fallback_op, sizeof g_fallback_op, "%s", tl_op_name(op));
    int n = tl_op_num_arguments(op);
    if (tl_stack_drop(stack, n)) return -1;
    for (int i = 0; i < tl_op_num_returns(op); i++)
        if (tl_stack_push_tensor_steal(stack, fake_new(cpu_ks(), 100 + n))) return -1;
    return 0;
}

static void scenario_fallback(void) {
    register_add_op();
    tl_operator *mul = tl_op_define("test::mul.Tensor", "mul.Tensor(Tensor self, Tensor other) -> Tensor");
    CHECK(mul != NULL);
    tl_tensor *a = fake_new(cpu_ks(), 1), *b = fake_new(cpu_ks(), 2);

    CHECK(tl_add_Tensor(a, b, alpha1()) == NULL);
    CHECK(tl_error_kind_get() == TL_ERR_NOT_IMPLEMENTED);
    tl_clear_error();

    int64_t fb = tl_register_backend_fallback(TL_KEY_CPU, counting_fallback, &g_fallback_calls,
                                              "counting_fallback");
    CHECK(fb > 0);
    /* the unboxed entry point boxes its arguments for the fallback */
    tl_tensor *c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 103);
    CHECK(g_fallback_calls == 1);
    CHECK_STR(g_fallback_op, "test::add.Tensor");
    tl_tensor_release(c);
    /* and the same fallback serves another operator, boxed */
    tl_stack st;
    tl_stack_init(&st);
    CHECK(tl_stack_push_tensor(&st, a) == 0 && tl_stack_push_tensor(&st, b) == 0);
    CHECK(tl_op_call_boxed(mul, &st) == 0);
    CHECK(tl_stack_size(&st) == 1);
    CHECK(tl_stack_peek(&st, 0)->tag == TL_IV_TENSOR && tl_stack_peek(&st, 0)->u.t->value == 102);
    CHECK(g_fallback_calls == 2);
    CHECK_STR(g_fallback_op, "test::mul.Tensor");
    tl_stack_free(&st);

    char buf[512];
    tl_op_dump_table(mul, buf, sizeof buf);
    CHECK(strstr(buf, "CPU: counting_fallback [backend fallback]\n") != NULL);

    /* an operator kernel beats the fallback */
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 3 && g_fallback_calls == 2);
    tl_tensor_release(c);

    /* operators defined after the fallback get it too; removing it removes it */
    tl_operator *late = tl_op_define("test::late", "late(Tensor self) -> Tensor");
    CHECK(tl_op_dispatch_key(late, cpu_ks()) == TL_KEY_CPU);
    CHECK(tl_op_lookup(late, cpu_ks()) != NULL);
    CHECK(tl_dispatch_deregister(fb) == 0);
    CHECK(tl_op_lookup(late, cpu_ks()) == NULL);
    tl_clear_error();
    CHECK(tl_dispatch_deregister(fb) == -1);
    tl_clear_error();

    /* a boxed fallback replacing a default fallthrough (e.g. the Python key) */
    int64_t py = tl_register_backend_fallback(TL_KEY_PYTHON, counting_fallback,
                                              &g_fallback_calls, "python_fallback");
    tl_keyset prev = tl_include_guard_enter(KS(TL_KEY_PYTHON));
    c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 103 && g_fallback_calls == 3);
    tl_tensor_release(c);
    tl_include_guard_exit(prev);
    CHECK(tl_dispatch_deregister(py) == 0);
    CHECK(tl_op_fallthrough_keys(op_add) & KS(TL_KEY_PYTHON)); /* default back */
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ---- missing kernel message */

static void scenario_missing(void) {
    tl_operator *op = tl_op_define(
        "aten::add.Tensor", "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    CHECK(op != NULL);
    op_add = op;
    CHECK(tl_op_register_kernel(op, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter, NULL,
                                "add_cpu") > 0);
    tl_keyset cuda_ks = tl_dispatch_backend_tensor_keyset(TL_KEY_CUDA);
    tl_tensor *a = fake_new(cuda_ks, 1), *b = fake_new(cuda_ks, 2);
    CHECK(tl_add_Tensor(a, b, alpha1()) == NULL);
    CHECK(tl_error_kind_get() == TL_ERR_NOT_IMPLEMENTED);
    printf("MSG<<%s>>\n", tl_error_message());
    tl_clear_error();
    /* Meta: PyTorch's meta fallback text */
    tl_tensor *m = fake_new(meta_ks(), 1);
    CHECK(tl_add_Tensor(m, m, alpha1()) == NULL);
    CHECK(tl_error_kind_get() == TL_ERR_NOT_IMPLEMENTED);
    printf("META<<%s>>\n", tl_error_message());
    tl_clear_error();
    tl_tensor_release(m);
    /* and with no tensor arguments at all */
    tl_keyset ks;
    CHECK(tl_op_select(op, 0, &ks) == NULL);
    CHECK(tl_error_kind_get() == TL_ERR_NOT_IMPLEMENTED);
    printf("UNDEF<<%s>>\n", tl_error_message());
    tl_clear_error();
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ---- boxed and unboxed calls agree */

/* a boxed-only kernel (what a Python kernel looks like to C) */
static int add_boxed_only(const tl_kernel *k, const tl_operator *op, tl_keyset ks,
                          tl_stack *stack) {
    (void)k; (void)ks;
    CHECK(tl_op_num_arguments(op) == 3);
    tl_scalar alpha;
    tl_tensor *self, *other;
    if (tl_stack_pop_scalar(stack, &alpha) || tl_stack_pop_tensor(stack, &other)) return -1;
    if (tl_stack_pop_tensor(stack, &self)) {
        tl_tensor_release(other);
        return -1;
    }
    trace("boxed");
    tl_tensor *r = fake_new(meta_ks(), self->value + scalar_to_double(alpha) * other->value);
    tl_tensor_release(self);
    tl_tensor_release(other);
    return tl_stack_push_tensor_steal(stack, r);
}

static double call_boxed_add(tl_tensor *a, tl_tensor *b, tl_scalar alpha) {
    tl_stack st;
    tl_stack_init(&st);
    CHECK(tl_stack_push_tensor(&st, a) == 0);
    CHECK(tl_stack_push_tensor(&st, b) == 0);
    CHECK(tl_stack_push_scalar(&st, alpha) == 0);
    CHECK(tl_op_call_boxed(op_add, &st) == 0);
    CHECK(tl_stack_size(&st) == 1);
    tl_tensor *r = NULL;
    CHECK(tl_stack_pop_tensor(&st, &r) == 0);
    double v = r->value;
    tl_tensor_release(r);
    tl_stack_free(&st);
    return v;
}

static void scenario_boxed_unboxed(void) {
    register_add_op();
    CHECK(tl_op_num_arguments(op_add) == 3 && tl_op_num_returns(op_add) == 1);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_AUTOGRAD_CPU, (void *)add_autograd_cpu,
                                add_Tensor_boxed_adapter, NULL, "add_autograd_cpu") > 0);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_META, NULL, add_boxed_only, NULL,
                                "add_boxed_only") > 0);
    int64_t live0 = g_live_tensors;
    tl_tensor *a = fake_new(cpu_ks(), 1.5), *b = fake_new(cpu_ks(), 2.25);
    tl_scalar alphas[3] = {alpha1(), scalar_double(0.5), tl_scalar_from_int(-3)};
    for (int i = 0; i < 3; i++) {
        /* CPU: unboxed kernel, via the entry point and via the boxed adapter */
        g_trace[0] = 0;
        tl_tensor *c = tl_add_Tensor(a, b, alphas[i]);
        CHECK(c != NULL);
        CHECK_STR(g_trace, "AutogradCPU,CPU");
        g_trace[0] = 0;
        double boxed = call_boxed_add(a, b, alphas[i]);
        CHECK_STR(g_trace, "AutogradCPU,CPU");
        CHECK(boxed == c->value);
        printf("cpu alpha#%d unboxed=%g boxed=%g\n", i, c->value, boxed);
        tl_tensor_release(c);
    }
    /* Meta: boxed-only kernel, via the entry point's boxing wrapper and boxed */
    tl_tensor *ma = fake_new(meta_ks(), 1.5), *mb = fake_new(meta_ks(), 2.25);
    for (int i = 0; i < 3; i++) {
        g_trace[0] = 0;
        tl_tensor *c = tl_add_Tensor(ma, mb, alphas[i]);
        CHECK(c != NULL);
        CHECK_STR(g_trace, "boxed");
        double boxed = call_boxed_add(ma, mb, alphas[i]);
        CHECK(boxed == c->value);
        printf("meta alpha#%d unboxed=%g boxed=%g\n", i, c->value, boxed);
        tl_tensor_release(c);
    }
    /* a bad stack is an error, not a crash */
    tl_stack st;
    tl_stack_init(&st);
    tl_stack_push_tensor(&st, a);
    CHECK(tl_op_call_boxed(op_add, &st) == -1);
    CHECK_ERR(TL_ERR_RUNTIME, "test::add.Tensor takes 3 arguments but the stack holds 1 values");
    tl_stack_push_int(&st, 4);
    tl_stack_push_int(&st, 1);
    CHECK(tl_op_call_boxed(op_add, &st) == -1);
    CHECK_ERR(TL_ERR_TYPE, "Expected Tensor but got Int");
    tl_stack_free(&st);
    tl_tensor_release(a);
    tl_tensor_release(b);
    tl_tensor_release(ma);
    tl_tensor_release(mb);
    CHECK(g_live_tensors == live0);
}

/* ---- redispatch */

static int python_fallback(const tl_kernel *k, const tl_operator *op, tl_keyset ks,
                           tl_stack *stack) {
    (void)k;
    trace("Python");
    CHECK(tl_op_dispatch_key(op, ks) == TL_KEY_PYTHON);
    return tl_op_redispatch_boxed(op, tl_keyset_below(ks, TL_KEY_PYTHON), stack);
}

static void scenario_redispatch(void) {
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    CHECK(tl_op_register_kernel(op_add, TL_KEY_AUTOGRAD_CPU, (void *)add_autograd_cpu,
                                add_Tensor_boxed_adapter, NULL, "add_autograd_cpu") > 0);
    CHECK(tl_register_backend_fallback(TL_KEY_PYTHON, python_fallback, NULL, "python_fallback") > 0);
    tl_tensor *a = fake_new(cpu_ks() | KS(TL_KEY_PYTHON), 1), *b = fake_new(cpu_ks(), 2);

    /* lookup below a key */
    const tl_kernel *k = tl_op_lookup_below(op_add, tl_tensor_key_set(a), TL_KEY_AUTOGRAD_CPU);
    CHECK(k && strcmp(k->debug, "python_fallback") == 0);
    k = tl_op_lookup_below(op_add, tl_tensor_key_set(a), TL_KEY_PYTHON);
    CHECK(k && strcmp(k->debug, "add_cpu") == 0);
    k = tl_op_lookup_below(op_add, tl_tensor_key_set(a), TL_KEY_CPU);
    CHECK(k == NULL); /* nothing below CPU: the Undefined slot is empty */
    tl_clear_error();

    /* unboxed autograd kernel -> (ADInplaceOrView falls through) -> boxed Python
     * fallback -> boxed adapter of the CPU kernel */
    g_trace[0] = 0;
    tl_tensor *c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 3);
    CHECK_STR(g_trace, "AutogradCPU,Python,CPU");
    printf("trace %s\n", g_trace);
    tl_tensor_release(c);

    /* boxed all the way */
    tl_stack st;
    tl_stack_init(&st);
    tl_stack_push_tensor(&st, a);
    tl_stack_push_tensor(&st, b);
    tl_stack_push_int(&st, 2);
    g_trace[0] = 0;
    CHECK(tl_op_call_boxed(op_add, &st) == 0);
    CHECK_STR(g_trace, "AutogradCPU,Python,CPU");
    CHECK(tl_stack_peek(&st, 0)->u.t->value == 5);
    /* redispatch from a given keyset skips TLS: exclude CPU thread-locally, no effect */
    tl_stack_clear(&st);
    tl_stack_push_tensor(&st, a);
    tl_stack_push_tensor(&st, b);
    tl_stack_push_int(&st, 1);
    tl_keyset prev = tl_exclude_guard_enter(KS(TL_KEY_CPU));
    g_trace[0] = 0;
    CHECK(tl_op_redispatch_boxed(op_add, KS(TL_KEY_CPU), &st) == 0);
    tl_exclude_guard_exit(prev);
    CHECK_STR(g_trace, "CPU");
    tl_stack_free(&st);
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ---- a "Python" kernel: boxed, with a context */

typedef struct py_callable {
    int calls;
    double scale;
    tl_keyset last_ks;
} py_callable;

static int py_kernel_trampoline(const tl_kernel *k, const tl_operator *op, tl_keyset ks,
                                tl_stack *stack) {
    py_callable *fn = k->ctx;
    fn->calls++;
    fn->last_ks = ks;
    CHECK(strcmp(tl_op_name(op), "test::add.Tensor") == 0);
    /* look at the arguments without popping, as a Python wrapper would */
    CHECK(tl_stack_peek(stack, 2)->tag == TL_IV_TENSOR);
    CHECK(tl_stack_peek(stack, 1)->tag == TL_IV_TENSOR);
    CHECK(tl_stack_peek(stack, 0)->tag == TL_IV_INT || tl_stack_peek(stack, 0)->tag == TL_IV_DOUBLE);
    double self = tl_stack_peek(stack, 2)->u.t->value;
    double other = tl_stack_peek(stack, 1)->u.t->value;
    if (tl_stack_drop(stack, 3)) return -1;
    if (fn->scale < 0) return tl_set_error(TL_ERR_VALUE, "python kernel raised ValueError");
    return tl_stack_push_tensor_steal(stack, fake_new(cpu_ks(), (self + other) * fn->scale));
}

static void scenario_python_kernel(void) {
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, add_Tensor_boxed_adapter,
                                NULL, "add_cpu") > 0);
    py_callable fn = {0, 10.0, 0};
    int64_t id = tl_op_register_kernel(op_add, TL_KEY_CPU, NULL, py_kernel_trampoline, &fn,
                                       "python kernel <lambda>");
    CHECK(id > 0);
    tl_tensor *a = fake_new(cpu_ks(), 1), *b = fake_new(cpu_ks(), 2);
    tl_tensor *c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 30);
    CHECK(fn.calls == 1);
    CHECK(fn.last_ks == ((cpu_ks() & ~tl_keyset_autocast()) | tl_tls_default_included()));
    tl_tensor_release(c);
    CHECK(call_boxed_add(a, b, alpha1()) == 30 && fn.calls == 2);
    char buf[1024];
    tl_op_dump_table(op_add, buf, sizeof buf);
    CHECK(strstr(buf, "CPU: python kernel <lambda> [kernel]\n") != NULL);
    tl_op_dump_registrations(op_add, buf, sizeof buf);
    CHECK_STR(buf, "CPU: python kernel <lambda>\nCPU: add_cpu\n");
    /* an exception in the kernel comes back as the tl error */
    fn.scale = -1;
    CHECK(tl_add_Tensor(a, b, alpha1()) == NULL);
    CHECK_ERR(TL_ERR_VALUE, "python kernel raised ValueError");
    /* deregistering the Python kernel restores the C kernel */
    CHECK(tl_dispatch_deregister(id) == 0);
    g_trace[0] = 0;
    c = tl_add_Tensor(a, b, alpha1());
    CHECK(c && c->value == 3 && fn.calls == 3);
    CHECK_STR(g_trace, "CPU");
    tl_tensor_release(c);
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ---- dump table text */

static void scenario_dump(void) {
    tl_operator *op = tl_op_define(
        "aten::add.Tensor", "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
    CHECK(tl_op_register_kernel(op, TL_KEY_CPU, NULL, dummy_boxed, NULL,
                                "add_cpu registered at generated/RegisterCPU.c:12") > 0);
    CHECK(tl_op_register_kernel(op, TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD, NULL, dummy_boxed, NULL,
                                "add_composite") > 0);
    CHECK(tl_op_register_kernel(op, TL_KEY_AUTOGRAD, NULL, dummy_boxed, NULL,
                                "add_autograd") > 0);
    CHECK(tl_op_register_fallthrough(op, TL_KEY_PRIVATEUSE1, "fallthrough for tests") > 0);
    char *d = dump_of(op);
    printf("DUMP<<%s>>\n", d);
    free(d);
    tl_operator *cia = tl_op_define("aten::relu6", "relu6(Tensor self) -> Tensor");
    CHECK(tl_op_register_kernel(cia, TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, NULL, dummy_boxed,
                                NULL, "relu6_math") > 0);
    CHECK(tl_op_register_kernel(cia, TL_KEY_META, NULL, dummy_boxed, NULL, "relu6_meta") > 0);
    char buf[2048];
    int64_t n = tl_dispatch_dump_table("aten::relu6", buf, sizeof buf);
    CHECK(n == (int64_t)strlen(buf));
    printf("DUMP2<<%s>>\n", buf);
    /* sizing protocol: truncation keeps a NUL and reports the full length */
    char small[8];
    CHECK(tl_dispatch_dump_table("aten::relu6", small, sizeof small) == n);
    CHECK(strlen(small) == 7 && strncmp(small, buf, 7) == 0);
    CHECK(tl_dispatch_dump_table("aten::nope", buf, sizeof buf) == -1);
    CHECK_ERR(TL_ERR_RUNTIME, "No such operator aten::nope");
    tl_op_list_keys(cia, buf, sizeof buf);
    printf("KEYS<<%s>>\n", buf);
}

/* ---- keyset to string */

static void scenario_keyset_string(void) {
    printf("KS<<%s>>\n", keyset_str(cpu_ks()));
    printf("KS<<%s>>\n", keyset_str(0));
    printf("KS<<%s>>\n", keyset_str(tl_keyset_all()));
    printf("KS<<%s>>\n", keyset_str(meta_ks() | KS(TL_KEY_PYTHON)));
    /* sizing */
    CHECK(tl_dispatch_keyset_to_string(cpu_ks(), NULL, 0) ==
          (int64_t)strlen("DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU, AutocastCPU)"));
    char tiny[5];
    tl_dispatch_keyset_to_string(cpu_ks(), tiny, sizeof tiny);
    CHECK_STR(tiny, "Disp");
}

/* ---- bad input never aborts */

static void scenario_bad_keys(void) {
    CHECK(tl_dispatch_key_parse("Foo") == TL_KEY_INVALID);
    CHECK_ERR(TL_ERR_RUNTIME, "could not parse dispatch key: Foo");
    CHECK(tl_dispatch_key_parse(NULL) == TL_KEY_INVALID);
    CHECK_ERR(TL_ERR_RUNTIME, "could not parse dispatch key: (null)");
    CHECK(tl_dispatch_key_parse("cpu") == TL_KEY_INVALID); /* names are case sensitive */
    tl_clear_error();
    CHECK(tl_dispatch_key_parse("CompositeImplicitAutograd") == TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD);
    CHECK(tl_dispatch_key_parse("Autograd") == TL_KEY_AUTOGRAD);
    CHECK(tl_dispatch_key_name(-1) == NULL && tl_dispatch_key_name(40) == NULL &&
          tl_dispatch_key_name(1000) == NULL);

    register_add_op();
    CHECK(tl_op_register_kernel(op_add, 999, NULL, dummy_boxed, NULL, "x") == -1);
    CHECK_ERR(TL_ERR_RUNTIME, "cannot register a kernel of test::add.Tensor for key number 999");
    CHECK(tl_op_register_kernel(op_add, TL_KEY_UNDEFINED, NULL, dummy_boxed, NULL, "x") == -1);
    CHECK_ERR(TL_ERR_RUNTIME, "cannot register a kernel of test::add.Tensor for key Undefined");
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)add_cpu, NULL, NULL, "x") == -1);
    tl_clear_error();
    CHECK(tl_op_register_kernel(NULL, TL_KEY_CPU, NULL, dummy_boxed, NULL, "x") == -1);
    CHECK_ERR(TL_ERR_VALUE, "kernel registration: NULL operator");
    CHECK(tl_op_register_fallthrough(op_add, -5, NULL) == -1);
    tl_clear_error();
    CHECK(tl_register_backend_fallback(TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD, dummy_boxed, NULL,
                                       "x") == -1);
    CHECK_ERR(TL_ERR_RUNTIME,
              "backend fallbacks are registered for runtime keys, not CompositeImplicitAutograd");
    CHECK(tl_register_backend_fallback(TL_KEY_CPU, NULL, NULL, "x") == -1);
    tl_clear_error();
    CHECK(tl_register_backend_fallthrough(64000, NULL) == -1);
    tl_clear_error();
    CHECK(tl_dispatch_deregister(123456) == -1);
    CHECK_ERR(TL_ERR_RUNTIME,
              "no dispatcher registration with id 123456 (never made or already removed)");
    CHECK(tl_dispatch_deregister(-1) == -1);
    tl_clear_error();

    /* operators */
    CHECK(tl_op_define(NULL, "x() -> ()") == NULL);
    tl_clear_error();
    CHECK(tl_op_define("test::x", NULL) == NULL);
    tl_clear_error();
    CHECK(tl_op_define("test::x", "x(Tensor a") == NULL);
    CHECK_ERR(TL_ERR_RUNTIME, "invalid schema for operator test::x: 'x(Tensor a'");
    CHECK(tl_op_define("test::x", "x(Tensor a)") == NULL);
    tl_clear_error();
    CHECK(tl_op_define("test::x", "x(Tensor a,) -> Tensor") == NULL);
    tl_clear_error();
    CHECK(tl_op_define("test::add.Tensor", ADD_SCHEMA) == op_add); /* idempotent */
    CHECK(tl_op_define("test::add.Tensor", "add.Tensor(Tensor self) -> Tensor") == NULL);
    CHECK(tl_error_kind_get() == TL_ERR_RUNTIME);
    CHECK(strncmp(tl_error_message(), "Tried to register an operator (test::add.Tensor)", 48) == 0);
    tl_clear_error();
    CHECK(tl_op_find("test::missing") == NULL);
    CHECK_ERR(TL_ERR_RUNTIME, "No such operator test::missing");
    CHECK(tl_op_find(NULL) == NULL);
    tl_clear_error();
    CHECK(tl_op_find("test::add.Tensor") == op_add);
    CHECK(tl_op_lookup(NULL, 0) == NULL);
    CHECK_ERR(TL_ERR_VALUE, "dispatch on a NULL operator");
    tl_keyset ks;
    CHECK(tl_op_select(NULL, 0, &ks) == NULL);
    tl_clear_error();
    CHECK(tl_op_select(op_add, 0, NULL) == NULL); /* NULL ks_out is tolerated */
    tl_clear_error();
    CHECK(tl_op_dump_table(NULL, NULL, 0) == -1);
    tl_clear_error();
    CHECK(tl_op_call_boxed(op_add, NULL) == -1);
    tl_clear_error();
    CHECK(tl_op_name(NULL) == NULL && tl_op_num_arguments(NULL) == -1);

    /* stack misuse */
    tl_stack st;
    tl_stack_init(&st);
    int64_t i;
    CHECK(tl_stack_pop_int(&st, &i) == -1);
    CHECK_ERR(TL_ERR_RUNTIME, "pop from an empty stack");
    tl_stack_push_double(&st, 1.5);
    CHECK(tl_stack_pop_int(&st, &i) == -1);
    CHECK_ERR(TL_ERR_TYPE, "Expected Int but got Double");
    tl_tensor *t;
    CHECK(tl_stack_pop_tensor(&st, &t) == -1);
    CHECK_ERR(TL_ERR_TYPE, "Expected Tensor but got Double");
    CHECK(tl_stack_size(&st) == 1); /* unchanged by failed pops */
    CHECK(tl_stack_pop_int(&st, NULL) == -1);
    tl_clear_error();
    CHECK(tl_stack_drop(&st, 2) == -1);
    CHECK_ERR(TL_ERR_RUNTIME, "cannot drop 2 values from a stack of 1");
    CHECK(tl_stack_push_int_list(&st, NULL, 3) == -1);
    tl_clear_error();
    tl_tensor *arr[2] = {NULL, NULL};
    CHECK(tl_stack_push_tensor_list(&st, arr, 2) == -1);
    CHECK_ERR(TL_ERR_VALUE, "expected a Tensor at index 0 of a Tensor[] but got None");
    CHECK(tl_stack_push_opt_tensor_list(&st, arr, 2) == 0);
    CHECK(tl_stack_size(&st) == 2);
    tl_stack_free(&st);
    CHECK(tl_stack_pop(NULL, NULL) == -1);
    tl_clear_error();
}

/* ---- schema parsing (argument / return counts) */

static void scenario_schema(void) {
    static const struct { const char *schema; int nargs, nrets; } cases[] = {
        {"add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", 3, 1},
        {"add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)", 4, 1},
        {"max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", 3, 2},
        {"_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()", 3, 0},
        {"sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", 2, 1},
        {"f(int[2] stride=[1, 1], str pad=\"a,(b\", float[]? s=None) -> Tensor[]", 3, 1},
        {"g() -> Tensor", 0, 1},
        {"h(Tensor self, *, MemoryFormat? memory_format=contiguous_format) -> (Tensor(a), Tensor)", 2, 2},
        {"split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", 3, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "test::s%zu", i);
        tl_operator *op = tl_op_define(name, cases[i].schema);
        CHECK(op != NULL);
        printf("%s -> nargs=%d nrets=%d\n", cases[i].schema, tl_op_num_arguments(op),
               tl_op_num_returns(op));
        CHECK(tl_op_num_arguments(op) == cases[i].nargs);
        CHECK(tl_op_num_returns(op) == cases[i].nrets);
        CHECK_STR(tl_op_schema(op), cases[i].schema);
    }
    CHECK(tl_dispatch_num_operators() == (int64_t)(sizeof cases / sizeof cases[0]));
    /* many operators: the registry grows */
    for (int i = 0; i < 3000; i++) {
        char name[32];
        snprintf(name, sizeof name, "test::many%d", i);
        CHECK(tl_op_define(name, "many(Tensor self) -> Tensor") != NULL);
    }
    CHECK(tl_op_find("test::many2999") != NULL && tl_op_find("test::s0") != NULL);
}

/* ---- every schema of a file (one per line): prints "nargs nrets" per line */

static const char *g_arg;

static void scenario_schemas(void) {
    CHECK(g_arg != NULL);
    FILE *f = fopen(g_arg, "r");
    CHECK(f != NULL);
    static char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char name[64];
        snprintf(name, sizeof name, "ref::op%d", n++);
        tl_operator *op = tl_op_define(name, line);
        if (!op) {
            printf("ERROR %s\n", tl_error_message());
            tl_clear_error();
            continue;
        }
        printf("%d %d\n", tl_op_num_arguments(op), tl_op_num_returns(op));
    }
    fclose(f);
}

/* ---- the ivalue stack */

static void scenario_ivalue(void) {
    int64_t live0 = g_live_tensors;
    tl_tensor *t = fake_new(cpu_ks(), 7);
    tl_stack st;
    tl_stack_init(&st);
    int64_t ints[3] = {1, 2, 3};
    double dbls[2] = {0.5, -1};
    uint8_t bools[2] = {1, 7};
    tl_tensor *tl[2] = {t, t};
    tl_tensor *otl[3] = {t, NULL, t};
    CHECK(tl_stack_push_none(&st) == 0);
    CHECK(tl_stack_push_bool(&st, 5) == 0);
    CHECK(tl_stack_push_int(&st, -42) == 0);
    CHECK(tl_stack_push_double(&st, 2.5) == 0);
    CHECK(tl_stack_push_complex(&st, 1, -1) == 0);
    CHECK(tl_stack_push_tensor(&st, t) == 0);
    CHECK(tl_stack_push_string(&st, "mean") == 0);
    CHECK(tl_stack_push_int_list(&st, ints, 3) == 0);
    CHECK(tl_stack_push_double_list(&st, dbls, 2) == 0);
    CHECK(tl_stack_push_bool_list(&st, bools, 2) == 0);
    CHECK(tl_stack_push_tensor_list(&st, tl, 2) == 0);
    CHECK(tl_stack_push_opt_tensor_list(&st, otl, 3) == 0);
    CHECK(tl_stack_push_dtype(&st, TL_FLOAT32) == 0);
    CHECK(tl_stack_push_device(&st, TL_META, -1) == 0);
    CHECK(tl_stack_push_int_list(&st, ints, 0) == 0); /* empty list */
    CHECK(tl_stack_push_tensor(&st, NULL) == 0);      /* None */
    CHECK(tl_stack_size(&st) == 16);
    CHECK(t->refs == 1 + 1 + 2 + 2);
    const int tags[16] = {TL_IV_NONE, TL_IV_BOOL, TL_IV_INT, TL_IV_DOUBLE, TL_IV_COMPLEX,
                          TL_IV_TENSOR, TL_IV_STRING, TL_IV_INT_LIST, TL_IV_DOUBLE_LIST,
                          TL_IV_BOOL_LIST, TL_IV_TENSOR_LIST, TL_IV_OPT_TENSOR_LIST, TL_IV_DTYPE,
                          TL_IV_DEVICE, TL_IV_INT_LIST, TL_IV_NONE};
    for (int i = 0; i < 16; i++) CHECK(tl_stack_at(&st, i)->tag == tags[i]);
    CHECK(tl_stack_at(&st, 16) == NULL && tl_stack_peek(&st, 16) == NULL);
    CHECK(tl_stack_peek(&st, 0) == tl_stack_at(&st, 15));
    CHECK(tl_stack_at(&st, 9)->u.bools.data[1] == 1);
    CHECK(tl_stack_at(&st, 11)->u.tensors.data[1] == NULL);
    CHECK(strcmp(tl_stack_at(&st, 6)->u.s, "mean") == 0);
    CHECK_STR(tl_ivalue_tag_name(TL_IV_OPT_TENSOR_LIST), "OptionalTensorList");

    /* deep copy */
    tl_ivalue cp;
    CHECK(tl_ivalue_copy(&cp, tl_stack_at(&st, 11)) == 0);
    CHECK(t->refs == 8);
    tl_ivalue_destroy(&cp);
    CHECK(t->refs == 6 && cp.tag == TL_IV_NONE);

    /* pops transfer ownership */
    tl_tensor *p;
    CHECK(tl_stack_top_is_none(&st) && !tl_stack_top_is_none(NULL));
    CHECK(tl_stack_pop_opt_tensor(&st, &p) == 0 && p == NULL);
    CHECK(!tl_stack_top_is_none(&st));
    tl_ivalue v;
    CHECK(tl_stack_pop(&st, &v) == 0 && v.tag == TL_IV_INT_LIST && v.u.ints.len == 0);
    tl_ivalue_destroy(&v);
    CHECK(tl_stack_pop(&st, &v) == 0 && v.tag == TL_IV_DEVICE && v.u.device.type == TL_META);
    int dt;
    CHECK(tl_stack_pop_dtype(&st, &dt) == 0 && dt == TL_FLOAT32);
    CHECK(tl_stack_drop(&st, 6) == 0); /* lists and string go */
    CHECK(t->refs == 2);
    CHECK(tl_stack_pop_tensor(&st, &p) == 0 && p == t && t->refs == 2);
    tl_tensor_release(p);
    CHECK(t->refs == 1);
    tl_ivalue *top = tl_stack_peek(&st, 0);
    CHECK(top->tag == TL_IV_COMPLEX && top->u.c.re == 1 && top->u.c.im == -1);
    CHECK(tl_stack_drop(&st, 1) == 0);
    double d;
    CHECK(tl_stack_pop_double(&st, &d) == 0 && d == 2.5);
    tl_scalar s;
    CHECK(tl_stack_pop_scalar(&st, &s) == 0 && s.kind == TL_SCALAR_INT && s.i == -42);
    int b;
    CHECK(tl_stack_pop_bool(&st, &b) == 0 && b == 1);
    CHECK(tl_stack_pop_opt_tensor(&st, &p) == 0 && p == NULL);
    CHECK(tl_stack_size(&st) == 0);

    /* growth past the inline buffer, then move semantics */
    for (int i = 0; i < 100; i++) CHECK(tl_stack_push_tensor(&st, t) == 0);
    CHECK(t->refs == 101);
    CHECK(tl_stack_pop_tensor(&st, &p) == 0 && p == t && t->refs == 101);
    tl_tensor_release(p);
    tl_stack_clear(&st);
    CHECK(t->refs == 1);
    CHECK(tl_stack_push_tensor_steal(&st, fake_new(cpu_ks(), 1)) == 0);
    CHECK(tl_stack_pop(&st, &v) == 0);
    CHECK(tl_stack_push_ivalue(&st, &v) == 0 && v.tag == TL_IV_NONE);
    CHECK(tl_stack_push_scalar(&st, scalar_double(0.25)) == 0);
    CHECK(tl_stack_pop_double(&st, &d) == 0 && d == 0.25);
    CHECK(tl_stack_push_int(&st, 3) == 0);
    CHECK(tl_stack_pop_double(&st, &d) == 0 && d == 3.0); /* int promotes to double */
    tl_stack_free(&st);
    tl_stack_free(&st); /* idempotent */
    tl_tensor_release(t);
    CHECK(g_live_tensors == live0);
}

/* ---- microbenchmark */

static tl_tensor *bench_kernel(tl_keyset ks, tl_tensor *self, tl_tensor *other,
                               tl_scalar alpha) {
    (void)ks; (void)other; (void)alpha;
    tl_tensor_retain(self); /* a new reference, like any kernel result */
    return self;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void scenario_bench(void) {
    register_add_op();
    CHECK(tl_op_register_kernel(op_add, TL_KEY_CPU, (void *)bench_kernel,
                                add_Tensor_boxed_adapter, NULL, "bench_kernel") > 0);
    tl_tensor *a = fake_new(cpu_ks(), 1), *b = fake_new(cpu_ks(), 2);
    const long N = 5 * 1000 * 1000;
    volatile uintptr_t sink = 0;
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now_ns();
        tl_keyset ks_in = cpu_ks();
        for (long i = 0; i < N; i++) sink += (uintptr_t)tl_op_lookup(op_add, ks_in);
        double t1 = now_ns();
        for (long i = 0; i < N; i++) {
            tl_keyset ks;
            sink += (uintptr_t)tl_op_select(op_add, ks_in, &ks);
        }
        double t2 = now_ns();
        for (long i = 0; i < N; i++) {
            tl_tensor *r = tl_add_Tensor(a, b, alpha1());
            sink += (uintptr_t)r;
            tl_tensor_release(r);
        }
        double t3 = now_ns();
        tl_stack st;
        tl_stack_init(&st);
        const long NB = N / 10;
        for (long i = 0; i < NB; i++) {
            tl_stack_push_tensor(&st, a);
            tl_stack_push_tensor(&st, b);
            tl_stack_push_int(&st, 1);
            tl_op_call_boxed(op_add, &st);
            tl_stack_clear(&st);
        }
        double t4 = now_ns();
        tl_stack_free(&st);
        double r[4] = {(t1 - t0) / N, (t2 - t1) / N, (t3 - t2) / N, (t4 - t3) / NB};
        printf("lookup_ns %.2f select_ns %.2f entry_ns %.2f boxed_call_ns %.2f\n", r[0], r[1],
               r[2], r[3]);
        for (int j = 0; j < 4; j++)
            if (r[j] < best[j]) best[j] = r[j];
    }
    printf("best: lookup_ns %.2f select_ns %.2f entry_ns %.2f boxed_call_ns %.2f\n", best[0],
           best[1], best[2], best[3]);
    (void)sink;
    tl_tensor_release(a);
    tl_tensor_release(b);
}

/* ================================================================== main */

typedef struct scenario {
    const char *name;
    void (*fn)(void);
} scenario;

static const scenario k_scenarios[] = {
    {"priority", scenario_priority},
    {"perm", scenario_perm},
    {"tls", scenario_tls},
    {"threads", scenario_threads},
    {"fallthrough", scenario_fallthrough},
    {"fallback", scenario_fallback},
    {"missing", scenario_missing},
    {"boxed_unboxed", scenario_boxed_unboxed},
    {"redispatch", scenario_redispatch},
    {"python_kernel", scenario_python_kernel},
    {"dump", scenario_dump},
    {"keyset_string", scenario_keyset_string},
    {"bad_keys", scenario_bad_keys},
    {"schema", scenario_schema},
    {"ivalue", scenario_ivalue},
    {"schemas", scenario_schemas},
    {"bench", scenario_bench},
};

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s <scenario> [argument]\n", argv[0]);
        return 2;
    }
    g_arg = argc == 3 ? argv[2] : NULL;
    for (size_t i = 0; i < sizeof k_scenarios / sizeof k_scenarios[0]; i++) {
        if (strcmp(argv[1], k_scenarios[i].name) != 0) continue;
        tl_dispatch_reset_for_tests();
        k_scenarios[i].fn();
        CHECK(tl_error_kind_get() == TL_OK);
        tl_dispatch_reset_for_tests();
        CHECK(g_live_tensors == 0);
        printf("PASS %s (%d checks)\n", argv[1], g_checks);
        return 0;
    }
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}
