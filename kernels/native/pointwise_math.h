/* Helpers shared by the pointwise kernels of kernels/native (binary_ops.c,
 * pointwise_math.c). */
#ifndef TL_NATIVE_POINTWISE_MATH_H
#define TL_NATIVE_POINTWISE_MATH_H

#include "tl_dtype.h"
#include "tl_tensor.h"

/* PyTorch's integer-division check (div rounding modes, remainder, fmod,
 * floor_divide): RuntimeError "ZeroDivisionError" when `other`, converted to
 * the integral computation dtype dt, holds a zero; before anything is written */
int tl_pointwise_check_int_divisor(const tl_tensor *other, tl_dtype dt);

/* The Scalar overloads of binary operators (PyTorch's wrapped_scalar_tensor):
 * fn(t, number) -- or fn(number, t) when number_first -- with the number as a
 * wrapped 0-dim tensor, which takes part in type promotion as a Python number */
typedef tl_tensor *(*tl_pointwise_binary_fn)(tl_tensor *, tl_tensor *);
typedef tl_tensor *(*tl_pointwise_binary_out_fn)(tl_tensor *, tl_tensor *, tl_tensor *);
tl_tensor *tl_pointwise_with_number(tl_pointwise_binary_fn fn, tl_tensor *t, tl_scalar number, int number_first);
tl_tensor *tl_pointwise_with_number_out(tl_pointwise_binary_out_fn fn, tl_tensor *self, tl_scalar number,
                                        tl_tensor *out);

#endif
