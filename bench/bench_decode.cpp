// Google Benchmark: decode calls (one layer, llama8b shape by default) per type and context
// depth, timed by GPU timestamps (manual time), with GB/s over the stored K/V bytes and the
// fraction of a streaming read of the same bytes as counters.
//   bench_decode [--benchmark_filter=...]   env: TKV_BENCH_CTX="1k,8k,32k", TKV_BENCH_TYPES, TKV_BENCH_WORKLOAD
#include <benchmark/benchmark.h>

#include "bench/bench_common.hpp"

#include <cstdlib>
#include <memory>

#include "kvcache/vk/context.hpp"
#include "profile/commands.hpp"
#include "profile/measure.hpp"
#include "profile/workloads.hpp"

using namespace tkv;
using namespace tkv::prof;

namespace {

using tkv::bench::context;
using tkv::bench::env_or;

void decode_bench(benchmark::State& state, TypePair pair, uint32_t depth, const Workload& w, uint32_t batch,
                  uint32_t m) {
  auto ctx = context();
  DecodeBench bench(ctx, {pair.k, pair.v, w.q_heads, w.kv_heads, w.head_dim, batch, depth, m, 0});
  const uint64_t bytes = bench.kv_bytes_per_call();
  const double floor_us = measure_read(*ctx, bytes, 20).median_us;
  for (auto _ : state) {
    const Timing t = bench.time(16);  // 16 calls in one submission; the median is the iteration's time
    state.SetIterationTime(t.median_us * 1e-6);
  }
  state.counters["GB/s"] = benchmark::Counter(double(bytes) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["floor_us"] = floor_us;
  state.counters["kv_MB"] = double(bytes) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const auto ctx = context();
  const bool cpu = ctx->caps().device_class == DeviceClass::cpu;
  const auto depths = parse_depths(env_or("TKV_BENCH_CTX", cpu ? "1k" : "1k,8k,32k,128k"));
  const auto pairs = parse_type_pairs(env_or("TKV_BENCH_TYPES", "all"));
  static const Workload w = find_workload(env_or("TKV_BENCH_WORKLOAD", "llama8b"));
  for (uint32_t depth : depths)
    for (const auto& p : pairs)
      for (uint32_t batch : {1u})
        benchmark::RegisterBenchmark(("decode/" + w.name + "/" + p.label() + "/" + depth_label(depth)).c_str(),
                                     decode_bench, p, depth, w, batch, 1u)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->Iterations(3);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
