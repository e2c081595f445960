/* torchlet runtime: the CPU store policy, derived from the machine at load
 * time (runtime/src/cpu_topology.c, the rule in docs/UFUNC.md "Stores") and
 * read by the runtime (TensorIterator's tiled walk, runtime/src/iter.c) and by
 * the kernels (the generated pointwise loops, kernels/cpu/copy_kernel.c) alike.
 *
 * Non-temporal (streaming) stores skip the read-for-ownership of every output
 * cache line and keep the output from evicting the inputs, but while the data
 * fits in L2 plain stores win (the output stays there for the next operator).
 * The fields are read once per loop call; the initial values below hold until
 * the runtime's first kernel registration replaces them with the machine's.
 */
#ifndef TL_THRESHOLDS_H
#define TL_THRESHOLDS_H

#include <stdint.h>

typedef struct tl_store_policy {
    /* a pointwise loop call (or a tiled iteration) moving at least this many
     * bytes (outputs + the inputs that are not broadcast scalars) streams its
     * outputs */
    int64_t stream_min_bytes;
    /* a same-dtype copy run of at least this many bytes is written with
     * streaming stores; below that memcpy */
    int64_t copy_stream_min_bytes;
    /* 1: streamed loops prefetch their inputs ahead in software */
    int prefetch;
} tl_store_policy;

extern tl_store_policy tl_cpu_store_policy;

/* derives the policy from the machine, then the environment's overrides
 * (runtime/src/cpu_topology.c); the CPU capability's first use calls it */
void tl__store_policy_init(void);
/* tl_set_num_threads: re-derives the per-call thresholds (an L3 shared by
 * the threads) unless the policy was set explicitly */
void tl__store_policy_threads_changed(void);

#endif
