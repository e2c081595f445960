/* torchlet runtime: dtypes, devices and Python-number scalars.
 *
 * cdef-clean: build_ffi.py strips preprocessor lines and __attribute__ and
 * feeds the rest to cffi, so keep declarations plain C (no macros in them).
 */
#ifndef TL_DTYPE_H
#define TL_DTYPE_H

#include <stdint.h>

typedef enum tl_dtype {
    TL_BOOL = 0,
    TL_UINT8 = 1,
    TL_INT8 = 2,
    TL_INT16 = 3,
    TL_INT32 = 4,
    TL_INT64 = 5,
    TL_FLOAT16 = 6,      /* stored as uint16_t bits (IEEE binary16) */
    TL_BFLOAT16 = 7,     /* stored as uint16_t bits (top half of a float32) */
    TL_FLOAT32 = 8,
    TL_FLOAT64 = 9,
    TL_COMPLEX64 = 10,   /* two float32: real, imaginary (C99 float _Complex layout) */
    TL_COMPLEX128 = 11,  /* two float64 */
    TL_NUM_DTYPES = 12,
    TL_DTYPE_UNDEFINED = -1
} tl_dtype;

typedef enum tl_device_type {
    TL_CPU = 0,
    TL_CUDA = 1,   /* NVIDIA GPUs through the driver API (tl_cuda.h) */
    TL_META = 2    /* metadata only, no data */
} tl_device_type;

typedef enum tl_scalar_kind {
    TL_SCALAR_BOOL = 0,
    TL_SCALAR_INT = 1,
    TL_SCALAR_DOUBLE = 2,
    TL_SCALAR_COMPLEX = 3
} tl_scalar_kind;

/* A Python number: bool, int (int64), float (double) or complex (d + im*j). */
typedef struct tl_scalar {
    tl_scalar_kind kind;
    int64_t i;      /* used for BOOL (0/1) and INT */
    double d;       /* used for DOUBLE; the real part for COMPLEX */
    double im;      /* the imaginary part for COMPLEX, else 0 */
} tl_scalar;

/* dtype facts */
int64_t tl_dtype_itemsize(tl_dtype dt);       /* 0 for an invalid dtype */
const char *tl_dtype_name(tl_dtype dt);       /* "float32" */
const char *tl_dtype_scalar_name(tl_dtype dt);/* PyTorch's ScalarType name: "Float" */
const char *tl_dtype_caffe2_name(tl_dtype dt);/* PyTorch's TypeMeta name: "float", "long int" */
int tl_dtype_is_floating(tl_dtype dt);
int tl_dtype_is_complex(tl_dtype dt);
/* complex64 <-> float32, complex128 <-> float64 (PyTorch's toRealValueType /
 * toComplexType; float16 and bfloat16 map to complex64: no complex32 here) */
tl_dtype tl_dtype_to_real(tl_dtype dt);
tl_dtype tl_dtype_to_complex(tl_dtype dt);
int tl_dtype_is_integral(tl_dtype dt, int include_bool);
int tl_dtype_is_signed(tl_dtype dt);
int tl_dtype_valid(int dt);

/* PyTorch's promote_types (symmetric table). */
tl_dtype tl_promote_types(tl_dtype a, tl_dtype b);
/* PyTorch's canCast(from, to): no floating -> integral, no non-bool -> bool. */
int tl_can_cast(tl_dtype from, tl_dtype to);

/* The default floating dtype (float32 unless changed). */
tl_dtype tl_get_default_dtype(void);
int tl_set_default_dtype(tl_dtype dt);        /* floating dtypes only */
/* complex128 when the default dtype is float64, else complex64 */
tl_dtype tl_get_default_complex_dtype(void);

/* dtype a Python scalar has as a tensor (bool, int64, float64, complex128) */
tl_dtype tl_scalar_dtype(tl_scalar s);
tl_scalar tl_scalar_from_bool(int v);
tl_scalar tl_scalar_from_int(int64_t v);
tl_scalar tl_scalar_from_double(double v);
tl_scalar tl_scalar_from_complex(double re, double im);
/* Stores s converted to dtype dt at dst (itemsize bytes). -1 on a bad dtype. */
int tl_scalar_store(tl_scalar s, tl_dtype dt, void *dst);
/* Reads one element of dtype dt at src into a scalar (float16/32/64 -> DOUBLE,
 * bool -> BOOL, integers -> INT, complex -> COMPLEX). */
int tl_scalar_load(const void *src, tl_dtype dt, tl_scalar *out);

#endif
