/* The CUDA reduction kernels: sum, mean, amax / amin, argmax / argmin
 * (with max.dim's values), prod, var / std (Welford, with the mean),
 * logsumexp, any / all, the vector norms, softmax / log_softmax and their
 * backward, layer_norm, cumsum / cumprod.
 * generated/cuda/reduce.cu includes this text (a shared text: NVRTC gets it
 * pasted in, codegen/emit/cuda_program.py) after the prelude and the
 * parameter struct (tl_cuda_reduce_params.h), then has one extern "C" pair
 * of kernels per operator and dtype (<name> and <name>_combine). The host side is kernels/cuda/tl_cuda_reduce.c.
 *
 * Scheme (docs/CUDA.md): one block per output row (a grid-stride loop over
 * rows x splits), its threads striding the reduced elements, then a block
 * tree: warp shuffles, one value per warp through shared memory, shuffles
 * again. Every thread runs every step of the tree (the second stage too), so
 * control flow is uniform: the host shim (tests/cuda/shim) runs these kernels
 * with a barrier model. With splits > 1 each block reduces one chunk of a
 * row into `partial` and the _combine kernel reduces a row's partials: the
 * two-pass scheme for few outputs over many elements (deterministic: no
 * atomics).
 *
 * Accumulators as PyTorch's CUDA kernels: float16 / bfloat16 / float32 sum in
 * float, float64 in double, integers and bool in int64; max / min compare in
 * the compute type with NaN propagating; argmax / argmin carry (value, index),
 * NaN wins, ties go to the lower index. */

static_assert(sizeof(tl_cuda_reduce_params) == TL_CUDA_REDUCE_PARAMS_SIZE,
              "tl_cuda_reduce_params: the C and CUDA layouts must agree");

/* ---- storage types: how an element is read into its compute type and written */
struct tl_rd_bool {};   /* tags for the 1- and 2-byte storage types a plain C++ type cannot tell apart */
struct tl_rd_f16 {};
struct tl_rd_bf16 {};

template <class T> struct tl_rd_io {
    typedef T compute;
    typedef T sum_acc;
    static TL_CUDA_FORCEINLINE compute load(const char *p) { return *(const T *)p; }
    template <class V> static TL_CUDA_FORCEINLINE void store(char *p, V v) { *(T *)p = (T)v; }
};
template <> struct tl_rd_io<tl_rd_bool> {
    typedef uint8_t compute;
    typedef int64_t sum_acc;
    static TL_CUDA_FORCEINLINE compute load(const char *p) { return *(const uint8_t *)p; }
    template <class V> static TL_CUDA_FORCEINLINE void store(char *p, V v) { *(uint8_t *)p = v != 0; }
};
template <> struct tl_rd_io<tl_rd_f16> {
    typedef float compute;
    typedef float sum_acc;
    static TL_CUDA_FORCEINLINE compute load(const char *p) { return tl_f16_to_f32(*(const uint16_t *)p); }
    template <class V> static TL_CUDA_FORCEINLINE void store(char *p, V v) { *(uint16_t *)p = tl_f32_to_f16((float)v); }
};
template <> struct tl_rd_io<tl_rd_bf16> {
    typedef float compute;
    typedef float sum_acc;
    static TL_CUDA_FORCEINLINE compute load(const char *p) { return tl_bf16_to_f32(*(const uint16_t *)p); }
    template <class V> static TL_CUDA_FORCEINLINE void store(char *p, V v) { *(uint16_t *)p = tl_f32_to_bf16((float)v); }
};
/* integers sum in int64 (PyTorch's acc_type on CUDA) */
#define TL_RD_INT_ACC(T) \
    template <> struct tl_rd_io<T> { \
        typedef T compute; \
        typedef int64_t sum_acc; \
        static TL_CUDA_FORCEINLINE compute load(const char *p) { return *(const T *)p; } \
        template <class V> static TL_CUDA_FORCEINLINE void store(char *p, V v) { *(T *)p = (T)v; } \
    };
TL_RD_INT_ACC(uint8_t)
TL_RD_INT_ACC(int8_t)
TL_RD_INT_ACC(int16_t)
TL_RD_INT_ACC(int32_t)
TL_RD_INT_ACC(int64_t)

/* bytes of a stored element (the tags are empty types) */
template <class T> struct tl_rd_bytes { static const uint32_t n = sizeof(T); };
template <> struct tl_rd_bytes<tl_rd_bool> { static const uint32_t n = 1; };
template <> struct tl_rd_bytes<tl_rd_f16> { static const uint32_t n = 2; };
template <> struct tl_rd_bytes<tl_rd_bf16> { static const uint32_t n = 2; };

