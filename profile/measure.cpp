#include "profile/measure.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>

#include "kvcache/error.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/timer.hpp"

namespace tkv::prof {
namespace {

constexpr uint64_t kRotateBytes = 256ull << 20;  // well past H100/H200 L2 (50-60 MB)

// Runs the recording back to back until the GPU's clocks have come up: an idle H200 drops its SM
// clock to 345 MHz and takes a few hundred milliseconds of load to return to 1980 MHz, so a short
// warm-up measured the ramp (2-5x slow points, bench/results/2026-11-22-h200-tuning-log.md).
// Runs at least 600 ms (the clock sits low for the first ~250 ms of load, and three runs at the
// low clock agree with each other too), then until three consecutive runs agree within 3%, or 3 s.
void warm_up(vk::Context& ctx, const std::function<void(vk::Recorder&)>& record,
             const std::function<void()>& after = {}) {
  using clock = std::chrono::steady_clock;
  const bool cpu = ctx.caps().device_class == DeviceClass::cpu;
  const auto start = clock::now();
  // The process's first warm-up runs 3 s: points measured in the first seconds after an idle
  // stretch were 2-5x slow even after 600 ms of load (H200, bench/results/ tuning log).
  static bool heated = false;
  const auto min_time = std::chrono::milliseconds(cpu ? 0 : heated ? 600 : 3000);
  const auto max_time = std::chrono::milliseconds(heated ? 3000 : 5000);
  heated = true;
  std::vector<double> runs;
  // The first run builds the pipelines (seconds with a cold pipeline cache, while the GPU idles
  // and its clock drops): the load time counts from its end.
  auto loaded = start;
  for (int i = 0; i < 10000; ++i) {
    const auto t0 = clock::now();
    ctx.run(record);
    if (after) after();
    runs.push_back(std::chrono::duration<double>(clock::now() - t0).count());
    if (i == 0) loaded = clock::now();
    const auto elapsed = clock::now() - loaded;
    if (i < 1 || elapsed < min_time) continue;
    if (cpu || elapsed >= max_time) break;
    const size_t n = runs.size();
    if (n >= 3) {
      const auto [lo, hi] = std::minmax({runs[n - 1], runs[n - 2], runs[n - 3]});
      if (hi <= lo * 1.03) break;
    }
  }
  if (spdlog::should_log(spdlog::level::debug) && !runs.empty())
    spdlog::debug("turboprof warm-up: {} runs in {:.0f} ms, first {:.3f} ms, last {:.3f} ms", runs.size(),
                  1e3 * std::chrono::duration<double>(clock::now() - start).count(), 1e3 * runs.front(),
                  1e3 * runs.back());
}

// Times `repeats` recordings of `one` (the i-th between two timestamps) in one submission, after
// the warm-up; microseconds per recording. `before`, when given, is recorded first in every
// submission, outside the timed spans (a barrier follows it).
Timing time_repeated(vk::Context& ctx, uint32_t repeats, const std::function<void(vk::Recorder&, uint32_t)>& one,
                     const std::function<void(vk::Recorder&)>& before = {}, const std::function<void()>& after = {});

}  // namespace

Timing summarize(std::vector<double> samples) {
  Timing t;
  t.samples_us = samples;
  if (samples.empty()) return t;
  std::sort(samples.begin(), samples.end());
  t.min_us = samples.front();
  t.max_us = samples.back();
  const size_t n = samples.size();
  t.median_us = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return t;
}

namespace {

// (after: runs once each submission completed, e.g. to roll appended tokens back.)
Timing time_repeated(vk::Context& ctx, uint32_t repeats, const std::function<void(vk::Recorder&, uint32_t)>& one,
                     const std::function<void(vk::Recorder&)>& before, const std::function<void()>& after) {
  vk::TimestampPool timer(ctx, 2 * repeats);
  auto record = [&](vk::Recorder& r, bool timed) {
    if (timed) timer.reset(r);
    if (before) {
      before(r);
      r.barrier();
    }
    for (uint32_t i = 0; i < repeats; ++i) {
      if (timed) timer.write(r, 2 * i);
      one(r, i);
      if (timed) timer.write(r, 2 * i + 1);
    }
  };
  warm_up(ctx, [&](vk::Recorder& r) { record(r, false); }, after);
  ctx.run([&](vk::Recorder& r) { record(r, true); });
  if (after) after();
  const auto ns = timer.read_ns();
  std::vector<double> us;
  for (uint32_t i = 0; i < repeats; ++i) us.push_back((ns[2 * i + 1] - ns[2 * i]) / 1000.0);
  return summarize(us);
}

}  // namespace

Timing measure_read(vk::Context& ctx, uint64_t bytes, uint32_t repeats) {
  const uint64_t total = std::max<uint64_t>((bytes + 255) & ~uint64_t(255), 256);
  const uint64_t limit = std::min<uint64_t>(ctx.caps().max_storage_buffer_range, 0xffffffffull) & ~uint64_t(255);
  // Reads larger than one buffer (a ragged batch's K and V together can be) are split into
  // buffers read by consecutive dispatches within one timed span.
  const uint64_t chunks = (total + limit - 1) / limit;
  const uint64_t chunk = ((total + chunks - 1) / chunks + 255) & ~uint64_t(255);
  const uint32_t copies = uint32_t(std::clamp<uint64_t>(kRotateBytes / total, 1, 16));
  std::vector<vk::Buffer> buffers;  // [copy][chunk]
  for (uint32_t i = 0; i < copies * chunks; ++i) buffers.emplace_back(ctx, chunk, vk::MemoryKind::device);
  vk::Buffer sink(ctx, 65536 * 4, vk::MemoryKind::device);
  ctx.run([&](vk::Recorder& r) {
    for (auto& b : buffers) r.fill(b, 0, VK_WHOLE_SIZE, 0x9e3779b9u);  // never zeros
    r.barrier();
  });
  const uint32_t local = 256;
  const uint32_t count = uint32_t(chunk / 16);
  // Enough workgroups for every unit, each invocation streaming at least 8 vectors, 4 in flight.
  const uint32_t groups = std::clamp<uint32_t>(count / (local * 8), 1, 65535);
  const auto& p = ctx.pipelines().get({"stream_read", {local}, 2, 4});
  // The barrier after each read keeps the reads apart (it falls inside the timed span: it
  // costs nothing measurable next to a dispatch).
  return time_repeated(ctx, repeats, [&](vk::Recorder& r, uint32_t i) {
    for (uint64_t c = 0; c < chunks; ++c) {
      r.bind(p, {buffers[(i % copies) * chunks + c], sink}, count);
      r.dispatch(groups);
    }
    r.barrier();
  });
}

std::vector<uint32_t> issue_probe_expected(const IssueProbe& probe, uint32_t id) {
  const bool ints = probe.kind == IssueKind::int32 || probe.kind == IssueKind::mix;
  uint32_t a[8], x = 0;
  float f[8], s = 0;
  for (uint32_t k = 0; k < 8; ++k) {
    a[k] = id * 8u + k + 1u;
    f[k] = float(k + 1) + float(id & 1023u) / 1024.0f;
  }
  for (uint32_t it = 0; it < probe.iters; ++it)
    for (uint32_t b = 0; b < probe.body; ++b)
      for (uint32_t k = 0; k < 8; ++k) {
        if (ints) a[k] = ((a[k] << 5) ^ (a[k] >> 3)) + (0x9e3779b9u * (b + 1u) + k);
        if (probe.kind == IssueKind::alu) a[k] = a[k] ^ (a[k] >> 3) ^ (0x9e3779b9u * (b + 1u) + k);
        if (probe.kind == IssueKind::imad) a[k] = a[k] * 0x9e3779b1u + a[(k + 1u) % 8u];
        if (probe.kind == IssueKind::fp32) f[k] = std::fma(f[k], 0.9990234375f, float(b % 7u + 1u) * 0.0009765625f);
      }
  for (uint32_t k = 0; k < 8; ++k) {
    x ^= a[k];
    s += f[k];
  }
  if (probe.kind == IssueKind::int32 || probe.kind == IssueKind::alu || probe.kind == IssueKind::imad) return {x};
  if (probe.kind == IssueKind::fp32) return {std::bit_cast<uint32_t>(s)};
  // Accumulator k starts at k; each of its MMAs adds 1/16 (exact in float at these sizes).
  const uint32_t mmas = probe.kind == IssueKind::mma ? 8 : probe.mmas;
  float sum = 0;
  for (uint32_t k = 0; k < 8; ++k)
    sum += float(k) + (k < mmas ? float(uint64_t(probe.iters) * probe.body) / 16.0f : 0.0f);
  return {x, std::bit_cast<uint32_t>(sum)};
}

std::string issue_kind_unsupported(const DeviceCaps& caps, IssueKind kind) {
  if (kind != IssueKind::mma && kind != IssueKind::mix) return "";
  if (caps.cooperative_matrix_nv && caps.subgroup_size == 32) return "";
  return std::string(kind == IssueKind::mma ? "mma" : "mix") +
         " needs VK_NV_cooperative_matrix with subgroups of 32, which " + caps.name + " does not have";
}

IssueResult measure_issue(vk::Context& ctx, const IssueProbe& probe, uint32_t repeats) {
  const bool mma = probe.kind == IssueKind::mma || probe.kind == IssueKind::mix;
  if (uint32_t(probe.kind) >= issue_kinds)
    throw Error(ErrorCode::invalid_argument, "issue probe: kind " + std::to_string(uint32_t(probe.kind)) +
                                                 " is not one of the " + std::to_string(issue_kinds) + " kinds");
  if (probe.body == 0 || probe.body > 1024 || probe.iters == 0 || probe.warps_per_unit == 0 ||
      probe.warps_per_unit > 64 || probe.mmas == 0 || probe.mmas > 8)
    throw Error(ErrorCode::invalid_argument,
                "issue probe: body 1-1024, iterations >= 1, 1-64 warps a unit and 1-8 MMAs a copy, got " +
                    std::to_string(probe.body) + ", " + std::to_string(probe.iters) + ", " +
                    std::to_string(probe.warps_per_unit) + ", " + std::to_string(probe.mmas));
  if (const auto why = issue_kind_unsupported(ctx.caps(), probe.kind); !why.empty())
    throw Error(ErrorCode::invalid_argument, "issue probe: " + why);
  const uint32_t local = 128;
  const uint32_t units = ctx.caps().compute_units ? ctx.caps().compute_units : 1;
  const uint32_t groups = std::max<uint32_t>(1, units * probe.warps_per_unit * 32 / local);
  const uint32_t words = mma ? 2 : 1;
  const uint32_t mmas = probe.kind == IssueKind::mma ? 8 : probe.mmas;
  IssueResult r;
  r.invocations = uint64_t(groups) * local;
  const uint64_t copies = uint64_t(probe.iters) * probe.body;
  r.updates = probe.kind == IssueKind::mma ? 0 : r.invocations * copies * 8;
  r.mmas = mma ? r.invocations / 32 * copies * mmas : 0;
  vk::Buffer dst(ctx, r.invocations * 4 * words, vk::MemoryKind::readback);
  const auto& p =
      mma ? ctx.pipelines().get(
                {"issue_probe_mma", {local, probe.kind == IssueKind::mix ? 8u : 0u, probe.body, mmas}, 1, 4})
          : ctx.pipelines().get({"issue_probe", {local, uint32_t(probe.kind), probe.body}, 1, 4});
  r.timing = time_repeated(ctx, repeats, [&](vk::Recorder& rec, uint32_t) {
    rec.bind(p, {dst}, probe.iters);
    rec.dispatch(groups);
    rec.barrier();
  });
  std::vector<uint32_t> out(r.invocations * words);
  vk::download(ctx, dst, 0, std::as_writable_bytes(std::span(out)));
  // Every invocation for a small grid; else a spread of them (the CPU recurrence is slow).
  const uint64_t step = std::max<uint64_t>(1, r.invocations / 4096);
  for (uint64_t id = 0; id < r.invocations; id += step) {
    const auto want = issue_probe_expected(probe, uint32_t(id));
    for (uint32_t w = 0; w < words; ++w) {
      const uint32_t got = out[id * words + w];
      const bool ok = probe.kind == IssueKind::fp32
                          ? std::abs(std::bit_cast<float>(got) - std::bit_cast<float>(want[w])) <=
                                1e-3f * std::abs(std::bit_cast<float>(want[w]))
                          : got == want[w];
      if (!ok)
        throw Error(ErrorCode::vulkan, "issue probe: wrong result: invocation " + std::to_string(id) + " word " +
                                           std::to_string(w) + " is " + std::to_string(got) + ", the CPU's " +
                                           std::to_string(want[w]));
    }
  }
  return r;
}

ReadBandwidth measure_read_bandwidth(vk::Context& ctx, uint32_t repeats) {
  const auto& caps = ctx.caps();
  ReadBandwidth r;
  r.bytes = std::min<uint64_t>({1ull << 30, caps.max_storage_buffer_range & ~uint64_t(255), caps.device_local_bytes() / 8});
  r.gb_per_s = double(r.bytes) / (measure_read(ctx, r.bytes, repeats).median_us * 1e3);
  return r;
}

std::vector<uint32_t> ragged_lengths(uint32_t batch, uint32_t depth, uint32_t m) {
  std::vector<uint32_t> lengths;
  for (uint32_t b = 0; b < batch; ++b) {
    // From depth down to about depth/2, deterministic.
    const uint64_t len = batch == 1 ? depth : depth - uint64_t(depth) * b / (2 * (batch - 1));
    lengths.push_back(std::max<uint32_t>(uint32_t(len), m));
  }
  return lengths;
}

CacheConfig DecodeBench::cache_config(const DecodeSetup& setup) {
  const auto lengths = ragged_lengths(setup.batch, setup.depth, setup.m);
  uint64_t tokens = 0;
  for (uint32_t l : lengths) tokens += l;
  const uint32_t page = 64;
  CacheConfig cfg;
  cfg.layers = setup.layers;
  cfg.kv_heads = setup.kv_heads;
  cfg.head_dim = setup.head_dim;
  cfg.k_type = setup.k_type;
  cfg.v_type = setup.v_type;
  cfg.page_size = page;
  cfg.capacity_tokens = tokens + uint64_t(page) * setup.batch * (1 + (setup.append_room + page - 1) / page);
  cfg.max_sequences = setup.batch;
  if (cfg.layers == 0) {
    const RowLayout k = RowLayout::make(setup.k_type, setup.head_dim), v = RowLayout::make(setup.v_type, setup.head_dim);
    const uint64_t layer_bytes = cfg.capacity_tokens * setup.kv_heads * (k.device_row_bytes() + v.device_row_bytes());
    cfg.layers = uint32_t(std::clamp<uint64_t>(kRotateBytes / std::max<uint64_t>(layer_bytes, 1) + 1, 1, 8));
  }
  return cfg;
}

DecodeBench::DecodeBench(std::shared_ptr<vk::Context> ctx, const DecodeSetup& setup)
    : ctx_(std::move(ctx)), setup_(setup) {
  const auto lengths = ragged_lengths(setup.batch, setup.depth, setup.m);
  const CacheConfig cfg = cache_config(setup);
  setup_.layers = cfg.layers;
  cache_ = std::make_unique<KvCache>(ctx_, cfg);
  decoder_ = std::make_unique<Decoder>(*cache_, setup.q_heads);

  // Random rows (never zeros): one block of tokens, appended repeatedly.
  const uint32_t block = std::min<uint32_t>(2048, setup.depth);
  std::mt19937 rng(42);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> k(size_t(block) * setup.kv_heads * setup.head_dim), v(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = n(rng) * (i % setup.head_dim == 7 ? 20.0f : 1.0f);
    v[i] = n(rng);
  }
  lengths_ = lengths;
  for (uint32_t len : lengths) {
    const SequenceId s = cache_->create_sequence();
    seqs_.push_back(s);
    for (uint32_t layer = 0; layer < setup_.layers; ++layer)
      for (uint32_t done = 0; done < len; done += block)
        cache_->append(s, layer, std::min(block, len - done), {k.data()}, {v.data()});
  }
  const size_t q_elems = decoder_->elements(setup.batch, setup.m);
  q_ = vk::Buffer(*ctx_, q_elems * 4, vk::MemoryKind::device);
  out_ = vk::Buffer(*ctx_, q_elems * 4, vk::MemoryKind::device);
  std::vector<float> q(q_elems);
  for (auto& x : q) x = n(rng);
  vk::upload(*ctx_, q_, 0, std::as_bytes(std::span(q)));
}

DecodeBench::~DecodeBench() = default;

uint64_t DecodeBench::kv_bytes_per_call() const {
  uint64_t tokens = 0;
  for (SequenceId s : seqs_) tokens += cache_->length(s, 0);
  const auto& c = cache_->config();
  return tokens * c.kv_heads *
         (cache_->layout(Side::k).row.device_row_bytes() + cache_->layout(Side::v).row.device_row_bytes());
}

DecodePlan DecodeBench::plan(const DecodeOptions& options) const {
  return decoder_->plan(0, seqs_, setup_.m, options);
}

Timing DecodeBench::time(uint32_t repeats, const DecodeOptions& options) {
  return time_repeated(*ctx_, repeats, [&](vk::Recorder& r, uint32_t i) {
    decoder_->record(r, i % setup_.layers, seqs_, setup_.m, {q_.handle(), 0, q_.size()}, {out_.handle(), 0, out_.size()},
                     options);
  });
}

Timing DecodeBench::time_step(uint32_t layers, uint32_t repeats, const DecodeOptions& options) {
  return time_repeated(*ctx_, repeats, [&](vk::Recorder& r, uint32_t) {
    for (uint32_t layer = 0; layer < layers; ++layer)
      decoder_->record(r, layer % setup_.layers, seqs_, setup_.m, {q_.handle(), 0, q_.size()},
                       {out_.handle(), 0, out_.size()}, options);
  });
}

TracedCalls DecodeBench::trace(uint32_t repeats, const DecodeOptions& options, bool fused) {
  TracedCalls t;
  // Each call's range has room for the plan it makes as it records (timeline_room); the decoder
  // says which grid it stamped.
  const TimelineGrid room = timeline_room(plan(options), setup_.kv_heads, setup_.batch);
  const uint64_t stride = (room.bytes() + 255) & ~uint64_t(255);
  vk::Buffer trace(*ctx_, stride * repeats, vk::MemoryKind::device);
  const uint64_t row_bytes = uint64_t(setup_.batch) * setup_.m * setup_.kv_heads * setup_.head_dim * 4;
  if (fused && !k_new_) {
    if (setup_.append_room < setup_.m)
      fail(ErrorCode::invalid_argument, "timeline: fused calls of " + std::to_string(setup_.m) +
                                            " tokens need append_room " + std::to_string(setup_.m) +
                                            " (the bench has " + std::to_string(setup_.append_room) + ")");
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> rows(row_bytes / 4);
    for (auto* buf : {&k_new_, &v_new_}) {
      for (float& x : rows) x = n(rng);
      *buf = vk::Buffer(*ctx_, row_bytes, vk::MemoryKind::device);
      vk::upload(*ctx_, *buf, 0, std::as_bytes(std::span(rows)));
    }
  }
  DecodeOptions fused_options = options;
  fused_options.fusion = AppendFusion::fused;
  std::vector<TimelineGrid> grids(repeats);
  const auto rollback = [&] {
    if (fused)
      for (size_t b = 0; b < seqs_.size(); ++b) cache_->truncate(seqs_[b], lengths_[b]);
  };
  // Zeros before every submission: a workgroup that leaves early stamps only its start and flags.
  // A fused call appends to the bench's lengths, every one: the sequences rolled back before each
  // (host-side lengths; until session 41 a layer's second call attended one token more, and past
  // 4096 tokens turbo4's plan changes).
  t.timing = time_repeated(
      *ctx_, repeats,
      [&](vk::Recorder& r, uint32_t i) {
        const uint32_t layer = i % setup_.layers;
        decoder_->set_timeline({trace.handle(), stride * i, stride});
        rollback();
        if (fused)
          decoder_->record_append_decode(r, layer, seqs_, setup_.m, {k_new_.handle(), 0, row_bytes},
                                         {v_new_.handle(), 0, row_bytes}, {q_.handle(), 0, q_.size()},
                                         {out_.handle(), 0, out_.size()}, fused_options);
        else
          decoder_->record(r, layer, seqs_, setup_.m, {q_.handle(), 0, q_.size()}, {out_.handle(), 0, out_.size()},
                           options);
        grids[i] = decoder_->recorded_timeline_grid();
        decoder_->set_timeline({});
      },
      [&](vk::Recorder& r) { r.fill(trace, 0, VK_WHOLE_SIZE, 0); }, rollback);
  t.grid = grids.front();
  std::vector<uint32_t> words(stride * repeats / 4);
  vk::download(*ctx_, trace, 0, std::as_writable_bytes(std::span(words)));
  for (uint32_t i = 0; i < repeats; ++i)
    t.calls.push_back(read_timeline(std::span(words).subspan(stride / 4 * i, stride / 4), grids[i]));
  return t;
}

std::vector<float> DecodeBench::run_once(const std::vector<float>& q, const DecodeOptions& options) {
  std::vector<float> out(q.size());
  decoder_->decode(0, seqs_, setup_.m, {q.data(), q.size() * 4}, {out.data(), out.size() * 4}, options);
  return out;
}

}  // namespace tkv::prof
