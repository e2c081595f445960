/* torchlet runtime: autocast (PyTorch's torch.autocast / at::autocast).
 *
 * Every CPU tensor carries AutocastCPU and every CUDA tensor AutocastCUDA;
 * both keys are in the thread-local excluded set by default, so autocast is
 * off and the keys cost nothing. Enabling autocast for a device type removes
 * its key from the excluded set. Operators listed in yaml/autocast.yaml have
 * one generic boxed kernel at the autocast key (runtime/src/autocast.c) whose
 * data is their row of the generated policy table
 * (generated/csrc/autocast_policy.c): it excludes the autocast key for the
 * nested call, casts the eligible arguments through aten::_to_copy (so
 * autograd records the casts) and redispatches below the autocast key.
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep declarations plain.
 */
#ifndef TL_AUTOCAST_H
#define TL_AUTOCAST_H

#include <stdint.h>
#include "tl_dispatch.h"

/* PyTorch's CastPolicy, restricted to what torchlet's operators need */
typedef enum tl_autocast_policy {
    TL_AUTOCAST_LOWER_PRECISION_FP = 0, /* eligible args -> the autocast dtype */
    TL_AUTOCAST_FP32 = 1,               /* eligible args -> float32 */
    TL_AUTOCAST_FP32_SET_OPT_DTYPE = 2, /* first arg eligible and dtype=None: dtype=float32 */
    TL_AUTOCAST_PROMOTE = 3,            /* eligible args -> widest floating type among them */
    TL_AUTOCAST_CAST_TO = 4,            /* eligible args -> the rule's `dtype` (library.register_autocast) */
    TL_AUTOCAST_BANNED = 5              /* PyTorch's "unsafe to autocast" error (binary_cross_entropy on CUDA) */
} tl_autocast_policy;

/* One row of the policy table: an operator overload, the device type whose
 * autocast key it is registered at, its policy, and (fp32_set_opt_dtype only)
 * the index of its `ScalarType? dtype` argument, else -1. `source` names the
 * YAML entry ("yaml/autocast.yaml:12"). */
typedef struct tl_autocast_rule {
    const char *op;
    int32_t device;   /* tl_device_type: TL_CPU or TL_CUDA */
    int32_t policy;   /* tl_autocast_policy */
    int32_t dtype_arg;
    const char *source;
    int32_t dtype;    /* cast_to only: the target dtype */
} tl_autocast_rule;

/* the generated table (generated/csrc/autocast_policy.c) */
extern const tl_autocast_rule tl_autocast_rules[];
extern const int64_t tl_autocast_num_rules;

/* Registers the generic kernel for every row (after tl_ops_register_all).
 * An operator of the table that is not defined: -1 + RuntimeError. */
int tl_autocast_register_all(void);

/* The generic kernel (ctx = const tl_autocast_rule *). */
int tl_autocast_boxed(const tl_kernel *kernel, const tl_operator *op, tl_keyset ks, tl_stack *stack);

/* Thread-local state, by device type (TL_CPU, TL_CUDA; others: -1 +
 * RuntimeError). Enabled = the device's autocast key is not excluded. */
int tl_autocast_is_enabled(int device);
int tl_autocast_set_enabled(int device, int enabled);
int tl_autocast_get_dtype(int device);          /* bfloat16 on CPU, float16 on CUDA by default */
int tl_autocast_set_dtype(int device, int dtype);
int tl_autocast_is_cache_enabled(void);
void tl_autocast_set_cache_enabled(int enabled);
int tl_autocast_increment_nesting(void);        /* returns the new depth */
int tl_autocast_decrement_nesting(void);

/* The cast cache (shared by all threads, one mutex). Entries: float32,
 * requires-grad, leaf, non-view tensors cast to the autocast dtype, keyed by
 * the tensor's identity and checked against its version counter. */
void tl_autocast_clear_cache(void);
int64_t tl_autocast_cache_size(void);
/* casts (aten::_to_copy calls) the autocast kernel made on this thread (tests) */
int64_t tl_autocast_cast_count(void);

#endif
