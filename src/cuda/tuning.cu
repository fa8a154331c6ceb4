/* The knobs of a tuning build (tuning.h): read once from the environment, set by the benchmark.
 * The default build compiles nothing here. */
#ifdef TALLY_TUNING
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include "cuda/tuning.h"

namespace {

struct KnobDef {
    const char *name, *env;
    int dflt, lo, hi;
};
const KnobDef k_knobs[TCU_KNOB_COUNT] = {
#define X(ID, name, dflt, lo, hi) {#name, "TALLY_CUDA_" #ID, dflt, lo, hi},
    TCU_KNOBS(X)
#undef X
};

std::atomic<int> g_knobs[TCU_KNOB_COUNT];
std::once_flag g_knobs_once;

int clamp(int k, int v) { return v < k_knobs[k].lo ? k_knobs[k].lo : v > k_knobs[k].hi ? k_knobs[k].hi : v; }

void load_knobs()
{
    for (int i = 0; i < TCU_KNOB_COUNT; i++) {
        const char *e = getenv(k_knobs[i].env);
        g_knobs[i].store(e && *e ? clamp(i, atoi(e)) : k_knobs[i].dflt, std::memory_order_relaxed);
    }
}

} // namespace

int tcu_knob(int k)
{
    std::call_once(g_knobs_once, load_knobs);
    return (k >= 0 && k < TCU_KNOB_COUNT) ? g_knobs[k].load(std::memory_order_relaxed) : 0;
}

int tcu_set_knob(int k, int v)
{
    if (k < 0 || k >= TCU_KNOB_COUNT) return -1;
    std::call_once(g_knobs_once, load_knobs);
    return g_knobs[k].exchange(clamp(k, v), std::memory_order_relaxed);
}

int tcu_knob_index(const char *name)
{
    for (int i = 0; name && i < TCU_KNOB_COUNT; i++)
        if (!strcmp(name, k_knobs[i].name)) return i;
    return -1;
}

extern "C" int tally_cuda_bench_set_knob(const char *name, int value)
{
    int k = tcu_knob_index(name);
    return k < 0 ? -1 : tcu_set_knob(k, value);
}
#endif