/* the lowest / highest value of a compute type: max's / min's identity */
template <class C> static TL_CUDA_FORCEINLINE C tl_rd_lowest();
template <class C> static TL_CUDA_FORCEINLINE C tl_rd_highest();
template <> TL_CUDA_FORCEINLINE float tl_rd_lowest<float>() { return -INFINITY; }
template <> TL_CUDA_FORCEINLINE float tl_rd_highest<float>() { return INFINITY; }
template <> TL_CUDA_FORCEINLINE double tl_rd_lowest<double>() { return -(double)INFINITY; }
template <> TL_CUDA_FORCEINLINE double tl_rd_highest<double>() { return (double)INFINITY; }
template <> TL_CUDA_FORCEINLINE uint8_t tl_rd_lowest<uint8_t>() { return 0; }
template <> TL_CUDA_FORCEINLINE uint8_t tl_rd_highest<uint8_t>() { return 255; }
template <> TL_CUDA_FORCEINLINE int8_t tl_rd_lowest<int8_t>() { return -128; }
template <> TL_CUDA_FORCEINLINE int8_t tl_rd_highest<int8_t>() { return 127; }
template <> TL_CUDA_FORCEINLINE int16_t tl_rd_lowest<int16_t>() { return -32768; }
template <> TL_CUDA_FORCEINLINE int16_t tl_rd_highest<int16_t>() { return 32767; }
template <> TL_CUDA_FORCEINLINE int32_t tl_rd_lowest<int32_t>() { return -2147483647 - 1; }
template <> TL_CUDA_FORCEINLINE int32_t tl_rd_highest<int32_t>() { return 2147483647; }
template <> TL_CUDA_FORCEINLINE int64_t tl_rd_lowest<int64_t>() { return -9223372036854775807LL - 1; }
template <> TL_CUDA_FORCEINLINE int64_t tl_rd_highest<int64_t>() { return 9223372036854775807LL; }

template <class C> static TL_CUDA_FORCEINLINE bool tl_rd_isnan(C v) { return v != v; }

/* ---- the operators: identity, reduce one element (with its index), combine
 * two accumulators, store the projected result */
template <class T> struct tl_rd_sum {
    typedef typename tl_rd_io<T>::sum_acc acc;
    static TL_CUDA_FORCEINLINE acc ident() { return (acc)0; }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) { return a + (acc)v; }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) { return a + b; }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        tl_rd_io<T>::store((char *)p.out + off, a);
    }
};
/* PyTorch's ProdOps: the product in the sum's accumulator type (integers
 * wrap in int64) */
template <class T> struct tl_rd_prod : tl_rd_sum<T> {
    typedef typename tl_rd_sum<T>::acc acc;
    static TL_CUDA_FORCEINLINE acc ident() { return (acc)1; }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) { return a * (acc)v; }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) { return a * b; }
};
/* nansum (PyTorch's NanSumOps): the sum with NaN read as 0 (floating types) */
template <class T> struct tl_rd_nansum : tl_rd_sum<T> {
    typedef typename tl_rd_sum<T>::acc acc;
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) {
        return a + (tl_rd_isnan(v) ? (acc)0 : (acc)v);
    }
};
/* PyTorch's MeanOps: the sum times factor = 1 / count in the accumulator's type */
template <class T> struct tl_rd_mean : tl_rd_sum<T> {
    typedef typename tl_rd_sum<T>::acc acc;
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        tl_rd_io<T>::store((char *)p.out + off, a * (acc)p.factor);
    }
};
/* PyTorch's MaxNanFunctor / MinNanFunctor: a NaN accumulator stays */
template <class T, bool MAX> struct tl_rd_extreme {
    typedef typename tl_rd_io<T>::compute acc;
    static TL_CUDA_FORCEINLINE acc ident() { return MAX ? tl_rd_lowest<acc>() : tl_rd_highest<acc>(); }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) {
        return (tl_rd_isnan(a) || (MAX ? a > b : a < b)) ? a : b;
    }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, acc v, uint32_t) { return combine(a, v); }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        tl_rd_io<T>::store((char *)p.out + off, a);
    }
};
template <class C> struct tl_rd_pair {
    C v;
    int64_t i;
};
/* PyTorch's ArgMaxOps / ArgMinOps (GreaterOrNan / LessOrNan). The identity's
 * index 0 is right: it can only win a tie with the identity's value, which
 * then is the value of every element, first among them element 0. */
template <class T, bool MAX> struct tl_rd_arg {
    typedef typename tl_rd_io<T>::compute C;
    typedef tl_rd_pair<C> acc;
    static TL_CUDA_FORCEINLINE acc ident() {
        acc a;
        a.v = MAX ? tl_rd_lowest<C>() : tl_rd_highest<C>();
        a.i = 0;
        return a;
    }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) {
        bool first;
        if (tl_rd_isnan(a.v)) first = tl_rd_isnan(b.v) ? a.i < b.i : true;
        else if (a.v == b.v) first = a.i < b.i;
        else first = MAX ? a.v > b.v : a.v < b.v;
        return first ? a : b;
    }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, C v, uint32_t k) {
        acc b;
        b.v = v;
        b.i = (int64_t)k;
        return combine(a, b);
    }
    /* max.dim / min.dim: the value into out2 (element strides of the index output) */
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        *(int64_t *)((char *)p.out + off) = a.i;
        if (p.out2) tl_rd_io<T>::store((char *)p.out2 + off / 8 * (int32_t)tl_rd_bytes<T>::n, a.v);
    }
};

