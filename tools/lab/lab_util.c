/* Thread pool, exact reference, input data and small output helpers for tools/lab. */
#include "lab_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- thread pool ------------------------------------------------------------------------- */
struct lab_pool {
    int n;
    pthread_t *threads;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t generation;
    int remaining;
    int quit;
    lab_task task;
    void *arg;
};

typedef struct lab_worker_arg { lab_pool *pool; int tid; } lab_worker_arg;

static void *lab_worker(void *p)
{
    lab_worker_arg *wa = p;
    lab_pool *pool = wa->pool;
    int tid = wa->tid;
    free(wa);
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        while (pool->generation == seen && !pool->quit) pthread_cond_wait(&pool->go, &pool->lock);
        if (pool->quit) { pthread_mutex_unlock(&pool->lock); return NULL; }
        seen = pool->generation;
        lab_task task = pool->task;
        void *arg = pool->arg;
        pthread_mutex_unlock(&pool->lock);
        task(arg, tid, pool->n);
        pthread_mutex_lock(&pool->lock);
        if (--pool->remaining == 0) pthread_cond_signal(&pool->done);
        pthread_mutex_unlock(&pool->lock);
    }
}

int lab_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

lab_pool *lab_pool_create(int nthreads)
{
    if (nthreads <= 0) nthreads = lab_online_cpus();
    lab_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return NULL;
    pool->n = nthreads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->go, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->threads = calloc((size_t)nthreads, sizeof(pthread_t));
    if (!pool->threads) { free(pool); return NULL; }
    for (int t = 1; t < nthreads; ++t) {
        lab_worker_arg *wa = malloc(sizeof *wa);
        if (!wa) { pool->n = t; break; }
        wa->pool = pool;
        wa->tid = t;
        if (pthread_create(&pool->threads[t], NULL, lab_worker, wa) != 0) {
            free(wa);
            pool->n = t;  /* run with the threads we got */
            break;
        }
    }
    return pool;
}

int lab_pool_size(const lab_pool *pool) { return pool ? pool->n : 1; }

