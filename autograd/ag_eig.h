/* The general (non-Hermitian) case of linalg_eig_backward
 * (autograd/autograd_linalg_eig.c), called by tl_ag_linalg_eig_backward. */
#ifndef TL_AG_EIG_H
#define TL_AG_EIG_H

#include "tl_tensor.h"

/* gA for A = V diag(L) V^-1, complex L [..., n] and V [..., n, n]; gL / gV may be NULL */
tl_tensor *tl_ag_linalg_eig_backward_general(tl_tensor *gL, tl_tensor *gV, tl_tensor *L, tl_tensor *V);

#endif
