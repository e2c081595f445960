/* The functional and out= variants of the in-place distributions that
 * PyTorch's `autogen:` lines ask for (uniform, cauchy, log_normal,
 * exponential, geometric, random and their .out), as PyTorch's generated
 * CompositeExplicitAutograd kernels: the functional clones self and runs the
 * in-place operator on the clone (same checks, same generator use); out=
 * resizes out to the result and copies it in (casting, like copy_). */
#include "missing_ops.h"
#include "tl_error.h"
#include "tl_internal.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/cauchy.h"
#include "ops/clone.h"
#include "ops/exponential.h"
#include "ops/geometric.h"
#include "ops/log_normal.h"
#include "ops/random.h"
#include "ops/uniform.h"
#include "tl_tensor.h"

/* a clone of self, the in-place call on it (`CALL` names the clone `c`) */
#define TL_RANDOM_FUNCTIONAL(NAME, PARAMS, CALL)                                                    \
    tl_tensor *tl_native_##NAME(tl_keyset ks, tl_tensor *self PARAMS, tl_generator *generator) {    \
        (void)ks;                                                                                   \
        tl_tensor *c = tl_ops_clone(self, -1);                                                      \
        tl_tensor *r = c ? CALL : NULL;                                                             \
        tl_tensor_release(r);                                                                       \
        if (r) return c;                                                                            \
        tl_tensor_release(c);                                                                       \
        return NULL;                                                                                \
    }
#define P2(a, b) , double a, double b
#define P1(a) , double a
TL_RANDOM_FUNCTIONAL(uniform, P2(from, to), tl_ops_uniform_(c, from, to, generator))
TL_RANDOM_FUNCTIONAL(cauchy, P2(median, sigma), tl_ops_cauchy_(c, median, sigma, generator))
TL_RANDOM_FUNCTIONAL(log_normal, P2(mean, std), tl_ops_log_normal_(c, mean, std, generator))
TL_RANDOM_FUNCTIONAL(exponential, P1(lambd), tl_ops_exponential_(c, lambd, generator))
TL_RANDOM_FUNCTIONAL(geometric, P1(p), tl_ops_geometric_(c, p, generator))

tl_tensor *tl_native_uniform_out(tl_keyset ks, tl_tensor *self, double from, double to, tl_generator *generator,
                                 tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_uniform(ks, self, from, to, generator), out);
}
tl_tensor *tl_native_cauchy_out(tl_keyset ks, tl_tensor *self, double median, double sigma, tl_generator *generator,
                                tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_cauchy(ks, self, median, sigma, generator), out);
}
tl_tensor *tl_native_log_normal_out(tl_keyset ks, tl_tensor *self, double mean, double std, tl_generator *generator,
                                    tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_log_normal(ks, self, mean, std, generator), out);
}
tl_tensor *tl_native_exponential_out(tl_keyset ks, tl_tensor *self, double lambd, tl_generator *generator,
                                     tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_exponential(ks, self, lambd, generator), out);
}
tl_tensor *tl_native_geometric_out(tl_keyset ks, tl_tensor *self, double p, tl_generator *generator, tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_geometric(ks, self, p, generator), out);
}

/* random.from / random.to / random and their .out (random_'s autogen) */
static tl_tensor *functional_of(tl_tensor *c, tl_tensor *r) {
    tl_tensor_release(r);
    if (r) return c;
    tl_tensor_release(c);
    return NULL;
}
tl_tensor *tl_native_random(tl_keyset ks, tl_tensor *self, int64_t from, int64_t to, bool to_has,
                            tl_generator *generator) {
    (void)ks;
    tl_tensor *c = tl_ops_clone(self, -1);
    return c ? functional_of(c, tl_ops_random__from(c, from, to, to_has, generator)) : NULL;
}
tl_tensor *tl_native_random__random_to(tl_keyset ks, tl_tensor *self, int64_t to, tl_generator *generator) {
    (void)ks;
    tl_tensor *c = tl_ops_clone(self, -1);
    return c ? functional_of(c, tl_ops_random__to(c, to, generator)) : NULL;
}
tl_tensor *tl_native_random__random(tl_keyset ks, tl_tensor *self, tl_generator *generator) {
    (void)ks;
    tl_tensor *c = tl_ops_clone(self, -1);
    return c ? functional_of(c, tl_ops_random_(c, generator)) : NULL;
}
tl_tensor *tl_native_random_from_out(tl_keyset ks, tl_tensor *self, int64_t from, int64_t to, bool to_has,
                                     tl_generator *generator, tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_random(ks, self, from, to, to_has, generator), out);
}
tl_tensor *tl_native_random_to_out(tl_keyset ks, tl_tensor *self, int64_t to, tl_generator *generator,
                                   tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_random__random_to(ks, self, to, generator), out);
}
tl_tensor *tl_native_random_out(tl_keyset ks, tl_tensor *self, tl_generator *generator, tl_tensor *out) {
    return tl_missing_cast_to_out(tl_native_random__random(ks, self, generator), out);
}
