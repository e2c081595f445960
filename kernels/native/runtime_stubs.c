/* The kernel tables behind the stubs the runtime itself calls through: copy
 * and fill (runtime/src/cpu.c) and TensorIterator's tiled walk
 * (runtime/src/iter.c). The runtime defines these stubs empty and never names
 * a kernel; this file, on the kernels' floor, fills them with the tables of
 * kernels/cpu/ (one per CPU capability) when the library loads. */
#include "tl_internal.h"
#include "tl_kernel.h"

TL_FILL_STUB(tl_copy_stub, tl_copy_table_DEFAULT, tl_copy_table_AVX2, tl_copy_table_AVX512)
TL_FILL_STUB(tl_fill_stub, tl_fill_table_DEFAULT, tl_fill_table_AVX2, tl_fill_table_AVX512)
TL_FILL_STUB(tl_tile_stub, &tl_tile_kernels_DEFAULT, &tl_tile_kernels_AVX2, &tl_tile_kernels_AVX512)
