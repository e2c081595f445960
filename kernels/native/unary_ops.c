/* Meta functions of the unary pointwise math and activation operators:
 * exp ... erfc, abs, sign, floor/ceil/trunc, frac, silu. The arithmetic is
 * generated from kernels/ufunc/<op>.h (docs/UFUNC.md); these only configure the iterator, as PyTorch's
 * TORCH_META_FUNC(op) do (UnaryOps.cpp, Activation.cpp):
 *
 *  - float-valued ops (exp, log, sqrt, sin, sigmoid, reciprocal, erf, ...):
 *    build_borrowing_unary_float_op -- bool and integer inputs compute in the
 *    default float dtype (torch.exp(int_tensor) is float32);
 *  - abs, sign, floor, ceil, trunc, frac, silu: build_borrowing_unary_op --
 *    the input's dtype; the dtypes a formula has no loop for (abs/floor of
 *    bool, frac/silu of integers) are refused by the generated runner
 *    ("ufunc_abs_cpu" not implemented for 'Bool').
 */
#include "tl_error.h"
#include "tl_ops_base.h" /* + the operator headers used: make includes */
#include "ops/abs.h"
#include "ops/ceil.h"
#include "ops/cos.h"
#include "ops/erf.h"
#include "ops/erfc.h"
#include "ops/exp.h"
#include "ops/exp2.h"
#include "ops/expm1.h"
#include "ops/floor.h"
#include "ops/frac.h"
#include "ops/log.h"
#include "ops/log10.h"
#include "ops/log1p.h"
#include "ops/log2.h"
#include "ops/reciprocal.h"
#include "ops/rsqrt.h"
#include "ops/sigmoid.h"
#include "ops/sign.h"
#include "ops/silu.h"
#include "ops/sin.h"
#include "ops/sqrt.h"
#include "ops/tan.h"
#include "ops/tanh.h"
#include "ops/trunc.h"
#include "tl_structured.h"
#include "tl_tensor.h"

#define TL_UNARY_FLOAT_META(op) \
    int tl_meta_##op(tl_structured *s, tl_tensor *self) { return tl_structured_build_unary_float_op(s, self); }
#define TL_UNARY_META(op) \
    int tl_meta_##op(tl_structured *s, tl_tensor *self) { return tl_structured_build_unary_op(s, self); }

TL_UNARY_FLOAT_META(exp)
TL_UNARY_FLOAT_META(exp2)
TL_UNARY_FLOAT_META(expm1)
TL_UNARY_FLOAT_META(log)
TL_UNARY_FLOAT_META(log2)
TL_UNARY_FLOAT_META(log10)
TL_UNARY_FLOAT_META(log1p)
TL_UNARY_FLOAT_META(sqrt)
TL_UNARY_FLOAT_META(rsqrt)
TL_UNARY_FLOAT_META(sin)
TL_UNARY_FLOAT_META(cos)
TL_UNARY_FLOAT_META(tan)
TL_UNARY_FLOAT_META(tanh)
TL_UNARY_FLOAT_META(sigmoid)
TL_UNARY_FLOAT_META(reciprocal)
TL_UNARY_FLOAT_META(erf)
TL_UNARY_FLOAT_META(erfc)

/* abs of a complex tensor has the real value type (UnaryOps.cpp's
 * unary_op_impl_with_complex_to_float; the loops: kernels/ufunc/abs_c*.h) */
int tl_meta_abs(tl_structured *s, tl_tensor *self) {
    const tl_dtype dt = tl_tensor_dtype(self);
    if (!tl_dtype_is_complex(dt)) return tl_structured_build_unary_op(s, self);
    if (s->kind == TL_STRUCTURED_INPLACE)
        return tl_set_error(TL_ERR_RUNTIME, "In-place abs is not supported for complex tensors.");
    const tl_dtype real = tl_dtype_to_real(dt);
    if (s->kind == TL_STRUCTURED_OUT && !tl_can_cast(real, tl_tensor_dtype(s->outputs[0])))
        return tl_set_error(TL_ERR_RUNTIME, "result type %s can't be cast to the desired output type %s",
                            tl_dtype_scalar_name(real), tl_dtype_scalar_name(tl_tensor_dtype(s->outputs[0])));
    const tl_tensor *in[1] = {self};
    return tl_structured_build(s, TL_ITER_CAST_TO_OUTPUTS | TL_ITER_RESIZE_OUTPUTS | TL_ITER_CHECK_OVERLAP, 1, in,
                               real);
}
TL_UNARY_META(sign)
TL_UNARY_META(floor)
TL_UNARY_META(ceil)
TL_UNARY_META(trunc)
TL_UNARY_META(frac)
TL_UNARY_META(silu)
