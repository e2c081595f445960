/* The public C API's version (runtime/include/tl_abi.h). */
#include "tl_abi.h"

#include "tl_error.h"

int tl_abi_version(void) { return TL_ABI_VERSION; }

int tl_abi_check(const char *library, int built) {
    if (built == TL_ABI_VERSION) return 0;
    return tl_set_error(TL_ERR_RUNTIME,
                        "%s was compiled against torchlet C ABI version %d, but this torchlet has ABI version %d: "
                        "rebuild it against this torchlet (torchlet-gen build)",
                        library ? library : "a library", built, TL_ABI_VERSION);
}
