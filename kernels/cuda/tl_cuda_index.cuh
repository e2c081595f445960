/* The CUDA indexing kernels: gather-type moves (index_select, gather,
 * index), scatter stores (index_put_), scatter-add (scatter_add, index_add,
 * index_put_ with accumulate, embedding's backward), the index
 * counts of scale_grad_by_freq, and nll_loss's forward and backward.
 * generated/cuda/index.cu includes this text (a shared text: NVRTC gets it
 * pasted in, codegen/emit/cuda_program.py) after the prelude and the
 * parameter struct (tl_cuda_index_params.h), then has one extern "C" kernel
 * per instantiation. The host side is
 * kernels/cuda/tl_cuda_index.c.
 *
 * Every kernel is a grid-stride loop over the launch's positions; a thread
 * finds its three byte offsets with the prelude's tl_cuda_offsets. Indices
 * are checked on the device: one outside [0, dim_size) touches no memory and
 * is recorded in p.flag, which the host reads back after the launch and
 * turns into PyTorch's CPU error (PyTorch's CUDA kernels assert instead).
 * Accumulation is by atomics (atomicAdd, or a compare-and-swap loop on the
 * aligned 32-bit word for 1- and 2-byte dtypes), so sums of floating values
 * that meet at one element depend on the order the threads arrive in: not
 * deterministic, as PyTorch's CUDA index_add / scatter_add / embedding
 * backward with atomics. */

static_assert(sizeof(tl_cuda_index_params) == TL_CUDA_INDEX_PARAMS_SIZE,
              "tl_cuda_index_params: the C and CUDA layouts must agree");

/* bytes of one element of a tl_dtype code */
template <int DT> struct tl_ix_size { static const int n = DT <= 2 ? 1 : DT == 3 || DT == 6 || DT == 7 ? 2 : DT == 4 || DT == 8 ? 4 : 8; };

static TL_CUDA_FORCEINLINE int64_t tl_ix_index(const tl_cuda_index_params &p, int32_t off) {
    const char *q = (const char *)p.index + off;
    const int64_t v = p.index_type == TL_CUDA_INDEX_I64 ? *(const int64_t *)q
                    : p.index_type == TL_CUDA_INDEX_I32 ? (int64_t)*(const int32_t *)q : (int64_t)*(const uint8_t *)q;
    return (p.mode & TL_CUDA_INDEX_WRAP) && v < 0 && v >= -p.dim_size ? v + p.dim_size : v;
}

/* records the first bad index (the host raises); the value is written by the
 * thread that set the mark */
static TL_CUDA_FORCEINLINE void tl_ix_bad(const tl_cuda_index_params &p, int64_t v) {
    unsigned long long *f = (unsigned long long *)p.flag;
    if (atomicCAS(f, 0ull, 1ull) == 0ull) ((int64_t *)f)[1] = v;
}

static TL_CUDA_FORCEINLINE bool tl_ix_valid(const tl_cuda_index_params &p, int64_t v) {
    if (v >= 0 && v < p.dim_size) return true;
    tl_ix_bad(p, v);
    return false;
}

#define TL_IX_LOOP(p) \
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (p).n; i += blockDim.x * gridDim.x)

/* ---- gather: out[pos] = src[pos with the indexed dim at index[pos]]; scatter:
 * out[pos with the indexed dim at index[pos]] = src[pos] (a repeated index:
 * one of the values wins, as PyTorch's CUDA index_put_); any dtype by its size */
template <int B> struct tl_ix_bytes { typedef uint8_t T; };
template <> struct tl_ix_bytes<2> { typedef uint16_t T; };
template <> struct tl_ix_bytes<4> { typedef uint32_t T; };
template <> struct tl_ix_bytes<8> { typedef uint64_t T; };
struct tl_ix_b16 { uint64_t lo, hi; };   /* complex128: 8-byte aligned halves */
template <> struct tl_ix_bytes<16> { typedef tl_ix_b16 T; };

template <int B, bool SCATTER> static TL_CUDA_FORCEINLINE void tl_ix_move(const tl_cuda_index_params &p) {
    typedef typename tl_ix_bytes<B>::T E;
    TL_IX_LOOP(p) {
        int32_t off[3];
        tl_cuda_offsets<3>(p, i, off);
        const int64_t v = tl_ix_index(p, off[2]);
        if (!tl_ix_valid(p, v)) continue;
        const int64_t at = v * p.dim_stride;   /* the indexed side: src for a gather, out for a scatter */
        *(E *)((char *)p.out + off[0] + (SCATTER ? at : 0)) = *(const E *)((const char *)p.src + off[1] + (SCATTER ? 0 : at));
    }
}

