/* torchlet runtime: dispatch keys and dispatch key sets.
 *
 * A runtime dispatch key is a bit position in a 64-bit tl_keyset. The bit
 * index IS the priority: the dispatcher runs the kernel of the highest set
 * bit (after masking out fallthrough keys). Low to high:
 *
 *   bit  key                  role
 *   0    CPU                  backend
 *   1    CUDA                 backend
 *   2    Meta                 backend (shapes/dtypes only, no data)
 *   3    PrivateUse1          backend slot for out-of-tree / test backends
 *   4    BackendSelect        picks a backend for factory functions
 *   5    Python               dispatch modes, tensor subclasses (like PyTorch,
 *                             below autograd: modes see post-autograd calls)
 *   6    ADInplaceOrView      view / in-place bookkeeping for autograd
 *   7    AutogradOther        autograd for backends without their own key
 *   8    AutogradCPU          autograd, one key per backend
 *   9    AutogradCUDA
 *   10   AutogradMeta
 *   11   AutogradPrivateUse1
 *   12   AutocastCPU          autocast (mixed precision), one key per device
 *   13   AutocastCUDA         type; above autograd so the casts are recorded
 *
 * This is PyTorch's relative order restricted to the keys torchlet has.
 * Numbers are not an ABI: code outside C uses the names. Bit 63 is never set
 * in a keyset; it numbers the table slot used when a call has no tensor
 * arguments (Undefined).
 *
 * Alias keys (numbered 64 and up) are never in a keyset: they name a set of
 * runtime keys and are only used when registering kernels; the dispatcher
 * expands them when it fills an operator's table (see docs/DISPATCHER.md).
 *
 * cdef-clean: build_ffi.py strips preprocessor lines; keep declarations plain.
 */
#ifndef TL_DISPATCH_KEY_H
#define TL_DISPATCH_KEY_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t tl_keyset;

typedef enum tl_dispatch_key {
    TL_KEY_INVALID = -1,

    /* runtime keys: bit positions, priority increases with the number */
    TL_KEY_CPU = 0,
    TL_KEY_CUDA = 1,
    TL_KEY_META = 2,
    TL_KEY_PRIVATEUSE1 = 3,
    TL_KEY_BACKEND_SELECT = 4,
    TL_KEY_PYTHON = 5,
    TL_KEY_AD_INPLACE_OR_VIEW = 6,
    TL_KEY_AUTOGRAD_OTHER = 7,
    TL_KEY_AUTOGRAD_CPU = 8,
    TL_KEY_AUTOGRAD_CUDA = 9,
    TL_KEY_AUTOGRAD_META = 10,
    TL_KEY_AUTOGRAD_PRIVATEUSE1 = 11,
    TL_KEY_AUTOCAST_CPU = 12,
    TL_KEY_AUTOCAST_CUDA = 13,
    TL_NUM_RUNTIME_KEYS = 14,

    /* table slot for calls without tensor arguments; never a keyset bit */
    TL_KEY_UNDEFINED = 63,

    /* alias keys: registration only */
    TL_KEY_AUTOGRAD = 64,                                   /* all Autograd* keys */
    TL_KEY_COMPOSITE_IMPLICIT_AUTOGRAD = 65,                /* backends + autograd + Undefined */
    TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD = 66,                /* backends + Undefined */
    TL_KEY_COMPOSITE_EXPLICIT_AUTOGRAD_NON_FUNCTIONAL = 67, /* backends + Undefined */
    TL_KEY_END = 68
} tl_dispatch_key;

/* The keyset of a fresh tensor on each device: {backend, ADInplaceOrView,
 * Autograd<backend>}, plus Autocast<backend> for CPU and CUDA (Meta has no
 * autocast key, as in PyTorch) (used by tensor.c; C only, build_ffi.py strips
 * macros). */
#define TL_KEYSET_CPU_BITS ((tl_keyset)((1ull << TL_KEY_CPU) | (1ull << TL_KEY_AD_INPLACE_OR_VIEW) | (1ull << TL_KEY_AUTOGRAD_CPU) | (1ull << TL_KEY_AUTOCAST_CPU)))
#define TL_KEYSET_CUDA_BITS ((tl_keyset)((1ull << TL_KEY_CUDA) | (1ull << TL_KEY_AD_INPLACE_OR_VIEW) | (1ull << TL_KEY_AUTOGRAD_CUDA) | (1ull << TL_KEY_AUTOCAST_CUDA)))
#define TL_KEYSET_META_BITS ((tl_keyset)((1ull << TL_KEY_META) | (1ull << TL_KEY_AD_INPLACE_OR_VIEW) | (1ull << TL_KEY_AUTOGRAD_META)))

/* PyTorch's name ("CPU", "AutogradCPU", "CompositeImplicitAutograd",
 * "Undefined"); NULL for a number that is not a key. */
const char *tl_dispatch_key_name(int key);

/* Parses a key name (runtime, Undefined or alias). Unknown or NULL name:
 * TL_KEY_INVALID with RuntimeError "could not parse dispatch key: <name>". */
int tl_dispatch_key_parse(const char *name);

/* 1 for keys that can appear in a keyset (0 <= key < TL_NUM_RUNTIME_KEYS). */
int tl_dispatch_key_is_runtime(int key);
int tl_dispatch_key_is_alias(int key);
int tl_dispatch_key_is_backend(int key);      /* CPU, CUDA, Meta, PrivateUse1 */
int tl_dispatch_key_is_autograd(int key);     /* AutogradOther and Autograd<Backend> */

/* AutogradCPU for CPU, ...; TL_KEY_INVALID for a non-backend key. */
int tl_dispatch_key_autograd_of(int backend_key);
/* CPU for AutogradCPU, ...; TL_KEY_INVALID otherwise (AutogradOther has none). */
int tl_dispatch_key_backend_of(int autograd_key);

/* The runtime keys an alias (or a runtime key: itself) stands for; 0 if invalid.
 * The Undefined slot is not part of a keyset (see tl_dispatch_key_covers). */
tl_keyset tl_dispatch_alias_keyset(int key);

/* The keyset a fresh tensor of a backend carries:
 * {backend, ADInplaceOrView, Autograd<backend>[, Autocast<backend>]}
 * (PyTorch's default). 0 if not a backend. */
tl_keyset tl_dispatch_backend_tensor_keyset(int backend_key);

/* Every runtime key; every Autograd* key (what no_grad / inference excludes). */
tl_keyset tl_keyset_all(void);
tl_keyset tl_keyset_autograd(void);
/* Every Autocast* key (excluded thread-locally by default: autocast off). */
tl_keyset tl_keyset_autocast(void);
/* AutocastCPU for CPU, AutocastCUDA for CUDA; TL_KEY_INVALID otherwise. */
int tl_dispatch_key_autocast_of(int backend_key);

/* Highest-priority key of a keyset (TL_KEY_UNDEFINED for an empty set). */
int tl_keyset_highest(tl_keyset ks);

/* ks restricted to keys strictly below key (for redispatch). */
tl_keyset tl_keyset_below(tl_keyset ks, int key);

/* "DispatchKeySet(CPU, ADInplaceOrView, AutogradCPU)", keys in increasing
 * order; "DispatchKeySet()" when empty. Writes at most n bytes including the
 * NUL (buf may be NULL when n == 0) and returns the full length without the
 * NUL, so a caller can size its buffer. */
int64_t tl_dispatch_keyset_to_string(tl_keyset ks, char *buf, size_t n);

#endif
