/* scale: x * alpha (myops::scale.out's ufunc_inner_loop). The loops compute
 * in each floating dtype (float for Half and BFloat16). */
#define TL_UFUNC_scale(x, alpha) ((x) * (alpha))
