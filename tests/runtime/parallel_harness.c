/* The thread pool (runtime/src/parallel.c) on its own, one scenario per run
 * (tests/runtime/test_parallel.py builds it plain, under ASan + UBSan and
 * under TSan):
 *   cover   every index of every tl_parallel_for runs exactly once, for many
 *           sizes, grains and thread counts (more threads than cores too)
 *   jobs    tl_parallel_jobs: jobs that wait for each other all run at once
 *   callers several application threads use the pool at the same time
 *   nested  tl_parallel_for / tl_parallel_jobs from inside a region
 *   fork    a child uses the pool after the parent did (fresh workers)
 * Prints "PASS <scenario>"; a hang is caught by alarm(). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tl_internal.h"
#include "tl_runtime.h"

/* the pool's only outside dependencies (tl_set_num_threads' error and its
 * store-policy update), so that the harness links without the rest of the
 * runtime */
int (tl_set_error)(tl_error_kind kind, const char *fmt, ...) {   /* parenthesised: not tl_error.h's macro */
    (void)kind;
    (void)fmt;
    return -1;
}

void tl__store_policy_threads_changed(void) {}

#define CHECK(c)                                                             \
    do {                                                                     \
        if (!(c)) {                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* ---- cover: each index once, inside a region, ranges within [0, n) */
typedef struct {
    int64_t n;
    _Atomic int *hits;
    _Atomic int bad;
} cover_ctx;

static void cover_fn(int64_t b, int64_t e, void *p) {
    cover_ctx *c = p;
    if (b < 0 || e > c->n || b >= e) atomic_store(&c->bad, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

static void cover_once(int64_t n, int64_t grain) {
    cover_ctx c = {n, calloc((size_t)(n > 0 ? n : 1), sizeof(_Atomic int)), 0};
    CHECK(c.hits);
    tl_parallel_for(n, grain, cover_fn, &c);
    CHECK(!atomic_load(&c.bad));
    for (int64_t i = 0; i < n; i++) CHECK(atomic_load(&c.hits[i]) == 1);
    free((void *)c.hits);
}

static void scenario_cover(int rounds) {
    static const int64_t sizes[] = {0, 1, 2, 3, 7, 63, 64, 65, 1000, 4097, 100003};
    static const int64_t grains[] = {1, 2, 5, 64, 1000, 1 << 20};
    for (int r = 0; r < rounds; r++)
        for (int nt = 1; nt <= 5; nt++) {
            tl_set_num_threads(nt);
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
                for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) cover_once(sizes[s], grains[g]);
        }
    tl_set_num_threads(200); /* beyond the pool's limit: capped */
    cover_once(100000, 1);
}

/* ---- jobs: each job waits until all have started (OpenBLAS's pattern) */
typedef struct {
    int njobs;
    _Atomic int arrived, ran[TL_MAX_THREADS];
} jobs_ctx;

static void barrier_job(int i, void *p) {
    jobs_ctx *j = p;
    atomic_fetch_add(&j->ran[i], 1);
    atomic_fetch_add(&j->arrived, 1);
    while (atomic_load(&j->arrived) < j->njobs) sched_yield();
}

static void jobs_once(int njobs) {
    jobs_ctx j;
    memset(&j, 0, sizeof j);
    j.njobs = njobs;
    tl_parallel_jobs(njobs, barrier_job, &j);
    for (int i = 0; i < njobs; i++) CHECK(atomic_load(&j.ran[i]) == 1);
}

static void scenario_jobs(int rounds) {
    for (int r = 0; r < rounds; r++)
        for (int n = 1; n <= 5; n++) jobs_once(n);
}

/* ---- callers: several threads at once (one gets the pool, the others run
 * serially or on plain threads) */
static void *caller_main(void *arg) {
    int rounds = (int)(intptr_t)arg;
    for (int r = 0; r < rounds; r++) {
        cover_once(5000 + r, 100);
        jobs_once(2 + r % 3);
    }
    return NULL;
}

static void scenario_callers(int rounds) {
    tl_set_num_threads(3);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) CHECK(pthread_create(&th[i], NULL, caller_main, (void *)(intptr_t)rounds) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
}

/* ---- nested: regions inside a region run serially; jobs still run at once */
static _Atomic int g_nested_bad;

static void nested_fn(int64_t b, int64_t e, void *p) {
    (void)p;
    if (!tl__in_parallel_region()) atomic_store(&g_nested_bad, 1);
    for (int64_t i = b; i < e; i++) {
        cover_once(300, 10);
        jobs_once(2);
    }
}

static void scenario_nested(int rounds) {
    tl_set_num_threads(2);
    CHECK(!tl__in_parallel_region());
    tl_parallel_for(4 * rounds, 1, nested_fn, NULL);
    CHECK(!atomic_load(&g_nested_bad));
    CHECK(!tl__in_parallel_region());
}

/* ---- fork: the child starts its own workers */
static void scenario_fork(void) {
    tl_set_num_threads(2);
    cover_once(100000, 1000);
    jobs_once(2);
    pid_t pid = fork();
    if (pid == 0) {
        if (tl_get_num_threads() != 1) _exit(3);
        tl_set_num_threads(2);
        cover_once(100000, 1000);
        jobs_once(2);
        _exit(0);
    }
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cover_once(100000, 1000); /* the parent's pool still works */
    jobs_once(2);
}

int main(int argc, char **argv) {
    CHECK(argc >= 2);
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    alarm(240);
    if (!strcmp(argv[1], "cover")) scenario_cover(rounds);
    else if (!strcmp(argv[1], "jobs")) scenario_jobs(rounds);
    else if (!strcmp(argv[1], "callers")) scenario_callers(rounds);
    else if (!strcmp(argv[1], "nested")) scenario_nested(rounds);
    else if (!strcmp(argv[1], "fork")) scenario_fork();
    else return 2;
    printf("PASS %s\n", argv[1]);
    return 0;
}
