/* div_true: true division (div.out); integer inputs are promoted to the
 * default float dtype by the meta function, so this only sees floats
 * ufunc_complex: yes (C99 complex arithmetic gives PyTorch's values)
 */
#define TL_UFUNC_div_true(self, other) ((self) / (other))
