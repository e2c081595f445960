/* lerp: PyTorch's two-branch formula (ATen's lerp in Lerp.h): for |weight| < 0.5
 * start from self, else from end, so weight 0 gives self and weight 1 gives
 * end exactly. Float literals: exact in float and double alike. Used by the
 * standalone kernels lerp_scalar (weight a Scalar) and lerp_tensor (a tensor).
 */
#define TL_UFUNC_lerp(self, end, weight)                                    \
    (((weight) < 0.5f && (weight) > -0.5f) ? (self) + (weight) * ((end) - (self)) \
                                           : (end) - ((end) - (self)) * (1.0f - (weight)))