/* ---- atomic dst += v in dtype DT, computed in C */
template <int DT, class C> static TL_CUDA_FORCEINLINE void tl_ix_atomic_add(char *d, C v) {
    if (DT == 8) {
        atomicAdd((float *)d, (float)v);
    } else if (DT == 9) {
        atomicAdd((double *)d, (double)v);
    } else if (DT == 4) {
        atomicAdd((int *)d, (int)(int64_t)v);
    } else if (DT == 5) {
        atomicAdd((unsigned long long *)d, (unsigned long long)(int64_t)v);   /* two's complement: wraps */
    } else {
        /* 1- and 2-byte dtypes: compare-and-swap the aligned 32-bit word around the element */
        const unsigned long long a = (unsigned long long)d;
        unsigned int *w = (unsigned int *)(a & ~3ull);
        const unsigned int shift = (unsigned int)(a & 3ull) * 8u;
        const unsigned int mask = (tl_ix_size<DT>::n == 2 ? 0xffffu : 0xffu) << shift;
        unsigned int old = *w, assumed;
        do {
            assumed = old;
            uint32_t cell = (assumed & mask) >> shift;   /* the element in the low bytes (little endian) */
            const C cur = tl_cuda_fetch<C>(DT, (const char *)&cell);
            tl_cuda_cast_store<C>(DT, (char *)&cell, (C)(cur + v));
            old = atomicCAS(w, assumed, (assumed & ~mask) | ((cell << shift) & mask));
        } while (assumed != old);
    }
}

template <class C> static TL_CUDA_FORCEINLINE C tl_ix_alpha(const tl_cuda_index_params &p) { return (C)p.alpha_int; }
template <> TL_CUDA_FORCEINLINE float tl_ix_alpha<float>(const tl_cuda_index_params &p) { return (float)p.alpha; }
template <> TL_CUDA_FORCEINLINE double tl_ix_alpha<double>(const tl_cuda_index_params &p) { return p.alpha; }

/* ---- scatter-add: out[pos with the indexed dim at index[pos]] += alpha * src[pos]
 * (out of dtype DT, src of SDT); SKIP: index == skip adds nothing; FREQ:
 * scaled by 1 / count[index] (aux: int32 counts) */
template <int DT, int SDT, class C> static TL_CUDA_FORCEINLINE void tl_ix_scatter_add(const tl_cuda_index_params &p) {
    const C alpha = tl_ix_alpha<C>(p);
    TL_IX_LOOP(p) {
        int32_t off[3];
        tl_cuda_offsets<3>(p, i, off);
        const int64_t v = tl_ix_index(p, off[2]);
        if ((p.mode & TL_CUDA_INDEX_SKIP) && v == p.skip) continue;
        if (!tl_ix_valid(p, v)) continue;
        C x = tl_cuda_fetch<C>(SDT, (const char *)p.src + off[1]) * alpha;
        if (p.mode & TL_CUDA_INDEX_FREQ) x = x / (C)((const int32_t *)p.aux)[v];
        tl_ix_atomic_add<DT, C>((char *)p.out + off[0] + v * p.dim_stride, x);
    }
}

/* ---- count[index[pos]] += 1 (aux: int32 counts) */
static TL_CUDA_FORCEINLINE void tl_ix_count(const tl_cuda_index_params &p) {
    TL_IX_LOOP(p) {
        int32_t off[3];
        tl_cuda_offsets<3>(p, i, off);
        const int64_t v = tl_ix_index(p, off[2]);
        if (tl_ix_valid(p, v)) atomicAdd((int *)p.aux + v, 1);
    }
}

/* ---- nll_loss forward, a thread per row: out (C, offset [0]) = -w[t] *
 * src[row (offset [1]), t] with t = target (offset [2]); aux[i] (C) = w[t];
 * both 0 for an ignored target */
template <int DT, class C> static TL_CUDA_FORCEINLINE void tl_ix_nll_fwd(const tl_cuda_index_params &p) {
    TL_IX_LOOP(p) {
        int32_t off[3];
        tl_cuda_offsets<3>(p, i, off);
        const int64_t t = tl_ix_index(p, off[2]);
        C loss = 0, w = 0;
        if (t != p.skip && tl_ix_valid(p, t)) {
            w = p.weight ? tl_cuda_fetch<C>(DT, (const char *)p.weight + t * tl_ix_size<DT>::n) : (C)1;
            loss = -w * tl_cuda_fetch<C>(DT, (const char *)p.src + off[1] + t * p.dim_stride);
        }
        *(C *)((char *)p.out + off[0]) = loss;
        ((C *)p.aux)[i] = w;
    }
}

/* ---- nll_loss backward, a thread per row into a zeroed grad_input:
 * out[row (offset [0]), t] = -w[t] * g, g = src at offset [1] (ROWG: one per
 * row; else the one grad_output, stride 0), divided by total_weight (aux)
 * for MEAN */
template <int DT, class C> static TL_CUDA_FORCEINLINE void tl_ix_nll_bwd(const tl_cuda_index_params &p) {
    TL_IX_LOOP(p) {
        int32_t off[3];
        tl_cuda_offsets<3>(p, i, off);
        const int64_t t = tl_ix_index(p, off[2]);
        if (t == p.skip || !tl_ix_valid(p, t)) continue;
        const C w = p.weight ? tl_cuda_fetch<C>(DT, (const char *)p.weight + t * tl_ix_size<DT>::n) : (C)1;
        C g = tl_cuda_fetch<C>(DT, (const char *)p.src + off[1]);
        if (p.mode & TL_CUDA_INDEX_MEAN) g = g / tl_cuda_fetch<C>(DT, (const char *)p.aux);
        tl_cuda_cast_store<C>(DT, (char *)p.out + off[0] + t * p.dim_stride, -w * g);
    }
}
