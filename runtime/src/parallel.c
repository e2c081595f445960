/* Threads: torchlet's own pool, for tl_parallel_for and OpenBLAS's jobs
 * (docs/RUNTIME.md "Threads").
 *
 * Built to degrade gracefully on a machine whose cores are busy with other
 * processes (OpenMP's teams did not: a 2^16-element add on two threads waited
 * a scheduler slice for the second thread):
 * - the caller takes part: chunks are claimed from one atomic counter, so a
 *   worker that is not running yet is simply not waited for; the caller runs
 *   the chunks nobody claimed and waits only for chunks a worker has started;
 * - idle workers spin a bounded time (pause, then sched_yield so that a
 *   thread sharing the core gets it), and sleep on a futex at once when the
 *   spin loop sees it was preempted (the machine is oversubscribed);
 * - one pool: OpenBLAS's jobs run on the same threads (kernels/native/blas.c),
 *   so no second set of threads spins while BLAS runs.
 * One caller uses the workers at a time; another thread's region meanwhile
 * runs serially. Fork: the child has no workers; its handler resets the pool
 * and sets one thread (set_num_threads starts new workers there). */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tl_internal.h"
#include "tl_thresholds.h"

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

/* spin budget of an idle worker / waiting caller before it sleeps: pause for
 * the first TL_PAUSE_NS, then sched_yield until TL_SPIN_NS; a gap above
 * TL_PREEMPT_NS between two checks means the thread was preempted: sleep */
#define TL_PAUSE_NS 20000
#define TL_SPIN_NS 1000000
#define TL_PREEMPT_NS 200000

static int g_num_threads = 0; /* 0: not initialised */
static int64_t g_grain = 32768;
static _Thread_local int g_in_parallel __attribute__((tls_model("initial-exec"))) = 0;

/* ---- the pool */
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER; /* held by the caller using the workers */
static int g_nworkers = 0;                                       /* started (under g_pool_lock) */

/* the current job: written by the caller before it publishes g_claim; read
 * by a worker only after it claimed a chunk (the job cannot end before that
 * chunk is done, so the fields are stable) */
static struct {
    tl_range_fn fn;
    void *ctx;
    int64_t n, chunk;
} g_job;

/* generation (32 bits) | chunk count (16) | next unclaimed chunk (16) */
static _Alignas(64) _Atomic uint64_t g_claim = 0;
static _Alignas(64) _Atomic uint32_t g_gen = 0; /* futex: idle workers sleep on it */
static _Atomic int g_sleepers = 0;
static _Alignas(64) _Atomic uint32_t g_done = 0; /* chunks finished; futex the caller sleeps on */
static _Atomic int g_caller_sleeping = 0;

static void futex_wait(_Atomic uint32_t *w, uint32_t val) {
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}
static void futex_wake(_Atomic uint32_t *w, int n) { syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0); }

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin until *w != val or the budget is spent; returns 1 when it changed.
 * Checks the clock every 64 rounds. */
static int spin_while_equal(_Atomic uint32_t *w, uint32_t val) {
    uint64_t t0 = now_ns(), last = t0;
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(w, memory_order_acquire) != val) return 1;
        if (i & 63) {
            cpu_relax();
            continue;
        }
        uint64_t t = now_ns();
        if (t - last > TL_PREEMPT_NS || t - t0 > TL_SPIN_NS) return 0;
        last = t;
        if (t - t0 > TL_PAUSE_NS) sched_yield();
    }
}

/* claims a chunk of job `gen`: its index (and the job's chunk count in
 * *nchunks), or -1 when the job has none left or is not current */
static int claim(uint32_t gen, unsigned *nchunks) {
    uint64_t c = atomic_load_explicit(&g_claim, memory_order_acquire);
    for (;;) {
        *nchunks = (unsigned)((c >> 16) & 0xffff);
        if ((uint32_t)(c >> 32) != gen || (c & 0xffff) >= *nchunks) return -1;
        if (atomic_compare_exchange_weak_explicit(&g_claim, &c, c + 1, memory_order_acq_rel, memory_order_acquire))
            return (int)(c & 0xffff);
    }
}

