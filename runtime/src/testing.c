/* TEST HOOKS -- not operators.
 *
 * tl_test_binary_add runs out = a + b through TensorIterator with a tiny
 * hand-written loop per dtype, so the iterator's broadcasting, promotion,
 * out= rules and traversal can be tested before the generator produces the
 * real arithmetic kernels (the real `add` is generated).
 */
#include "tl_half.h"
#include "tl_internal.h"

#define TL_TEST_ADD(NAME, T, LOAD, STORE)                                                     \
    static void test_add_##NAME(char **data, const int64_t *strides, int64_t n, void *ctx) {  \
        (void)ctx;                                                                            \
        if (strides[0] == sizeof(T) && strides[1] == sizeof(T) && strides[2] == sizeof(T)) {  \
            T *restrict o = (T *)data[0];                                                     \
            const T *restrict x = (const T *)data[1], *restrict y = (const T *)data[2];       \
            for (int64_t k = 0; k < n; k++) o[k] = STORE(LOAD(x[k]) + LOAD(y[k]));            \
            return;                                                                           \
        }                                                                                     \
        for (int64_t k = 0; k < n; k++) {                                                     \
            T a = *(const T *)(data[1] + k * strides[1]);                                     \
            T b = *(const T *)(data[2] + k * strides[2]);                                     \
            *(T *)(data[0] + k * strides[0]) = STORE(LOAD(a) + LOAD(b));                      \
        }                                                                                     \
    }
#define TL_ID(x) (x)
#define TL_BOOL_OR(x) ((x) != 0)
TL_TEST_ADD(b, uint8_t, TL_ID, TL_BOOL_OR)
TL_TEST_ADD(u8, uint8_t, TL_ID, (uint8_t))
TL_TEST_ADD(i8, int8_t, TL_ID, (int8_t))
TL_TEST_ADD(i16, int16_t, TL_ID, (int16_t))
TL_TEST_ADD(i32, int32_t, (uint32_t), (int32_t))
TL_TEST_ADD(i64, int64_t, (uint64_t), (int64_t))
TL_TEST_ADD(f16, uint16_t, tl_f16_to_f32, tl_f32_to_f16)
TL_TEST_ADD(bf16, uint16_t, tl_bf16_to_f32, tl_f32_to_bf16)
TL_TEST_ADD(f32, float, TL_ID, TL_ID)
TL_TEST_ADD(f64, double, TL_ID, TL_ID)

static const tl_loop_fn k_add_loops[TL_NUM_DTYPES] = {
    test_add_b, test_add_u8, test_add_i8, test_add_i16, test_add_i32,
    test_add_i64, test_add_f16, test_add_bf16, test_add_f32, test_add_f64};

tl_tensor *tl_test_binary_add(tl_tensor *out, const tl_tensor *a, const tl_tensor *b) {
    tl_iter *it = tl_iter_new(TL_ITER_BINARY_OP);
    if (!it) return NULL;
    tl_tensor *result = NULL;
    if (tl_iter_add_output(it, out) == 0 && tl_iter_add_input(it, a) == 0 && tl_iter_add_input(it, b) == 0 &&
        tl_iter_build(it) == 0) {
        tl_dtype dt = tl_iter_common_dtype(it);
        if (tl_iter_is_meta(it) || tl_iter_for_each(it, k_add_loops[dt], NULL) == 0)
            result = tl_iter_output(it, 0);
    }
    tl_iter_free(it);
    return result;
}

static void count_loop(char **data, const int64_t *strides, int64_t n, void *ctx) {
    (void)data; (void)strides; (void)n;
    __atomic_add_fetch((int64_t *)ctx, 1, __ATOMIC_RELAXED);
}

int64_t tl_test_count_loops(const tl_tensor *a, const tl_tensor *b) {
    tl_iter *it = tl_iter_new(TL_ITER_BINARY_OP);
    if (!it) return -1;
    int64_t count = 0;
    int rc = tl_iter_add_output(it, NULL);
    if (rc == 0) rc = tl_iter_add_input(it, a);
    if (rc == 0) rc = tl_iter_add_input(it, b);
    if (rc == 0) rc = tl_iter_build(it);
    if (rc == 0) rc = tl_iter_serial_for_each(it, count_loop, &count);
    tl_iter_free(it);
    return rc == 0 ? count : -1;
}
