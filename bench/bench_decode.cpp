// Google Benchmark: decode calls (one layer, llama8b shape by default) per type pair, variant,
// context depth, batch and M, timed by GPU timestamps (manual time). Counters: GB/s over the
// stored K/V bytes, the read floor (a streaming read of the same bytes in the same process, µs),
// x_floor (the call over that floor) and pct_read_bw (the call's bandwidth as a percentage of the
// streaming read's). The label names the variant and split count the plan chose.
//   bench_decode [--benchmark_filter=...]
//   env: TKV_BENCH_CTX="1k,8k,32k"   TKV_BENCH_TYPES="turbo3,q8_0/turbo3"   TKV_BENCH_WORKLOAD=llama8b
//        TKV_BENCH_VARIANTS="auto" ("all", or a list: "tc,mag4")
//        TKV_BENCH_BATCH="1,16" (sequences; a batch's lengths are ragged below the depth)
//        TKV_BENCH_M="1,8" (queries per sequence)
// A point this device cannot run (its memory, or a shape the plan refuses) is reported as an
// error naming the reason; tc is left out where the device has no tensor-core path.
#include <benchmark/benchmark.h>

#include "bench/bench_common.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "kvcache/error.hpp"
#include "kvcache/vk/context.hpp"
#include "profile/commands.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/workloads.hpp"

using namespace tkv;
using namespace tkv::prof;

namespace {

using tkv::bench::context;
using tkv::bench::env_or;

struct Point {
  Shape shape;
  TypePair pair;
  uint32_t depth, batch, m;
  Variant variant;
};

void decode_bench(benchmark::State& state, const Point& p) {
  auto ctx = context();
  try {
    check_point(ctx->caps(), p.shape, p.pair, p.depth, p.batch, p.m, {p.variant});
    DecodeBench bench(ctx, {p.pair.k, p.pair.v, p.shape.q_heads, p.shape.kv_heads, p.shape.head_dim, p.batch,
                            p.depth, p.m, 0});
    DecodeOptions options;
    options.variant = p.variant;
    const DecodePlan plan = bench.plan(options);
    const uint64_t bytes = bench.kv_bytes_per_call();
    const double floor_us = measure_read(*ctx, bytes, 20).median_us;
    double sum_us = 0;
    for (auto _ : state) {
      const Timing t = bench.time(16, options);  // 16 calls in one submission; their median is the iteration's
      state.SetIterationTime(t.median_us * 1e-6);
      sum_us += t.median_us;
    }
    const double mean_us = sum_us / double(state.iterations());
    state.counters["GB/s"] = double(bytes) / (mean_us * 1e3);
    state.counters["floor_us"] = floor_us;
    state.counters["x_floor"] = mean_us / floor_us;
    state.counters["pct_read_bw"] = 100.0 * floor_us / mean_us;
    state.counters["kv_MB"] = double(bytes) / 1e6;
    state.SetLabel("variant=" + shown_variant(p.pair, plan.variant) + " splits=" + std::to_string(plan.splits));
  } catch (const Error& e) {
    state.SkipWithError(e.what());
  }
}

// A list of counts >= 1 from the environment ("1,16").
std::vector<uint32_t> env_counts(const char* name, const char* fallback) {
  const auto out = parse_uint_list(env_or(name, fallback), name);
  for (uint32_t v : out)
    if (v == 0) fail(ErrorCode::invalid_argument, std::string(name) + ": counts start at 1");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  try {
    const auto ctx = context();
    const DeviceCaps& caps = ctx->caps();
    const bool cpu = caps.device_class == DeviceClass::cpu;
    const auto depths = parse_depths(env_or("TKV_BENCH_CTX", cpu ? "1k" : "1k,8k,32k,128k"));
    const auto pairs = parse_type_pairs(env_or("TKV_BENCH_TYPES", "all"));
    const auto variants = parse_variants(env_or("TKV_BENCH_VARIANTS", "auto"));
    const auto batches = env_counts("TKV_BENCH_BATCH", "1");
    const auto ms = env_counts("TKV_BENCH_M", "1");
    CommonOptions options;
    options.workload = env_or("TKV_BENCH_WORKLOAD", "llama8b");
    const Shape shape = resolve_shape(options);
    for (uint32_t depth : depths)
      for (const auto& pair : pairs)
        for (uint32_t batch : batches)
          for (uint32_t m : ms) {
            const std::string name = "decode/" + shape.name + "/" + pair.label() + "/" + depth_label(depth) + "/b" +
                                     std::to_string(batch) + "/m" + std::to_string(m) + "/";
            std::vector<Variant> run;
            try {
              run = point_variants(caps, shape, pair, variants, m);
            } catch (const Error& e) {  // tc alone asked for where it cannot run: one error row says why
              benchmark::RegisterBenchmark((name + "none").c_str(),
                                           [msg = std::string(e.what())](benchmark::State& s) { s.SkipWithError(msg.c_str()); });
              continue;
            }
            for (Variant v : run)
              benchmark::RegisterBenchmark((name + std::string(variant_name(v))).c_str(), decode_bench,
                                           Point{shape, pair, depth, batch, m, v})
                  ->UseManualTime()
                  ->Unit(benchmark::kMicrosecond)
                  ->Iterations(3);
          }
  } catch (const Error& e) {  // a malformed setting or no Vulkan device: say which, run nothing
    std::fprintf(stderr, "bench_decode: %s\n", e.what());
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