/* PyTorch's WelfordOps (SharedReduceOps.h) in the sum's accumulator type
 * (float for half / bfloat16 / float32, double for float64): the running
 * mean and M2 with an int32 count per thread, Chan's merge across threads
 * and blocks. The store writes var (or std when SQRT) with the divisor
 * max(0, n - correction) into out and the mean into out2 when it is set;
 * 0 elements give NaN for both (PyTorch fills an empty input's results). */
template <class A> struct tl_rd_welford_acc {
    A mean, m2, nf;
    int32_t n;
};
template <class T, bool SQRT> struct tl_rd_welford {
    typedef typename tl_rd_io<T>::sum_acc A;
    typedef tl_rd_welford_acc<A> acc;
    static TL_CUDA_FORCEINLINE acc ident() {
        acc a;
        a.mean = 0;
        a.m2 = 0;
        a.nf = 0;
        a.n = 0;
        return a;
    }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) {
        const int32_t n = a.n + 1;
        const A nf = (A)n, x = (A)v, delta = x - a.mean, mean = a.mean + delta / nf;
        a.m2 += delta * (x - mean);
        a.mean = mean;
        a.n = n;
        a.nf = nf;
        return a;
    }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) {
        if (a.nf == 0) return b;
        if (b.nf == 0) return a;
        const A delta = b.mean - a.mean, nf = a.nf + b.nf, nb_over_n = b.nf / nf;
        acc r;
        r.mean = a.mean + delta * nb_over_n;
        r.m2 = a.m2 + b.m2 + delta * delta * a.nf * nb_over_n;
        r.nf = nf;
        r.n = -1;   /* combined: nf counts (PyTorch's marker) */
        return r;
    }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        const A divisor = a.nf > (A)p.scalar ? a.nf - (A)p.scalar : (A)0;
        A var = a.m2 / divisor, mean = a.mean;
        if (a.nf == 0) var = mean = (A)NAN;
        tl_rd_io<T>::store((char *)p.out + off, SQRT ? (A)sqrt(var) : var);
        if (p.out2) tl_rd_io<T>::store((char *)p.out2 + off, mean);
    }
};

static TL_CUDA_FORCEINLINE float tl_rd_exp(float x) { return expf(x); }
static TL_CUDA_FORCEINLINE double tl_rd_exp(double x) { return exp(x); }
static TL_CUDA_FORCEINLINE float tl_rd_log(float x) { return logf(x); }
static TL_CUDA_FORCEINLINE double tl_rd_log(double x) { return log(x); }

/* a value rounded to T's precision (PyTorch computes logsumexp's steps as
 * separate operators, each result stored as T) */
template <class T, class A> static TL_CUDA_FORCEINLINE A tl_rd_round(A v) {
    uint64_t b;
    tl_rd_io<T>::store((char *)&b, v);
    return (A)tl_rd_io<T>::load((const char *)&b);
}

/* logsumexp after the row maxima were stored into out (the amax kernel):
 * each row starts from its maximum m, with m' = 0 when |m| is infinite
 * (PyTorch's masked_fill_), sums exp(x - m') in the accumulator type and
 * stores log(sum) + m'. NaN propagates through m; a row of -inf gives
 * log(0) = -inf, one with +inf gives inf. Steps round to T as PyTorch's
 * separate operators do. */
template <class A> struct tl_rd_lse_acc {
    A s, m;
};
/* a sum s with a per-output constant m every thread of the output holds
 * from tl_rd_begin (logsumexp's row maximum, the norm's p) */
template <class T> struct tl_rd_carry {
    typedef typename tl_rd_io<T>::sum_acc A;
    typedef tl_rd_lse_acc<A> acc;
    static TL_CUDA_FORCEINLINE acc ident() {
        acc a;
        a.s = 0;
        a.m = 0;
        return a;
    }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) {
        a.s += b.s;
        return a;
    }
};
template <class T> struct tl_rd_lse : tl_rd_carry<T> {
    typedef typename tl_rd_io<T>::sum_acc A;
    typedef tl_rd_lse_acc<A> acc;
    static TL_CUDA_FORCEINLINE acc begin(const tl_cuda_reduce_params &p, int32_t off) {
        acc a;
        a.s = 0;
        a.m = (A)tl_rd_io<T>::load((const char *)p.out + off);
        if (a.m == (A)INFINITY || a.m == -(A)INFINITY) a.m = 0;
        return a;
    }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) {
        a.s += tl_rd_round<T>(tl_rd_exp(tl_rd_round<T>((A)v - a.m)));
        return a;
    }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        const A l = tl_rd_round<T>(tl_rd_log(tl_rd_round<T>(a.s)));
        tl_rd_io<T>::store((char *)p.out + off, l + a.m);
    }
};

/* an operator's accumulator at the start of the output at `off`: its
 * identity, or what the operator reads there (logsumexp's row maximum) */