void lab_pool_run(lab_pool *pool, lab_task task, void *arg)
{
    if (!pool || pool->n == 1) { task(arg, 0, 1); return; }
    pthread_mutex_lock(&pool->lock);
    pool->task = task;
    pool->arg = arg;
    pool->remaining = pool->n - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->lock);
    task(arg, 0, pool->n);
    pthread_mutex_lock(&pool->lock);
    while (pool->remaining > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

void lab_pool_destroy(lab_pool *pool)
{
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->quit = 1;
    pthread_cond_broadcast(&pool->go);
    pthread_mutex_unlock(&pool->lock);
    for (int t = 1; t < pool->n; ++t) pthread_join(pool->threads[t], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->go);
    pthread_cond_destroy(&pool->done);
    free(pool->threads);
    free(pool);
}

void lab_split(uint64_t n, int tid, int nthreads, uint64_t *begin, uint64_t *end)
{
    uint64_t b = (uint64_t)((unsigned __int128)n * (unsigned)tid / (unsigned)nthreads);
    uint64_t e = (uint64_t)((unsigned __int128)n * (unsigned)(tid + 1) / (unsigned)nthreads);
    b &= ~(uint64_t)15;
    e = tid == nthreads - 1 ? n : (e & ~(uint64_t)15);
    *begin = tid == 0 ? 0 : b;
    *end = e;
}

/* ---- exact accumulator ------------------------------------------------------------------- */
void lab_exact_init(lab_exact *acc) { memset(acc, 0, sizeof *acc); }

static void lab_exact_carry(lab_exact *acc)
{
    int64_t carry = 0;
    for (int k = 0; k < LAB_ACC_DIGITS - 1; ++k) {
        int64_t v = acc->digit[k] + carry;
        acc->digit[k] = v & 0xFFFFFFFF;
        carry = v >> 32; /* arithmetic shift: floor division, so digits stay in [0, 2^32) */
    }
    acc->digit[LAB_ACC_DIGITS - 1] += carry;
    acc->pending = 0;
}

void lab_exact_add(lab_exact *acc, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int neg = (int)(bits >> 63);
    unsigned biased = (unsigned)((bits >> 52) & 0x7FF);
    uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
    if (biased == 0x7FF) {
        if (frac) acc->nan = 1;
        else if (neg) acc->neg_inf = 1;
        else acc->pos_inf = 1;
        return;
    }
    uint64_t m = biased ? (frac | (UINT64_C(1) << 52)) : frac;
    if (!m) return;
    unsigned pos = biased ? biased - 1 : 0; /* bit position of m's lowest bit above 2^-1074 */
    unsigned k = pos / 32, s = pos % 32;
    unsigned __int128 v = (unsigned __int128)m << s;
    int64_t d0 = (int64_t)(uint32_t)v, d1 = (int64_t)(uint32_t)(v >> 32),
            d2 = (int64_t)(uint64_t)(v >> 64);
    if (neg) { d0 = -d0; d1 = -d1; d2 = -d2; }
    acc->digit[k] += d0;
    acc->digit[k + 1] += d1;
    acc->digit[k + 2] += d2;
    if (++acc->pending >= (1u << 28)) lab_exact_carry(acc);
}

double lab_exact_round(lab_exact *acc)
{
    if (acc->nan || (acc->pos_inf && acc->neg_inf)) return NAN;
    if (acc->pos_inf) return INFINITY;
    if (acc->neg_inf) return -INFINITY;
    lab_exact a = *acc;
    lab_exact_carry(&a);
    double sign = 1.0;
    if (a.digit[LAB_ACC_DIGITS - 1] < 0) {
        for (int k = 0; k < LAB_ACC_DIGITS; ++k) a.digit[k] = -a.digit[k];
        lab_exact_carry(&a);
        sign = -1.0;
    }
    int top = LAB_ACC_DIGITS - 1;
    while (top >= 0 && a.digit[top] == 0) --top;
    if (top < 0) return 0.0;
    unsigned __int128 w = 0;
    for (int k = top; k >= top - 2; --k)
        w = (w << 32) | (unsigned __int128)(uint64_t)(k >= 0 ? a.digit[k] : 0);
    int sticky = 0;
    for (int k = top - 3; k >= 0; --k) sticky |= a.digit[k] != 0;
    int lz = 0;
    while (!(w >> 127)) { w <<= 1; ++lz; }
    uint64_t t = (uint64_t)(w >> 64);
    sticky |= (uint64_t)w != 0;
    int e = 64 - lz + 32 * (top - 2) - 1074; /* value ~ t * 2^e */
    uint64_t mant = t >> 11, rem = t & 0x7FF;
    if (rem > 0x400 || (rem == 0x400 && (sticky || (mant & 1)))) ++mant;
    return sign * ldexp((double)mant, e + 11);
}

double lab_gamma(double k, double u)
{
    double ku = k * u;
    return ku >= 1.0 ? INFINITY : ku / (1.0 - ku);
}

void lab_reference_compute(const float *x, uint64_t n, lab_reference *ref)
{
    lab_exact acc;
    lab_exact_init(&acc);
    double abs_sum = 0.0;
    float lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = 0; i < n; ++i) {
        lab_exact_add(&acc, x[i]);
        abs_sum += fabs((double)x[i]);
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    ref->sum = lab_exact_round(&acc);
    ref->sum_abs = abs_sum * (1.0 + 2.0 * (double)n * LAB_U64); /* an upper bound of the true one */
    ref->min = lo;
    ref->max = hi;
}

/* ---- data -------------------------------------------------------------------------------- */
uint64_t lab_splitmix(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

void lab_fill(float *x, uint64_t n, lab_data kind, uint64_t seed)
{
    uint64_t state = seed * UINT64_C(0x2545F4914F6CDD1D) + 1;
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t h = lab_splitmix(&state);
        if (kind == LAB_DATA_PRICES) {
            x[i] = (float)((double)(500 + h % 4501) / 100.0);
        } else {
            double mag = ldexp((double)((h >> 8) & 0xFFFFFF) / 16777216.0 + 0.5,
                               (int)((h >> 40) % 41) - 20);
            x[i] = (float)((h & 1) ? -mag : mag);
        }
    }
}

uint32_t lab_hashed_cents(uint64_t i) { return 500u + (uint32_t)((uint32_t)i * 2654435761u) % 4500u; }
uint32_t lab_copies_sold(uint64_t i) { return (uint32_t)((i * 7) % 5); }

/* ---- pairwise, as NumPy's float32 sum does it ------------------------------------------------ */
float lab_pairwise_f32(const float *x, uint64_t n)
{
    if (n < 8) {
        float s = 0.0f;  /* NumPy starts from -0.0; the result differs only for all -0 input */
        for (uint64_t i = 0; i < n; ++i) s += x[i];
        return s;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; ++j) r[j] = x[j];
        uint64_t i;
        for (i = 8; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; ++j) r[j] += x[i + j];
        float s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) s += x[i];
        return s;
    }
    uint64_t half = n / 2;
    half -= half % 8;
    return lab_pairwise_f32(x, half) + lab_pairwise_f32(x + half, n - half);
}

/* ---- output helpers --------------------------------------------------------------------------- */
FILE *lab_open_tmp(const char *path, char *tmpname, size_t tmpsize)
{
    if ((size_t)snprintf(tmpname, tmpsize, "%s.tmp%ld", path, (long)getpid()) >= tmpsize) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return fopen(tmpname, "w");
}

int lab_commit(FILE *f, const char *tmpname, const char *path, int ok)
{
    if (ferror(f)) ok = 0;
    if (fclose(f) != 0) ok = 0;
    if (ok && rename(tmpname, path) != 0) ok = 0;
    if (!ok) remove(tmpname);
    return ok ? 0 : -1;
}

void lab_xml_escape(FILE *f, const char *s)
{
    for (; *s; ++s) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

const char *lab_commas(uint64_t v, char *buf, size_t size)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < len && o + 2 < size; ++i) {
        if (i > 0 && (len - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

int lab_parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s) return -1;
    char *end;
    if (s[0] == '2' && s[1] == '^') {
        long e = strtol(s + 2, &end, 10);
        if (*end || e < 0 || e > 62) return -1;
        *out = UINT64_C(1) << e;
        return 0;
    }
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0) return -1;
    double mult = 1;
    if (*end == 'K' || *end == 'k') mult = 1e3;
    else if (*end == 'M') mult = 1e6;
    else if (*end == 'G') mult = 1e9;
    if (mult != 1) {
        ++end;
        if (*end == 'i') { mult = mult == 1e3 ? 1024.0 : mult == 1e6 ? 1048576.0 : 1073741824.0; ++end; }
    }
    if (*end) return -1;
    v *= mult;
    if (v != floor(v) || v > 1e15) return -1;
    *out = (uint64_t)v;
    return 0;
}
