// Google Benchmark: the GPU cost of appending one token (quantize K and V) for every layer of a
// workload, against the decode step at 4K it accompanies (target P7 of performance.md: the append
// costs at most 5% of the step).
//
//   step/<workload>/<type>/<ctx>        one decode step: `layers` decode calls (one per layer) in
//                                       one command buffer, batch 1, m 1 (DecodeBench::time_step)
//   append/<workload>/<type>/<format>   one token's K and V rows appended to every layer from
//                                       device buffers (KvCache::record_append, all layers recorded
//                                       into one command buffer), at position `ctx`
//
// Both are GPU time between timestamps (manual time), after a warm-up, medians. The append rows
// carry counters append_us, step_us, ratio_pct (= 100 x append_us / step_us) and target_pct (5);
// their label "k=.. v=.. format=.. layers=.. ctx=.." is what bench/targets.py reads. The append
// sources (one token's rows for all layers: 256 KiB for llama8b in f32) are tiny and in an engine
// were just written by the K/V projection, so they are not rotated past the L2 cache; the decode
// step reads a cache rotated past it (DecodeBench).
//
//   bench_append [--benchmark_format=json]
//   env: TKV_BENCH_WORKLOAD (llama8b), TKV_BENCH_TYPES (all), TKV_BENCH_APPEND_CTX (4k),
//        TKV_BENCH_APPEND_FORMATS (f32,f16), TKV_BENCH_LAYERS (the workload's), TKV_BENCH_REPEAT (128:
//        the fused rows' steps then place the new token at every place of a 128-token split),
//        TKV_BENCH_VARIANT, TKV_BENCH_SPLITS (the fused rows' decode variant and split count, all
//        three ways; default the plan's)
//   On a CPU device (lavapipe) the defaults shrink: 4 layers, 1K, turbo3 and f16, 4 repeats.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include "bench/bench_common.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/decoder.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/timer.hpp"
#include "profile/commands.hpp"
#include "profile/measure.hpp"
#include "profile/workloads.hpp"

using namespace tkv;
using namespace tkv::prof;