template <class Op> struct tl_rd_begin {
    static TL_CUDA_FORCEINLINE typename Op::acc at(const tl_cuda_reduce_params &, int32_t) { return Op::ident(); }
};
template <class T> struct tl_rd_begin<tl_rd_lse<T> > {
    static TL_CUDA_FORCEINLINE typename tl_rd_lse<T>::acc at(const tl_cuda_reduce_params &p, int32_t off) {
        return tl_rd_lse<T>::begin(p, off);
    }
};

/* an accumulator of a piece whose elements start at index k_base of their
 * row: argmax's / argmin's index moves there (the identity's 0 only stays
 * when every element of the piece ties with it, the piece's first among
 * them) */
template <class Op> struct tl_rd_rebase {
    static TL_CUDA_FORCEINLINE typename Op::acc at(typename Op::acc a, int64_t) { return a; }
};
template <class T, bool MAX> struct tl_rd_rebase<tl_rd_arg<T, MAX> > {
    static TL_CUDA_FORCEINLINE typename tl_rd_arg<T, MAX>::acc at(typename tl_rd_arg<T, MAX>::acc a, int64_t base) {
        a.i += base;
        return a;
    }
};

/* PyTorch's And / Or reductions (any / all): an element counts when it is
 * non-zero (NaN does); the result is 0 / 1 in out (bool, or uint8 for a
 * uint8 input) */
template <class T, bool ANY> struct tl_rd_logical {
    typedef uint8_t acc;
    static TL_CUDA_FORCEINLINE acc ident() { return ANY ? 0 : 1; }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) {
        return ANY ? (acc)(a | (v != 0)) : (acc)(a & (v != 0));
    }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) { return ANY ? (acc)(a | b) : (acc)(a & b); }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        *((uint8_t *)p.out + off) = a;
    }
};

/* linalg_vector_norm (PyTorch's NormTwoOps, NormOneOps, AbsMaxOps,
 * AbsMinOps, NormZeroOps) in the sum's accumulator type (floating inputs
 * only): KIND 0: sqrt(sum x^2), 1: sum |x|, 2: max |x|, 3: min |x| (NaN
 * propagates), 4: the count of non-zeros */
static TL_CUDA_FORCEINLINE float tl_rd_abs(float x) { return fabsf(x); }
static TL_CUDA_FORCEINLINE double tl_rd_abs(double x) { return fabs(x); }
template <class T, int KIND> struct tl_rd_norm {
    typedef typename tl_rd_io<T>::sum_acc acc;
    static TL_CUDA_FORCEINLINE acc ident() { return KIND == 3 ? tl_rd_highest<acc>() : (acc)0; }
    static TL_CUDA_FORCEINLINE acc combine(acc a, acc b) {
        if (KIND == 2) return (tl_rd_isnan(a) || a > b) ? a : b;
        if (KIND == 3) return (tl_rd_isnan(a) || a < b) ? a : b;
        return a + b;
    }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) {
        const acc x = (acc)v;
        if (KIND == 0) return a + x * x;
        if (KIND == 4) return a + (acc)(x != 0);
        return KIND == 1 ? a + tl_rd_abs(x) : combine(a, tl_rd_abs(x));
    }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        tl_rd_io<T>::store((char *)p.out + off, KIND == 0 ? (acc)sqrt(a) : a);
    }
};
/* PyTorch's NormOps: (sum |x|^p)^(1/p), p = p.scalar carried in the
 * accumulator from the start (tl_rd_begin) */
template <class T> struct tl_rd_norm_p : tl_rd_carry<T> {
    typedef typename tl_rd_io<T>::sum_acc A;
    typedef tl_rd_lse_acc<A> acc;   /* s: the sum, m: p */
    static TL_CUDA_FORCEINLINE acc begin(const tl_cuda_reduce_params &p, int32_t) {
        acc a;
        a.s = 0;
        a.m = (A)p.scalar;
        return a;
    }
    static TL_CUDA_FORCEINLINE acc reduce(acc a, typename tl_rd_io<T>::compute v, uint32_t) {
        a.s += (A)pow(tl_rd_abs((A)v), a.m);
        return a;
    }
    static TL_CUDA_FORCEINLINE void store(const tl_cuda_reduce_params &p, int32_t off, acc a) {
        tl_rd_io<T>::store((char *)p.out + off, (A)pow(a.s, (A)1 / (A)p.scalar));
    }
};
template <class T> struct tl_rd_begin<tl_rd_norm_p<T> > {
    static TL_CUDA_FORCEINLINE typename tl_rd_norm_p<T>::acc at(const tl_cuda_reduce_params &p, int32_t off) {
        return tl_rd_norm_p<T>::begin(p, off);
    }
};

