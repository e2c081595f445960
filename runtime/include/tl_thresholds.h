/* torchlet runtime: machine-dependent size thresholds, set from measurements
 * and read by the runtime (TensorIterator's tiled walk, runtime/src/iter.c)
 * and by the kernels (the generated pointwise loops, kernels/cpu/copy_kernel.c)
 * alike, so a retuning for another machine happens in one place.
 *
 * Non-temporal (streaming) stores skip the read-for-ownership of every output
 * cache line and keep the output from evicting the inputs, but while the data
 * fits in L2 plain stores win (the output stays there for the next operator).
 * Measured on the development VM (AVX-512, 2 MiB L2, float32, huge pages):
 * a + b 0.82x at 512 KiB per array (1.5 MiB moved), 1.35x at 1 MiB (3 MiB
 * moved), 1.6-1.8x at 2-16 MiB; -a 0.72x at 1 MiB (2 MiB moved), 1.8x at 2 MiB.
 * PyTorch and numpy use plain stores.
 */
#ifndef TL_THRESHOLDS_H
#define TL_THRESHOLDS_H

#include <stdint.h>

/* a pointwise loop call (or a tiled iteration) moving at least this many bytes
 * (outputs + the inputs that are not broadcast scalars) streams its outputs */
#define TL_USTREAM_MIN_BYTES ((int64_t)3 << 20)

/* a same-dtype copy run of at least this many bytes is written with streaming
 * stores: 1.3-1.9x glibc's memcpy at 4-64 MiB on the development VM, whose
 * memcpy keeps plain stores up to 3/4 of its (300 MiB) L3; below that memcpy wins */
#define TL_COPY_STREAM_MIN_BYTES ((int64_t)4 << 20)

#endif
