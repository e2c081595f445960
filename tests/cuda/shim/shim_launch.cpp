/* The shim's tl_cuda_launch (tl_cuda.h): finds the host-compiled kernel by
 * name and runs it over grid x block, one simulated thread at a time, with
 * the parameter struct the launcher packed. Every launch is logged (kernel
 * name, grid, block) for the tests. */
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "host_shim.h"

thread_local tl_shim_dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {
std::map<std::string, tl_shim_kernel_fn> &registry() {
    static std::map<std::string, tl_shim_kernel_fn> r;
    return r;
}
struct launch_record {
    std::string name;
    unsigned grid, block;
};
std::vector<launch_record> g_log;
}

extern "C" {
struct tl_cuda_function_view {  /* tl_cuda.h's tl_cuda_function: program, name, ... */
    void *program;
    const char *name;
};
int tl_set_error(int kind, const char *fmt, ...);

void tl_shim_register(const char *name, tl_shim_kernel_fn fn) { registry()[name] = fn; }

int tl_cuda_launch(tl_cuda_function_view *f, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                   void **args) {
    (void)shared_bytes;
    auto it = registry().find(f->name);
    if (it == registry().end()) return tl_set_error(2, "shim: no host kernel %s", f->name);
    g_log.push_back({f->name, grid[0], block[0]});
    tl_shim_run(it->second, grid, block, args[0]);
    return 0;
}

void tl_shim_run(tl_shim_kernel_fn fn, const unsigned grid[3], const unsigned block[3], const void *params) {
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {block[0], block[1], block[2]};
    for (unsigned bz = 0; bz < grid[2]; bz++)
        for (unsigned by = 0; by < grid[1]; by++)
            for (unsigned bx = 0; bx < grid[0]; bx++) {
                blockIdx = {bx, by, bz};
                for (unsigned tz = 0; tz < block[2]; tz++)
                    for (unsigned ty = 0; ty < block[1]; ty++)
                        for (unsigned tx = 0; tx < block[0]; tx++) {
                            threadIdx = {tx, ty, tz};
                            fn(params);
                        }
            }
}

int tl_shim_log_size(void) { return (int)g_log.size(); }
const char *tl_shim_log_name(int i) { return g_log[i].name.c_str(); }
unsigned tl_shim_log_grid(int i) { return g_log[i].grid; }
unsigned tl_shim_log_block(int i) { return g_log[i].block; }
void tl_shim_log_clear(void) { g_log.clear(); }
}