/* ---- warp shuffles of an accumulator (narrow integers through int) */
template <class A> static TL_CUDA_FORCEINLINE A tl_rd_shfl(A v, unsigned delta) {
    if constexpr (sizeof(A) < 4) return (A)__shfl_down_sync(0xffffffffu, (int)v, delta);
    else return __shfl_down_sync(0xffffffffu, v, delta);
}
template <class C> static TL_CUDA_FORCEINLINE tl_rd_pair<C> tl_rd_shfl(tl_rd_pair<C> a, unsigned delta) {
    a.v = tl_rd_shfl(a.v, delta);
    a.i = tl_rd_shfl(a.i, delta);
    return a;
}
template <class A> static TL_CUDA_FORCEINLINE tl_rd_welford_acc<A> tl_rd_shfl(tl_rd_welford_acc<A> a,
                                                                        unsigned delta) {
    a.mean = tl_rd_shfl(a.mean, delta);
    a.m2 = tl_rd_shfl(a.m2, delta);
    a.nf = tl_rd_shfl(a.nf, delta);
    a.n = tl_rd_shfl(a.n, delta);
    return a;
}
template <class A> static TL_CUDA_FORCEINLINE tl_rd_lse_acc<A> tl_rd_shfl(tl_rd_lse_acc<A> a, unsigned delta) {
    a.s = tl_rd_shfl(a.s, delta);
    a.m = tl_rd_shfl(a.m, delta);
    return a;
}

/* the block's accumulators combined; the result is thread 0's. blockDim.x is
 * a multiple of 32, at most TL_CUDA_REDUCE_MAX_THREADS */
template <class Op> static TL_CUDA_FORCEINLINE typename Op::acc tl_rd_block(typename Op::acc a) {
    typedef typename Op::acc A;
    __shared__ A warp_acc[TL_CUDA_REDUCE_MAX_THREADS / 32];
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
    for (unsigned d = 16; d > 0; d >>= 1) a = Op::combine(a, tl_rd_shfl(a, d));
    if (lane == 0) warp_acc[warp] = a;
    __syncthreads();
    a = lane < (blockDim.x >> 5) ? warp_acc[lane] : Op::ident();
#pragma unroll
    for (unsigned d = 16; d > 0; d >>= 1) a = Op::combine(a, tl_rd_shfl(a, d));
    __syncthreads();   /* warp_acc is reused by the block's next row */
    return a;
}

/* byte offsets of output `row` in the input and in the output */
static TL_CUDA_FORCEINLINE void tl_rd_row_offsets(const tl_cuda_reduce_params &p, uint32_t row, int32_t &in_off,
                                                  int32_t &out_off) {
    in_off = 0;
    out_off = 0;
#pragma unroll 1
    for (uint32_t d = 0; d < p.out_ndim; d++) {
        const uint32_t q = (tl_cuda_umulhi(row, p.out_magic[d]) + row) >> p.out_shift[d];
        const int32_t mod = (int32_t)(row - q * p.out_sizes[d]);
        row = q;
        in_off += mod * p.out_in_stride[d];
        out_off += mod * p.out_out_stride[d];
    }
}

/* byte offset of reduced element k from its row's start */
static TL_CUDA_FORCEINLINE int32_t tl_rd_red_offset(const tl_cuda_reduce_params &p, uint32_t k) {
    int32_t off = 0;
#pragma unroll 1
    for (uint32_t d = 0; d < p.red_ndim; d++) {
        const uint32_t q = (tl_cuda_umulhi(k, p.red_magic[d]) + k) >> p.red_shift[d];
        off += (int32_t)(k - q * p.red_sizes[d]) * p.red_stride[d];
        k = q;
    }
    return off;
}

/* pass 1: block b reduces chunk b % splits of row b / splits */
template <class T, class Op> static TL_CUDA_FORCEINLINE void tl_rd_rows(const tl_cuda_reduce_params &p) {
    typedef typename Op::acc A;
    const uint32_t total = p.nout * p.splits;
    for (uint32_t b = blockIdx.x; b < total; b += gridDim.x) {
        const uint32_t row = b / p.splits, part = b - row * p.splits;
        int32_t in_off, out_off;
        tl_rd_row_offsets(p, row, in_off, out_off);
        const char *in = (const char *)p.in + in_off;
        const uint32_t k0 = part * p.chunk, end = p.nred - k0 < p.chunk ? p.nred : k0 + p.chunk;
        A a = tl_rd_begin<Op>::at(p, out_off);
        if (p.red_ndim == 1) {   /* one reduced dim (the usual case): no division */
            const int32_t st = p.red_stride[0];
            for (uint32_t k = k0 + threadIdx.x; k < end; k += blockDim.x)
                a = Op::reduce(a, tl_rd_io<T>::load(in + (int32_t)k * st), k);
        } else {
            for (uint32_t k = k0 + threadIdx.x; k < end; k += blockDim.x)
                a = Op::reduce(a, tl_rd_io<T>::load(in + tl_rd_red_offset(p, k)), k);
        }
        a = tl_rd_block<Op>(a);
        if (threadIdx.x == 0) {
            if (p.partial_stride) ((A *)p.partial)[row * p.partial_stride + part] = tl_rd_rebase<Op>::at(a, p.k_base);
            else if (p.splits == 1) Op::store(p, out_off, a);
            else ((A *)p.partial)[b] = a;
        }
    }
}

