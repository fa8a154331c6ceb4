/* Thread pool (see pool.h). A job is published by bumping a generation counter under the
 * mutex; workers spin briefly on it, then sleep on the condition variable. Completion is an
 * atomic countdown the caller spins (then yields) on. */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "cpu/pool.h"
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define SPIN_WAKE 4000   /* polls before a worker sleeps on the condition variable */
#define SPIN_WAIT 2000   /* polls before a waiter (barrier, caller) sleeps in the kernel */

/* Sleeps while *addr == val (returns at once if it already differs), or yields where there are
 * no futexes. Wakes: all sleepers on addr. With more threads than free cores a spinning waiter
 * would hold the core its partner needs, so waiters do not spin for long. */
static void wait_while(atomic_uint *addr, unsigned val)
{
#if defined(__linux__)
    syscall(SYS_futex, (void *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
#else
    (void)addr;
    (void)val;
    sched_yield();
#endif
}
static void wake_all(atomic_uint *addr)
{
#if defined(__linux__)
    syscall(SYS_futex, (void *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#else
    (void)addr;
#endif
}

struct worker {
    struct tally_pool *pool;
    int tid;
    pthread_t thread;
};

struct tally_pool {
    int size;
    struct worker *workers;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint_fast64_t gen;
    atomic_uint pending;   /* workers still running the job */
    atomic_uint caller_asleep;
    atomic_int stop;
    tally_job_fn fn;
    void *arg;
    int nth;
    /* barrier */
    _Alignas(64) atomic_uint bar_count;
    atomic_uint bar_gen;
    atomic_uint bar_sleepers;
};

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker_main(void *v)
{
    struct worker *w = v;
    tally_pool *p = w->pool;
    uint64_t seen = 0;
    for (;;) {
        uint64_t g = atomic_load_explicit(&p->gen, memory_order_acquire);
        for (int i = 0; g == seen && i < SPIN_WAKE; i++) {
            relax();
            g = atomic_load_explicit(&p->gen, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen)
                pthread_cond_wait(&p->cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) break;
        if (w->tid < p->nth) p->fn(p->arg, w->tid, p->nth);
        if (atomic_fetch_sub(&p->pending, 1) == 1 && atomic_load(&p->caller_asleep))
            wake_all(&p->pending);
    }
    return NULL;
}

static void publish(tally_pool *p)
{
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void wait_pending(tally_pool *p)
{
    unsigned v;
    for (int i = 0; (v = atomic_load_explicit(&p->pending, memory_order_acquire)) != 0; i++) {
        if (i < SPIN_WAIT) {
            relax();
            continue;
        }
        atomic_store(&p->caller_asleep, 1);
        if (atomic_load(&p->pending) == v) wait_while(&p->pending, v);
        atomic_store(&p->caller_asleep, 0);
    }
}

tally_status tally_pool_create(int nthreads, tally_pool **out)
{
    *out = NULL;
    tally_pool *p = calloc(1, sizeof *p);
    if (!p) return TALLY_ERR_OUT_OF_MEMORY;
    p->size = nthreads < 1 ? 1 : nthreads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    atomic_init(&p->gen, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->bar_count, 0);
    atomic_init(&p->bar_gen, 0);
    atomic_init(&p->bar_sleepers, 0);
    atomic_init(&p->caller_asleep, 0);
    int nw = p->size - 1;
    if (nw > 0) {
        p->workers = calloc((size_t)nw, sizeof *p->workers);
        if (!p->workers) {
            free(p);
            return TALLY_ERR_OUT_OF_MEMORY;
        }
    }
    for (int i = 0; i < nw; i++) {
        p->workers[i].pool = p;
        p->workers[i].tid = i + 1;
        if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]) != 0) {
            p->size = i + 1; /* the workers started so far */
            tally_pool_destroy(p);
            return TALLY_ERR_BACKEND_FAILURE;
        }
    }
    *out = p;
    return TALLY_OK;
}

void tally_pool_destroy(tally_pool *p)
{
    if (!p) return;
    int nw = p->size - 1;
    if (nw > 0) {
        atomic_store_explicit(&p->stop, 1, memory_order_release);
        publish(p);
        for (int i = 0; i < nw; i++) pthread_join(p->workers[i].thread, NULL);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->workers);
    free(p);
}

int tally_pool_size(const tally_pool *p) { return p->size; }

void tally_pool_run(tally_pool *p, int nthreads, tally_job_fn fn, void *arg)
{
    if (nthreads > p->size) nthreads = p->size;
    if (nthreads <= 1) {
        fn(arg, 0, 1);
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->nth = nthreads;
    atomic_store_explicit(&p->pending, (unsigned)(p->size - 1), memory_order_relaxed);
    publish(p);
    fn(arg, 0, nthreads);
    wait_pending(p);
}

void tally_pool_barrier(tally_pool *p, int nthreads)
{
    if (nthreads <= 1) return;
    unsigned g = atomic_load_explicit(&p->bar_gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&p->bar_count, 1, memory_order_acq_rel) + 1 == (unsigned)nthreads) {
        atomic_store_explicit(&p->bar_count, 0, memory_order_relaxed);
        atomic_fetch_add(&p->bar_gen, 1); /* seq_cst: ordered before the sleepers check */
        if (atomic_load(&p->bar_sleepers)) wake_all(&p->bar_gen);
        return;
    }
    for (int i = 0; atomic_load_explicit(&p->bar_gen, memory_order_acquire) == g; i++) {
        if (i < SPIN_WAIT) {
            relax();
            continue;
        }
        atomic_fetch_add(&p->bar_sleepers, 1);
        wait_while(&p->bar_gen, g); /* returns at once if the generation moved on */
        atomic_fetch_sub(&p->bar_sleepers, 1);
    }
}