namespace {

constexpr double kTargetPct = 5.0;  // P7

using tkv::bench::context;
using tkv::bench::env_or;

uint32_t env_uint(const char* name, uint32_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  const long n = std::strtol(v, nullptr, 10);
  return n > 0 ? uint32_t(n) : fallback;
}

struct Settings {
  Workload w;
  uint32_t layers;  // of a step and of an append
  uint32_t ctx;     // decode-step depth and append position
  uint32_t repeat;  // timed steps / appends per iteration
};

// Runs `record` untimed until the GPU has been busy for a while (pipelines built, clocks up), as
// profile/measure.cpp does; `after` runs after every submission (the append rolls back its tokens).
void warm_up(vk::Context& ctx, const std::function<void(vk::Recorder&)>& record, const std::function<void()>& after) {
  const auto start = std::chrono::steady_clock::now();
  const auto min_time = std::chrono::milliseconds(ctx.caps().device_class == DeviceClass::cpu ? 0 : 150);
  for (int i = 0; i < 100; ++i) {
    ctx.run(record);
    after();
    if (i >= 1 && std::chrono::steady_clock::now() - start >= min_time) break;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The decode step at `ctx`, per type pair, shared by the step and append rows of one run.
std::map<std::string, double>& step_cache() {
  static std::map<std::string, double> m;
  return m;
}

std::vector<double> time_steps(const Settings& s, TypePair pair, uint32_t iterations) {
  DecodeBench bench(context(), {pair.k, pair.v, s.w.q_heads, s.w.kv_heads, s.w.head_dim, 1, s.ctx, 1, 0});
  std::vector<double> medians;
  for (uint32_t i = 0; i < iterations; ++i) medians.push_back(bench.time_step(s.layers, s.repeat).median_us);
  return medians;
}

double step_us(const Settings& s, TypePair pair) {
  auto& cache = step_cache();
  const auto it = cache.find(pair.label());
  if (it != cache.end()) return it->second;
  return cache[pair.label()] = median(time_steps(s, pair, 1));
}

void step_bench(benchmark::State& state, Settings s, TypePair pair) {
  std::vector<double> medians;
  {
    DecodeBench bench(context(), {pair.k, pair.v, s.w.q_heads, s.w.kv_heads, s.w.head_dim, 1, s.ctx, 1, 0});
    for (auto _ : state) {
      const Timing t = bench.time_step(s.layers, s.repeat);
      medians.push_back(t.median_us);
      state.SetIterationTime(t.median_us * 1e-6);
    }
  }
  const double us = median(medians);
  step_cache()[pair.label()] = us;
  state.counters["step_us"] = us;
  state.counters["layers"] = s.layers;
  state.counters["ctx"] = s.ctx;
  state.counters["call_us"] = us / s.layers;
  state.SetLabel("k=" + std::string(type_name(pair.k)) + " v=" + std::string(type_name(pair.v)) +
                 " layers=" + std::to_string(s.layers) + " ctx=" + std::to_string(s.ctx));
}

// A cache of `layers` layers holding one sequence of `ctx` tokens (random rows), and device
// buffers holding a few tokens' K and V rows for every layer, [token][layer][kv_head][head_dim].
class AppendBench {
 public:
  static constexpr uint32_t kSourceTokens = 4;  // distinct sources, cycled over the repeats

  AppendBench(const Settings& s, TypePair pair, RowFormat format) : s_(s), format_(format) {
    auto ctx = context();
    const uint32_t page = 64;
    CacheConfig cfg;
    cfg.layers = s.layers;
    cfg.kv_heads = s.w.kv_heads;
    cfg.head_dim = s.w.head_dim;
    cfg.k_type = pair.k;
    cfg.v_type = pair.v;
    cfg.page_size = page;
    cfg.capacity_tokens = uint64_t(s.ctx) + s.repeat + 2 * page;
    cfg.max_sequences = 1;
    cache_ = std::make_unique<KvCache>(ctx, cfg);
    seq_ = cache_->create_sequence();

    // Fill every layer to ctx tokens from one random block (never zeros), as DecodeBench does.
    const uint32_t per_token = s.w.kv_heads * s.w.head_dim;
    const uint32_t block = std::min<uint32_t>(2048, std::max<uint32_t>(s.ctx, 1));
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> k(size_t(block) * per_token), v(k.size());
    for (size_t i = 0; i < k.size(); ++i) {
      k[i] = n(rng) * (i % s.w.head_dim == 7 ? 20.0f : 1.0f);
      v[i] = n(rng);
    }
    for (uint32_t layer = 0; layer < s.layers; ++layer)
      for (uint32_t done = 0; done < s.ctx; done += block)
        cache_->append(seq_, layer, std::min(block, s.ctx - done), {k.data()}, {v.data()});

    // Sources: new rows for kSourceTokens tokens x every layer.
    const size_t elems = size_t(kSourceTokens) * s.layers * per_token;
    row_bytes_ = uint64_t(per_token) * (format == RowFormat::f16 ? 2 : 4);
    k_src_ = make_source(elems, rng, 20.0f);
    v_src_ = make_source(elems, rng, 1.0f);
  }

  // Appends of one token to every layer: the GPU time of each (µs), `repeat` in one submission.
  std::vector<double> time() {
    return time_repeats(s_.ctx, [&](vk::Recorder& r, uint64_t token) { record_token(r, token); });
  }

  // Whole decode steps (a call per layer, one token, batch 1), `repeat` in one submission, three
  // ways: decode calls alone; an append then a decode call per layer (record_append, record); and
  // the fused call per layer (Decoder::record_append_decode). In each way step i attends ctx + i
  // tokens, as an engine's steps from ctx do: the appending ways add token ctx + i to a cache of
  // ctx + i - 1, and the decode way appends one token after each step, outside its timestamps. So
  // the three plan alike step by step, and their differences are the append's cost, over the
  // places a new token takes in its split (at exactly ctx it ends a full split, the fused call's
  // slowest place; a step later it starts one).
  // (Until session 40 the decode way attended ctx tokens in every step and the appending ways
  // ctx + 1 + i: a plan change past ctx was charged to the append. turbo4's 256-entry plan fits
  // 4096 tokens and not 4097, and P7's turbo4 read ~11%; bench/results/2026-11-29-session41/.)
  // The GPU time of each step (µs), per way.
  struct Steps {
    std::vector<double> decode, separate, fused;
  };
  Steps time_steps() {
    auto& ctx = *context();
    const uint32_t per_q = s_.w.q_heads * s_.w.head_dim;
    if (!q_) {
      std::mt19937 rng(11);
      std::normal_distribution<float> n(0.0f, 1.0f);
      std::vector<float> q(per_q);
      for (float& x : q) x = n(rng);
      q_ = vk::Buffer(ctx, q.size() * 4, vk::MemoryKind::device);
      vk::upload(ctx, q_, 0, std::as_bytes(std::span(q)));
      out_ = vk::Buffer(ctx, q.size() * 4, vk::MemoryKind::device);
      decoder_ = std::make_unique<Decoder>(*cache_, s_.w.q_heads);
    }
    const TensorFormat tf = format_ == RowFormat::f16 ? TensorFormat::f16 : TensorFormat::f32;
    const SequenceId seqs[] = {seq_};
    const DeviceTensor q{q_.handle(), 0, uint64_t(per_q) * 4}, out{out_.handle(), 0, uint64_t(per_q) * 4};
    // TKV_BENCH_VARIANT, TKV_BENCH_SPLITS: the variant and split count of all three ways
    // (default: the plan's).
    DecodeOptions options;
    options.variant = parse_variant(env_or("TKV_BENCH_VARIANT", "auto"));
    options.splits = env_uint("TKV_BENCH_SPLITS", 0);
    DecodeOptions fused = options;
    fused.fusion = AppendFusion::fused;  // (automatic may pick separate calls)
    Steps steps;
    for (int way = 0; way < 3; ++way) {
      auto& dst = way == 0 ? steps.decode : way == 1 ? steps.separate : steps.fused;
      if (way == 1) cache_->truncate(seq_, s_.ctx - 1);  // (the appending ways add the ctx-th token)
      const auto after = way == 0 ? std::function<void(vk::Recorder&, uint64_t)>(
                                        [&](vk::Recorder& r, uint64_t token) { record_token(r, token); })
                                  : nullptr;
      dst = time_repeats(way == 0 ? s_.ctx : s_.ctx - 1, [&](vk::Recorder& r, uint64_t token) {
        for (uint32_t layer = 0; layer < s_.layers; ++layer) {
          const uint64_t at = (token * s_.layers + layer) * row_bytes_;
          if (way == 0) {
            decoder_->record(r, layer, seqs, 1, q, out, options);
          } else if (way == 1) {
            cache_->record_append(r, seq_, layer, 1, {k_src_.handle(), at, format_}, {v_src_.handle(), at, format_});
            decoder_->record(r, layer, seqs, 1, q, out, options);
          } else {
            decoder_->record_append_decode(r, layer, seqs, 1, {k_src_.handle(), at, row_bytes_, tf},
                                           {v_src_.handle(), at, row_bytes_, tf}, q, out, fused);
          }
        }
      }, after);
    }
    // The cache back at ctx tokens for the next call's decode way.
    ctx.run([&](vk::Recorder& r) { record_token(r, 0); });
    return steps;
  }

  // Stored bytes one append writes (every layer, K and V).
  uint64_t bytes_written() const { return cache_->bytes_per_token(); }

 private:
  vk::Buffer make_source(size_t elems, std::mt19937& rng, float outlier) {
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<std::byte> bytes(elems * (format_ == RowFormat::f16 ? 2 : 4));
    for (size_t i = 0; i < elems; ++i) {
      const float x = n(rng) * (i % s_.w.head_dim == 7 ? outlier : 1.0f);
      if (format_ == RowFormat::f16) {
        const uint16_t h = float_to_half(x);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      } else {
        std::memcpy(bytes.data() + 4 * i, &x, 4);
      }
    }
    vk::Buffer b(*context(), bytes.size(), vk::MemoryKind::device);
    vk::upload(*context(), b, 0, bytes);
    return b;
  }

  // One token of source `token` appended to every layer (record_append).
  void record_token(vk::Recorder& r, uint64_t token) {
    for (uint32_t layer = 0; layer < s_.layers; ++layer) {
      const uint64_t at = (token * s_.layers + layer) * row_bytes_;
      cache_->record_append(r, seq_, layer, 1, {k_src_.handle(), at, format_}, {v_src_.handle(), at, format_});
    }
  }

  // `repeat` steps recorded by step(recorder, source token) into one submission after a warm-up,
  // each followed by after(recorder, source token) outside its timestamps if given, the sequence
  // rolled back to `depth` tokens after each submission: the GPU time of each step (µs).
  std::vector<double> time_repeats(uint32_t depth, const std::function<void(vk::Recorder&, uint64_t)>& step,
                                   const std::function<void(vk::Recorder&, uint64_t)>& after = nullptr) {
    auto& ctx = *context();
    const uint32_t repeat = s_.repeat;
    vk::TimestampPool timer(ctx, 2 * repeat);
    auto record = [&](vk::Recorder& r, bool timed) {
      if (timed) timer.reset(r);
      for (uint32_t i = 0; i < repeat; ++i) {
        if (timed) timer.write(r, 2 * i);
        step(r, i % kSourceTokens);
        if (timed) timer.write(r, 2 * i + 1);
        if (after) after(r, i % kSourceTokens);
      }
    };
    const auto rollback = [&] { cache_->truncate(seq_, depth); };
    const auto untimed = [&](vk::Recorder& r) { record(r, false); };
    warm_up(ctx, untimed, rollback);
    ctx.run([&](vk::Recorder& r) { record(r, true); });
    rollback();
    const auto ns = timer.read_ns();
    std::vector<double> us;
    for (uint32_t i = 0; i < repeat; ++i) us.push_back((ns[2 * i + 1] - ns[2 * i]) / 1000.0);
    return us;
  }

  Settings s_;
  RowFormat format_;
  std::unique_ptr<KvCache> cache_;
  SequenceId seq_ = 0;
  uint64_t row_bytes_ = 0;
  vk::Buffer k_src_, v_src_;
  vk::Buffer q_, out_;
  std::unique_ptr<Decoder> decoder_;
};

void append_bench(benchmark::State& state, Settings s, TypePair pair, RowFormat format) {
  std::vector<double> all;
  uint64_t written = 0;
  {
    AppendBench bench(s, pair, format);
    written = bench.bytes_written();
    for (auto _ : state) {
      const auto us = bench.time();
      all.insert(all.end(), us.begin(), us.end());
      state.SetIterationTime(median(us) * 1e-6);
    }
  }
  const double append = median(all);
  const double step = step_us(s, pair);  // after the append's cache is freed
  state.counters["append_us"] = append;
  state.counters["append_layer_us"] = append / s.layers;
  state.counters["step_us"] = step;
  state.counters["ratio_pct"] = step > 0 ? 100.0 * append / step : 0.0;
  state.counters["target_pct"] = kTargetPct;
  state.counters["layers"] = s.layers;
  state.counters["ctx"] = s.ctx;
  state.counters["bytes_written"] = double(written);
  state.SetLabel("k=" + std::string(type_name(pair.k)) + " v=" + std::string(type_name(pair.v)) +
                 " format=" + (format == RowFormat::f16 ? "f16" : "f32") + " layers=" + std::to_string(s.layers) +
                 " ctx=" + std::to_string(s.ctx));
}

// The append inside the step (P7 with the fused call): decode steps without appends, with an
// append and a decode call per layer, and with the fused call per layer, on one cache; the
// append's share is (fused - decode) / decode.
void fused_bench(benchmark::State& state, Settings s, TypePair pair, RowFormat format) {
  AppendBench::Steps all;
  {
    AppendBench bench(s, pair, format);
    for (auto _ : state) {
      const auto t = bench.time_steps();
      all.decode.insert(all.decode.end(), t.decode.begin(), t.decode.end());
      all.separate.insert(all.separate.end(), t.separate.begin(), t.separate.end());
      all.fused.insert(all.fused.end(), t.fused.begin(), t.fused.end());
      state.SetIterationTime(median(t.fused) * 1e-6);
    }
  }
  const double decode = median(all.decode), separate = median(all.separate), fused = median(all.fused);
  state.counters["decode_step_us"] = decode;
  state.counters["separate_step_us"] = separate;
  state.counters["fused_step_us"] = fused;
  state.counters["ratio_pct"] = decode > 0 ? 100.0 * (fused - decode) / decode : 0.0;
  state.counters["separate_pct"] = decode > 0 ? 100.0 * (separate - decode) / decode : 0.0;
  state.counters["target_pct"] = kTargetPct;
  state.counters["layers"] = s.layers;
  state.counters["ctx"] = s.ctx;
  state.SetLabel("k=" + std::string(type_name(pair.k)) + " v=" + std::string(type_name(pair.v)) +
                 " format=" + (format == RowFormat::f16 ? "f16" : "f32") + " layers=" + std::to_string(s.layers) +
                 " ctx=" + std::to_string(s.ctx) + " fused");
}

std::vector<RowFormat> parse_formats(const std::string& text) {
  std::vector<RowFormat> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "f32")
      out.push_back(RowFormat::f32);
    else if (item == "f16")
      out.push_back(RowFormat::f16);
    else if (!item.empty())
      throw std::invalid_argument("TKV_BENCH_APPEND_FORMATS: unknown format '" + item + "' (f32, f16)");
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  // TKV_LOG=debug (with TKV_PIPELINE_STATS=1: each pipeline's registers and spills), as turboprof.
  if (const char* level = std::getenv("TKV_LOG")) spdlog::set_level(spdlog::level::from_str(level));
  try {
    const auto& caps = context()->caps();
    const bool cpu = caps.device_class == DeviceClass::cpu;
    benchmark::AddCustomContext("device", caps.name);
    benchmark::AddCustomContext("driver", caps.driver_info);
    Settings s{find_workload(env_or("TKV_BENCH_WORKLOAD", "llama8b")), 0, 0, 0};
    s.layers = env_uint("TKV_BENCH_LAYERS", cpu ? 4 : s.w.layers);
    s.ctx = parse_depths(env_or("TKV_BENCH_APPEND_CTX", cpu ? "1k" : "4k")).front();
    s.repeat = env_uint("TKV_BENCH_REPEAT", cpu ? 4 : 128);
    const auto pairs = parse_type_pairs(env_or("TKV_BENCH_TYPES", cpu ? "turbo3,f16" : "all"));
    const auto formats = parse_formats(env_or("TKV_BENCH_APPEND_FORMATS", "f32,f16"));
    const uint32_t iterations = cpu ? 1 : 3;
    for (const auto& p : pairs) {
      benchmark::RegisterBenchmark(("step/" + s.w.name + "/" + p.label() + "/" + depth_label(s.ctx)).c_str(),
                                   step_bench, s, p)
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->Iterations(iterations);
      for (RowFormat f : formats)
        benchmark::RegisterBenchmark(
            ("append/" + s.w.name + "/" + p.label() + "/" + (f == RowFormat::f16 ? "f16" : "f32")).c_str(),
            append_bench, s, p, f)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->Iterations(iterations);
      for (RowFormat f : formats)
        benchmark::RegisterBenchmark(
            ("fused/" + s.w.name + "/" + p.label() + "/" + (f == RowFormat::f16 ? "f16" : "f32")).c_str(),
            fused_bench, s, p, f)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->Iterations(iterations);
    }
    benchmark::RunSpecifiedBenchmarks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_append: %s\n", e.what());
    benchmark::Shutdown();
    return 1;
  }
  benchmark::Shutdown();
  return 0;
}