/* pass 2: block `row` combines the row's `splits` partials */
template <class T, class Op> static TL_CUDA_FORCEINLINE void tl_rd_combine(const tl_cuda_reduce_params &p) {
    typedef typename Op::acc A;
    const A *partial = (const A *)p.partial;
    for (uint32_t row = blockIdx.x; row < p.nout; row += gridDim.x) {
        int32_t in_off, out_off;
        tl_rd_row_offsets(p, row, in_off, out_off);
        A a = tl_rd_begin<Op>::at(p, out_off);
        for (uint32_t j = threadIdx.x; j < p.splits; j += blockDim.x) a = Op::combine(a, partial[row * p.splits + j]);
        a = tl_rd_block<Op>(a);   /* its barriers: every thread read out (tl_rd_begin) before thread 0 writes it */
        if (threadIdx.x == 0) Op::store(p, out_off, a);
    }
}

/* outputs whose reduced elements lie further apart than neighbouring outputs
 * (sum(0) of a row-major matrix): a thread per output walks its reduced
 * elements in order, so a warp's loads at each step are 32 neighbouring
 * outputs' elements (coalesced; PyTorch's "vectorize along output"). No
 * shared memory or barrier; the same operators, so argmax's ties and NaN
 * resolve as in the block kernels. */
template <class T, class Op> static TL_CUDA_FORCEINLINE void tl_rd_cols(const tl_cuda_reduce_params &p) {
    typedef typename Op::acc A;
    for (uint32_t m = blockIdx.x * blockDim.x + threadIdx.x; m < p.nout; m += gridDim.x * blockDim.x) {
        int32_t in_off, out_off;
        tl_rd_row_offsets(p, m, in_off, out_off);
        const char *in = (const char *)p.in + in_off;
        A a = tl_rd_begin<Op>::at(p, out_off);
        if (p.red_ndim == 1) {
            const int32_t st = p.red_stride[0];
            for (uint32_t k = 0; k < p.nred; k++) a = Op::reduce(a, tl_rd_io<T>::load(in + (int32_t)k * st), k);
        } else {
            for (uint32_t k = 0; k < p.nred; k++) a = Op::reduce(a, tl_rd_io<T>::load(in + tl_rd_red_offset(p, k)), k);
        }
        Op::store(p, out_off, a);
    }
}

/* cumsum / cumprod over one dim: block `row` scans its row in chunks of
 * blockDim elements (Hillis-Steele in shared memory, log2(blockDim) steps),
 * each chunk combined with the carry of the chunks before it; in the sum's
 * accumulator type (float for half / bfloat16, int64 for integers). Every
 * thread keeps the same carry, so control flow is uniform. */
template <class T, class Op> static TL_CUDA_FORCEINLINE void tl_rd_scan(const tl_cuda_reduce_params &p) {
    typedef typename Op::acc A;
    __shared__ A buf[TL_CUDA_REDUCE_MAX_THREADS];
    const int32_t st = p.red_ndim ? p.red_stride[0] : 0, ost = p.red_out_stride;
    const uint32_t t = threadIdx.x, nt = blockDim.x;
    for (uint32_t row = blockIdx.x; row < p.nout; row += gridDim.x) {
        int32_t in_off, out_off;
        tl_rd_row_offsets(p, row, in_off, out_off);
        const char *in = (const char *)p.in + in_off;
        char *out = (char *)p.out + out_off;
        A carry = Op::ident();
        for (uint32_t base = 0; base < p.nred; base += nt) {
            const uint32_t k = base + t;
            buf[t] = k < p.nred ? (A)tl_rd_io<T>::load(in + (int32_t)k * st) : Op::ident();
            __syncthreads();
            for (uint32_t off = 1; off < nt; off <<= 1) {
                const A before = t >= off ? buf[t - off] : Op::ident();
                __syncthreads();
                buf[t] = Op::combine(before, buf[t]);
                __syncthreads();
            }
            if (k < p.nred) tl_rd_io<T>::store(out + (int32_t)k * ost, Op::combine(carry, buf[t]));
            carry = Op::combine(carry, buf[nt - 1]);
            __syncthreads();   /* buf is rewritten by the next chunk */
        }
    }
}

/* softmax / log_softmax over one dim (PyTorch's cunn_SoftMaxForward): block
 * `row` finds the row's maximum, then the sum of exp(x - max) in the
 * accumulator type, then writes exp(x - max) / sum or (x - max) - log(sum).
 * Three reads of the row, no staging; rows longer than a block loop. */
