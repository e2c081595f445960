/* The shim's tl_cuda_launch (tl_cuda.h): finds the host-compiled kernel by
 * name and runs it over grid x block, one simulated thread at a time, with
 * the parameter struct the launcher packed; block-cooperative kernels run
 * each block's threads as fibers (tl_shim_run_coop). Every launch is logged
 * (kernel name, grid, block, shared bytes) for the tests. */
#undef _FORTIFY_SOURCE   /* _longjmp between fiber stacks: no __longjmp_chk */
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <ucontext.h>
#include <cstring>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "host_shim.h"

thread_local tl_shim_dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace {
struct kernel_entry {
    tl_shim_kernel_fn fn;
    bool coop;
};
std::map<std::string, kernel_entry> &registry() {
    static std::map<std::string, kernel_entry> r;
    return r;
}
struct launch_record {
    std::string name;
    unsigned grid, block;
};
std::vector<launch_record> g_log;

/* fibers: entered once with swapcontext, then switched with _setjmp /
 * _longjmp (no signal-mask system call per switch: reductions switch at
 * every barrier of every simulated thread) */
enum { FIBER_STACK = 64 * 1024 };
struct coop_state {
    bool active = false;
    unsigned cur = 0, n = 0;
    tl_shim_kernel_fn fn = nullptr;
    const void *params = nullptr;
    std::vector<ucontext_t> ctx;
    struct saved {
        jmp_buf b;
    };
    std::vector<saved> jb;
    std::vector<unsigned> barriers;   /* barriers passed per thread */
    std::vector<char> started, done;
    std::vector<char> stacks;
    ucontext_t entry;
    jmp_buf sched;
    long divergent = 0;               /* rounds where threads stopped at different barriers */
    alignas(16) unsigned char exchange[TL_SHIM_MAX_THREADS * 16];
};
coop_state g_coop;

void fiber_main() {
    g_coop.fn(g_coop.params);
    g_coop.done[g_coop.cur] = 1;
    _longjmp(g_coop.sched, 1);
}
}

extern "C" {
struct tl_cuda_function_view {  /* tl_cuda.h's tl_cuda_function: program, name, ... */
    void *program;
    const char *name;
};
int tl_set_error(int kind, const char *fmt, ...);

void tl_shim_register(const char *name, tl_shim_kernel_fn fn) { registry()[name] = {fn, false}; }
void tl_shim_register_coop(const char *name, tl_shim_kernel_fn fn) { registry()[name] = {fn, true}; }

void *tl_shim_exchange(void) { return g_coop.exchange; }

void tl_shim_syncthreads(void) {
    if (!g_coop.active) return;
    const unsigned t = g_coop.cur;
    g_coop.barriers[t]++;
    if (!_setjmp(g_coop.jb[t].b)) _longjmp(g_coop.sched, 1);
}

void tl_shim_run_coop(tl_shim_kernel_fn fn, const unsigned grid[3], const unsigned block[3], const void *params) {
    coop_state &c = g_coop;
    const unsigned n = block[0] * block[1] * block[2];
    if (n > TL_SHIM_MAX_THREADS) abort();
    c.n = n;
    c.fn = fn;
    c.params = params;
    c.ctx.resize(n);
    c.jb.resize(n);
    c.barriers.assign(n, 0);
    c.started.assign(n, 0);
    c.done.assign(n, 0);
    if (c.stacks.size() < (size_t)n * FIBER_STACK) c.stacks.resize((size_t)n * FIBER_STACK);
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {block[0], block[1], block[2]};
    c.active = true;
    for (unsigned bz = 0; bz < grid[2]; bz++)
        for (unsigned by = 0; by < grid[1]; by++)
            for (unsigned bx = 0; bx < grid[0]; bx++) {
                blockIdx = {bx, by, bz};
                std::fill(c.started.begin(), c.started.end(), 0);
                std::fill(c.done.begin(), c.done.end(), 0);
                std::fill(c.barriers.begin(), c.barriers.end(), 0);
                for (unsigned left = n; left > 0;) {   /* one round: every live thread to its next barrier */
                    for (unsigned t = 0; t < n; t++) {
                        if (c.done[t]) continue;
                        c.cur = t;
                        threadIdx = {t % block[0], t / block[0] % block[1], t / (block[0] * block[1])};
                        if (_setjmp(c.sched)) continue;
                        if (!c.started[t]) {
                            c.started[t] = 1;
                            getcontext(&c.ctx[t]);
                            c.ctx[t].uc_stack.ss_sp = c.stacks.data() + (size_t)t * FIBER_STACK;
                            c.ctx[t].uc_stack.ss_size = FIBER_STACK;
                            c.ctx[t].uc_link = nullptr;
                            makecontext(&c.ctx[t], fiber_main, 0);
                            swapcontext(&c.entry, &c.ctx[t]);
                        } else {
                            _longjmp(c.jb[t].b, 1);
                        }
                    }
                    left = 0;
                    unsigned at = ~0u;
                    for (unsigned t = 0; t < n; t++) {
                        if (c.done[t]) continue;
                        left++;
                        if (at == ~0u) at = c.barriers[t];
                        else if (c.barriers[t] != at) c.divergent++;
                    }
                    if (left && left != n) c.divergent++;   /* some threads exited while others wait */
                }
            }
    c.active = false;
}

long tl_shim_coop_divergent(void) { return g_coop.divergent; }

int tl_cuda_launch(tl_cuda_function_view *f, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                   void **args) {
    (void)shared_bytes;
    auto it = registry().find(f->name);
    if (it == registry().end()) return tl_set_error(2, "shim: no host kernel %s", f->name);
    g_log.push_back({f->name, grid[0], block[0]});
    if (it->second.coop) tl_shim_run_coop(it->second.fn, grid, block, args[0]);
    else tl_shim_run(it->second.fn, grid, block, args[0]);
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