/* runs the chunks of job `gen` this thread can claim */
static void run_claimed(uint32_t gen) {
    unsigned nchunks;
    int k;
    while ((k = claim(gen, &nchunks)) >= 0) {
        int64_t b = (int64_t)k * g_job.chunk, e = b + g_job.chunk < g_job.n ? b + g_job.chunk : g_job.n;
        g_in_parallel = 1;
        g_job.fn(b, e, g_job.ctx);
        g_in_parallel = 0;
        if (atomic_fetch_add(&g_done, 1) + 1 == nchunks && atomic_load(&g_caller_sleeping)) futex_wake(&g_done, 1);
    }
}

static void *worker_main(void *arg) {
    uint32_t seen = (uint32_t)(uintptr_t)arg;
    for (;;) {
        if (!spin_while_equal(&g_gen, seen)) {
            atomic_fetch_add(&g_sleepers, 1);
            while (atomic_load(&g_gen) == seen) futex_wait(&g_gen, seen);
            atomic_fetch_sub(&g_sleepers, 1);
        }
        seen = atomic_load_explicit(&g_gen, memory_order_acquire);
        run_claimed(seen);
    }
    return NULL;
}

/* start workers up to n (under g_pool_lock); returns how many there are */
static int ensure_workers(int n) {
    if (n > TL_MAX_THREADS - 1) n = TL_MAX_THREADS - 1;
    if (g_nworkers >= n) return g_nworkers;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the application's threads */
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (g_nworkers < n) {
        pthread_t th;
        uint32_t gen = atomic_load(&g_gen);
        if (pthread_create(&th, &attr, worker_main, (void *)(uintptr_t)gen) != 0) break;
        g_nworkers++;
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return g_nworkers;
}

/* Runs job [0, n) in nchunks chunks of `chunk` on the caller and up to
 * `helpers` workers (g_pool_lock held, workers started). */
static void pool_run(tl_range_fn fn, void *ctx, int64_t n, int64_t chunk, unsigned nchunks, int helpers) {
    g_job.fn = fn;
    g_job.ctx = ctx;
    g_job.n = n;
    g_job.chunk = chunk;
    atomic_store_explicit(&g_done, 0, memory_order_relaxed);
    uint32_t gen = atomic_load_explicit(&g_gen, memory_order_relaxed) + 1;
    atomic_store_explicit(&g_claim, (uint64_t)gen << 32 | (uint64_t)nchunks << 16, memory_order_release);
    atomic_store(&g_gen, gen);
    if (atomic_load(&g_sleepers) > 0) futex_wake(&g_gen, helpers);
    run_claimed(gen);
    /* every chunk is claimed: wait for those workers still run */
    uint32_t d;
    while ((d = atomic_load(&g_done)) != nchunks) {
        if (spin_while_equal(&g_done, d)) continue;
        atomic_store(&g_caller_sleeping, 1);
        if ((d = atomic_load(&g_done)) != nchunks) futex_wait(&g_done, d);
        atomic_store(&g_caller_sleeping, 0);
    }
}

/* ---- configuration */
static void atfork_child(void) {
    /* no workers exist in the child: a fresh, empty pool, one thread */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    g_pool_lock = fresh;
    g_nworkers = 0;
    atomic_store(&g_sleepers, 0);
    atomic_store(&g_caller_sleeping, 0);
    g_num_threads = 1;
}

/* OMP_NUM_THREADS (its first entry), else the CPUs this process may run on:
 * the default omp_get_max_threads() had, and PyTorch's */
static int default_threads(void) {
    const char *e = getenv("OMP_NUM_THREADS");
    if (e && *e) {
        long v = strtol(e, NULL, 10);
        if (v >= 1) return v > INT_MAX ? INT_MAX : (int)v;
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}

__attribute__((constructor)) static void parallel_init(void) {
    g_num_threads = default_threads();
    pthread_atfork(NULL, NULL, atfork_child);
}

int tl_get_num_threads(void) { return g_num_threads < 1 ? 1 : g_num_threads; }

int tl_set_num_threads(int n) {
    if (n < 1) return tl_set_error(TL_ERR_RUNTIME, "Expected number of threads to be positive, got %d", n);
    g_num_threads = n;
    tl__store_policy_threads_changed();
    return 0;
}

int64_t tl_get_grain_size(void) { return g_grain; }
void tl_set_grain_size(int64_t grain) { g_grain = grain < 1 ? 1 : grain; }

int tl__in_parallel_region(void) { return g_in_parallel; }

void tl_parallel_for(int64_t n, int64_t grain, tl_range_fn fn, void *ctx) {
    if (n <= 0) return;
    int nt = tl_get_num_threads();
    if (nt > TL_MAX_THREADS) nt = TL_MAX_THREADS;
    if (grain < 1) grain = 1;
    int64_t max_chunks = (n + grain - 1) / grain;
    if (nt > max_chunks) nt = (int)max_chunks;
    if (nt <= 1 || g_in_parallel || pthread_mutex_trylock(&g_pool_lock) != 0) {
        fn(0, n, ctx);
        return;
    }
    int workers = ensure_workers(nt - 1);
    if (workers + 1 < nt) nt = workers + 1; /* a thread could not be started */
    if (nt <= 1) {
        pthread_mutex_unlock(&g_pool_lock);
        fn(0, n, ctx);
        return;
    }
    int64_t chunk = (n + nt - 1) / nt;
    pool_run(fn, ctx, n, chunk, (unsigned)((n + chunk - 1) / chunk), nt - 1);
    pthread_mutex_unlock(&g_pool_lock);
}

/* ---- jobs that wait on each other (OpenBLAS's) */
typedef struct {
    void (*job)(int i, void *ctx);
    void *ctx;
} jobs_ctx;

static void jobs_range(int64_t b, int64_t e, void *p) {
    const jobs_ctx *j = p;
    for (int64_t i = b; i < e; i++) j->job((int)i, j->ctx);
}

typedef struct {
    void (*job)(int i, void *ctx);
    void *ctx;
    int i;
} thread_job;

static void *thread_job_main(void *p) {
    const thread_job *t = p;
    t->job(t->i, t->ctx);
    return NULL;
}

void tl_parallel_jobs(int njobs, void (*job)(int i, void *ctx), void *ctx) {
    if (njobs <= 1) {
        if (njobs == 1) job(0, ctx);
        return;
    }
    /* each job on its own thread: the pool's when it is free and big enough
     * (every claimer runs one job at a time, so njobs claimers are needed) */
    if (njobs <= TL_MAX_THREADS && !g_in_parallel && pthread_mutex_trylock(&g_pool_lock) == 0) {
        if (ensure_workers(njobs - 1) >= njobs - 1) {
            jobs_ctx j = {job, ctx};
            pool_run(jobs_range, &j, njobs, 1, (unsigned)njobs, njobs - 1);
            pthread_mutex_unlock(&g_pool_lock);
            return;
        }
        pthread_mutex_unlock(&g_pool_lock);
    }
    /* the pool is busy (another thread's region, or called from inside one):
     * plain threads for jobs 1.. (rare: torchlet's regions run BLAS on one thread) */
    pthread_t th[TL_MAX_THREADS];
    thread_job args[TL_MAX_THREADS];
    int started = 0;
    for (int i = 1; i < njobs && i < TL_MAX_THREADS; i++) {
        args[i] = (thread_job){job, ctx, i};
        if (pthread_create(&th[i], NULL, thread_job_main, &args[i]) != 0) abort(); /* jobs wait on each other */
        started = i;
    }
    job(0, ctx);
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
}