template <class T, bool LOG> static TL_CUDA_FORCEINLINE void tl_rd_softmax(const tl_cuda_reduce_params &p) {
    typedef typename tl_rd_io<T>::sum_acc A;
    typedef tl_rd_extreme<T, true> MaxOp;
    typedef tl_rd_sum<T> SumOp;
    const int32_t st = p.red_ndim ? p.red_stride[0] : 0, ost = p.red_out_stride;
    __shared__ A row_max, row_sum;
    for (uint32_t row = blockIdx.x; row < p.nout; row += gridDim.x) {
        int32_t in_off, out_off;
        tl_rd_row_offsets(p, row, in_off, out_off);
        const char *in = (const char *)p.in + in_off;
        char *out = (char *)p.out + out_off;
        typename MaxOp::acc m = MaxOp::ident();
        for (uint32_t k = threadIdx.x; k < p.nred; k += blockDim.x)
            m = MaxOp::combine(m, tl_rd_io<T>::load(in + (int32_t)k * st));
        m = tl_rd_block<MaxOp>(m);
        if (threadIdx.x == 0) row_max = (A)m;
        __syncthreads();
        const A mx = row_max;
        A s = SumOp::ident();
        for (uint32_t k = threadIdx.x; k < p.nred; k += blockDim.x)
            s += tl_rd_exp((A)tl_rd_io<T>::load(in + (int32_t)k * st) - mx);
        s = tl_rd_block<SumOp>(s);
        if (threadIdx.x == 0) row_sum = s;
        __syncthreads();
        const A sum = row_sum, lsum = tl_rd_log(sum);
        for (uint32_t k = threadIdx.x; k < p.nred; k += blockDim.x) {
            const A x = (A)tl_rd_io<T>::load(in + (int32_t)k * st) - mx;
            tl_rd_io<T>::store(out + (int32_t)k * ost, LOG ? x - lsum : tl_rd_exp(x) / sum);
        }
        __syncthreads();   /* row_max / row_sum are rewritten by the next row */
    }
}

/* softmax / log_softmax backward (PyTorch's cunn_SoftMaxBackward): block
 * `row` sums grad * y (softmax) or grad (log_softmax) over the row in the
 * accumulator type, then writes y * (grad - sum) or grad - exp(y) * sum.
 * `in` is the gradient, `in2` the forward's output with the same strides. */
template <class T, bool LOG> static TL_CUDA_FORCEINLINE void tl_rd_softmax_bwd(const tl_cuda_reduce_params &p) {
    typedef typename tl_rd_io<T>::sum_acc A;
    typedef tl_rd_sum<T> SumOp;
    const int32_t st = p.red_ndim ? p.red_stride[0] : 0, ost = p.red_out_stride;
    __shared__ A row_sum;
    for (uint32_t row = blockIdx.x; row < p.nout; row += gridDim.x) {
        int32_t in_off, out_off;
        tl_rd_row_offsets(p, row, in_off, out_off);
        const char *g = (const char *)p.in + in_off, *y = (const char *)p.in2 + in_off;
        char *out = (char *)p.out + out_off;
        A s = SumOp::ident();
        for (uint32_t k = threadIdx.x; k < p.nred; k += blockDim.x) {
            const A gk = (A)tl_rd_io<T>::load(g + (int32_t)k * st);
            s += LOG ? gk : gk * (A)tl_rd_io<T>::load(y + (int32_t)k * st);
        }
        s = tl_rd_block<SumOp>(s);
        if (threadIdx.x == 0) row_sum = s;
        __syncthreads();
        const A sum = row_sum;
        for (uint32_t k = threadIdx.x; k < p.nred; k += blockDim.x) {
            const A gk = (A)tl_rd_io<T>::load(g + (int32_t)k * st), yk = (A)tl_rd_io<T>::load(y + (int32_t)k * st);
            tl_rd_io<T>::store(out + (int32_t)k * ost, LOG ? gk - tl_rd_exp(yk) * sum : yk * (gk - sum));
        }
        __syncthreads();   /* row_sum is rewritten by the next row */
    }
}

/* ---- layer_norm over contiguous rows of p.nred elements (PyTorch's
 * layer_norm_kernel.cu): statistics in the accumulator type A (float for
 * half / bfloat16), mean / rstd stored as A */
static TL_CUDA_FORCEINLINE float tl_rd_rsqrt(float x) { return 1.0f / sqrtf(x); }
static TL_CUDA_FORCEINLINE double tl_rd_rsqrt(double x) { return 1.0 / sqrt(x); }

/* a row's sum in A, the result in every thread of the block */
template <class T> static TL_CUDA_FORCEINLINE typename tl_rd_io<T>::sum_acc tl_rd_row_sum(
        typename tl_rd_io<T>::sum_acc s) {
    typedef typename tl_rd_io<T>::sum_acc A;
    __shared__ A total;
    s = tl_rd_block<tl_rd_sum<T> >(s);
    if (threadIdx.x == 0) total = s;
    __syncthreads();
    s = total;
    __syncthreads();   /* total is rewritten by the next call */
    return s;
}

/* forward: block `row` computes the mean, then the mean of squared
 * deviations (two passes: no cancellation), rstd = 1 / sqrt(var + eps), and
 * writes (x - mean) * rstd * weight + bias */
