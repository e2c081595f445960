/* hardtanh (hardtanh.out): clamp(x, min_val, max_val) like PyTorch's (which calls
 * clamp): min(max(x, min_val), max_val), so min_val > max_val gives max_val;
 * NaN stays NaN. Integer tensors take integer bounds (the scalars are converted
 * to the loop's type once per call: hardtanh(int, 0.5, 2.5) clamps to [0, 2]). */
#define TL__HT_LO(x, lo) ((x) < (lo) ? (lo) : (x))
#define TL_UFUNC_hardtanh(self, min_val, max_val)                                                      \
    ((self) != (self) ? (self) : (TL__HT_LO(self, min_val) > (max_val) ? (max_val) : TL__HT_LO(self, min_val)))
#define TL_UFUNC_hardtanh_int(self, min_val, max_val)                                                  \
    (TL__HT_LO(self, min_val) > (max_val) ? (max_val) : TL__HT_LO(self, min_val))