template <class T> static TL_CUDA_FORCEINLINE void tl_rd_layer_norm(const tl_cuda_reduce_params &p) {
    typedef typename tl_rd_io<T>::sum_acc A;
    const uint32_t n = p.nred;
    const A inv_n = (A)p.factor;
    for (uint32_t row = blockIdx.x; row < p.nout; row += gridDim.x) {
        const char *x = (const char *)p.in + (uint64_t)row * n * tl_rd_bytes<T>::n;
        char *y = (char *)p.out + (uint64_t)row * n * tl_rd_bytes<T>::n;
        A s = 0;
        for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) s += (A)tl_rd_io<T>::load(x + k * tl_rd_bytes<T>::n);
        const A mean = tl_rd_row_sum<T>(s) * inv_n;
        A q = 0;
        for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
            const A d = (A)tl_rd_io<T>::load(x + k * tl_rd_bytes<T>::n) - mean;
            q += d * d;
        }
        const A rstd = tl_rd_rsqrt(tl_rd_row_sum<T>(q) * inv_n + (A)p.eps);
        for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
            A v = ((A)tl_rd_io<T>::load(x + k * tl_rd_bytes<T>::n) - mean) * rstd;
            if (p.weight) v *= (A)tl_rd_io<T>::load((const char *)p.weight + k * tl_rd_bytes<T>::n);
            if (p.bias) v += (A)tl_rd_io<T>::load((const char *)p.bias + k * tl_rd_bytes<T>::n);
            tl_rd_io<T>::store(y + k * tl_rd_bytes<T>::n, v);
        }
        if (threadIdx.x == 0) {
            ((A *)p.mean)[row] = mean;
            ((A *)p.rstd)[row] = rstd;
        }
    }
}

/* grad_input: with xhat = (x - mean) * rstd and g = grad * weight, block
 * `row` sums g and g * xhat, then writes
 * rstd * (g - sum(g) / n - xhat * sum(g * xhat) / n) */
template <class T> static TL_CUDA_FORCEINLINE void tl_rd_layer_norm_bwd(const tl_cuda_reduce_params &p) {
    typedef typename tl_rd_io<T>::sum_acc A;
    const uint32_t n = p.nred;
    const A inv_n = (A)p.factor;
    for (uint32_t row = blockIdx.x; row < p.nout; row += gridDim.x) {
        const uint64_t base = (uint64_t)row * n * tl_rd_bytes<T>::n;
        const char *x = (const char *)p.in + base, *dy = (const char *)p.in2 + base;
        char *dx = (char *)p.out + base;
        const A mean = ((const A *)p.mean)[row], rstd = ((const A *)p.rstd)[row];
        A sg = 0, sgx = 0;
        for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
            A g = (A)tl_rd_io<T>::load(dy + k * tl_rd_bytes<T>::n);
            if (p.weight) g *= (A)tl_rd_io<T>::load((const char *)p.weight + k * tl_rd_bytes<T>::n);
            sg += g;
            sgx += g * ((A)tl_rd_io<T>::load(x + k * tl_rd_bytes<T>::n) - mean) * rstd;
        }
        const A mg = tl_rd_row_sum<T>(sg) * inv_n, mgx = tl_rd_row_sum<T>(sgx) * inv_n;
        for (uint32_t k = threadIdx.x; k < n; k += blockDim.x) {
            A g = (A)tl_rd_io<T>::load(dy + k * tl_rd_bytes<T>::n);
            if (p.weight) g *= (A)tl_rd_io<T>::load((const char *)p.weight + k * tl_rd_bytes<T>::n);
            const A xhat = ((A)tl_rd_io<T>::load(x + k * tl_rd_bytes<T>::n) - mean) * rstd;
            tl_rd_io<T>::store(dx + k * tl_rd_bytes<T>::n, rstd * (g - mg - xhat * mgx));
        }
    }
}

/* grad_weight / grad_bias: column sums over the nout rows, one thread per
 * column walking down the rows (a warp reads 32 neighbouring columns of a
 * row: coalesced), in A, deterministic; 0 pointers are not written */
template <class T> static TL_CUDA_FORCEINLINE void tl_rd_layer_norm_bwd_wb(const tl_cuda_reduce_params &p) {
    typedef typename tl_rd_io<T>::sum_acc A;
    const uint32_t n = p.nred;
    for (uint32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += gridDim.x * blockDim.x) {
        A gw = 0, gb = 0;
        for (uint32_t r = 0; r < p.nout; r++) {
            const uint64_t at = ((uint64_t)r * n + j) * tl_rd_bytes<T>::n;
            const A g = (A)tl_rd_io<T>::load((const char *)p.in2 + at);
            gb += g;
            gw += g * ((A)tl_rd_io<T>::load((const char *)p.in + at) - ((const A *)p.mean)[r]) * ((const A *)p.rstd)[r];
        }
        if (p.weight) tl_rd_io<T>::store((char *)p.weight + j * tl_rd_bytes<T>::n, gw);
        if (p.bias) tl_rd_io<T>::store((char *)p.bias + j * tl_rd_bytes<T>::n, gb);
    }
}
