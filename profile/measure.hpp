// GPU timing for turboprof and bench/: streaming-read bandwidth (the read floor) and decode
// calls, both timed with GPU timestamps after a warm-up, over data rotated so that it is not
// resident in the GPU's L2 cache.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "attention/decoder.hpp"
#include "attention/timeline.hpp"
#include "kvcache/kv_cache.hpp"

namespace tkv::prof {

struct Timing {
  double median_us = 0, min_us = 0, max_us = 0;
  std::vector<double> samples_us;
};
Timing summarize(std::vector<double> samples_us);

// Time of a streaming read of `bytes` bytes (one dispatch each, or one per buffer when `bytes`
// exceed the device's largest buffer), rotating through enough copies to exceed the GPU's caches.
Timing measure_read(vk::Context& ctx, uint64_t bytes, uint32_t repeats);

// The device's read bandwidth: a streaming read as large as the device allows (up to 1 GiB).
struct ReadBandwidth {
  uint64_t bytes = 0;
  double gb_per_s = 0;
};
ReadBandwidth measure_read_bandwidth(vk::Context& ctx, uint32_t repeats);

// The issue-rate probe (shaders/issue_probe.comp, issue_probe_mma.comp): `warps_per_unit` warps
// of 32 invocations an SM/CU (compute_units x warps_per_unit x 32 invocations), each running
// `iters` iterations of a loop of `body` copies of: kind 0 (int), 8 independent integer updates
// (shift, shift, xor, add); 1 (fp32), 8 independent fmas; 2 (mma), 8 independent 16x8x16 f16
// MMAs a subgroup; 3 (mix), 8 integer updates and `mmas` MMAs; 4 (alu), 8 independent
// shift-and-xor updates (two ALU instructions each on NVIDIA); 5 (imad), 8 integer multiply-adds,
// each onto the next accumulator's value (one IMAD each). Kinds 2 and 3 need
// VK_NV_cooperative_matrix. Every invocation's result is checked against the CPU's (kind 1
// within 1e-3: the driver need not fuse the fma) before the time is returned; a mismatch throws.
enum class IssueKind : uint32_t { int32 = 0, fp32 = 1, mma = 2, mix = 3, alu = 4, imad = 5 };
// The kinds' names, by value (turboprof issue --kinds): "int", "fp32", "mma", "mix", "alu", "imad".
inline constexpr const char* issue_kind_names[] = {"int", "fp32", "mma", "mix", "alu", "imad"};
inline constexpr uint32_t issue_kinds = uint32_t(std::size(issue_kind_names));
struct IssueProbe {
  IssueKind kind = IssueKind::int32;
  uint32_t body = 1, iters = 1, warps_per_unit = 16;
  uint32_t mmas = 2;  // mix: MMAs a body copy (1-8)
};
struct IssueResult {
  Timing timing;
  uint64_t invocations = 0;
  uint64_t updates = 0;  // integer or fp32 updates: invocations x iters x body x 8 (mma: 0)
  uint64_t mmas = 0;     // subgroup MMAs: invocations / 32 x iters x body x MMAs a copy
};
IssueResult measure_issue(vk::Context& ctx, const IssueProbe& probe, uint32_t repeats);
// Why `kind` cannot run on this device ("needs VK_NV_cooperative_matrix ..."), or "" when it can.
std::string issue_kind_unsupported(const DeviceCaps& caps, IssueKind kind);
// What invocation `id` of the probe writes (kinds 0, 1, 4, 5: one word; 2-3: the integer word, then
// the sum of its accumulators' first elements as float bits), computed on the CPU.
std::vector<uint32_t> issue_probe_expected(const IssueProbe& probe, uint32_t id);

// Calls timed while their workgroups stamp their phases (Decoder::set_timeline): the GPU
// timestamps' times and each call's records.
struct TracedCalls {
  Timing timing;
  TimelineGrid grid;
  std::vector<std::vector<WorkgroupTimeline>> calls;  // [call][workgroup]
};

struct DecodeSetup {
  KvType k_type = KvType::turbo3;
  KvType v_type = KvType::turbo3;
  uint32_t q_heads = 32, kv_heads = 8, head_dim = 128;
  uint32_t batch = 1;
  uint32_t depth = 4096;  // tokens of the longest sequence; batches are ragged below it
  uint32_t m = 1;
  uint32_t layers = 0;    // 0: enough layers to rotate past the L2 cache (at most 8)
  uint32_t append_room = 0;  // tokens per sequence and layer left free for appended tokens
};

// A cache filled with random rows to `depth`, and device buffers for q and out.
class DecodeBench {
 public:
  DecodeBench(std::shared_ptr<vk::Context> ctx, const DecodeSetup& setup);
  ~DecodeBench();
  // The cache the bench would allocate (layers resolved): KvCache::validate(caps, it) tells
  // whether a point fits before anything is measured.
  static CacheConfig cache_config(const DecodeSetup& setup);

  const DecodeSetup& setup() const { return setup_; }
  KvCache& cache() { return *cache_; }
  Decoder& decoder() { return *decoder_; }
  const std::vector<SequenceId>& sequences() const { return seqs_; }
  // Stored K/V bytes one call reads (one layer, every sequence of the batch).
  uint64_t kv_bytes_per_call() const;
  DecodePlan plan(const DecodeOptions& options = {}) const;
  // Times `repeats` calls (each on the next layer), after one warm-up submission.
  Timing time(uint32_t repeats, const DecodeOptions& options = {});
  // Times `repeats` decode steps: `layers` calls (a model's layers, rotating over the bench's
  // cache layers) recorded back to back in one command buffer, as an engine records a step.
  Timing time_step(uint32_t layers, uint32_t repeats, const DecodeOptions& options = {});
  // time(), with the timeline kernels (Decoder::set_timeline): needs Context::device_clock().
  // fused: append-decode calls (Decoder::record_append_decode, m random tokens per sequence; the
  // sequences go back to their lengths before each call), which need append_room >= m.
  TracedCalls trace(uint32_t repeats, const DecodeOptions& options = {}, bool fused = false);
  // Runs one call and returns its output (f32), for checks.
  std::vector<float> run_once(const std::vector<float>& q, const DecodeOptions& options = {});

 private:
  std::shared_ptr<vk::Context> ctx_;
  DecodeSetup setup_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<Decoder> decoder_;
  std::vector<SequenceId> seqs_;
  std::vector<uint32_t> lengths_;
  vk::Buffer q_, out_;
  vk::Buffer k_new_, v_new_;  // trace(fused): the appended rows, f32 [batch][m][kv_heads][head_dim]
};

// Lengths of a ragged batch whose longest sequence has `depth` tokens.
std::vector<uint32_t> ragged_lengths(uint32_t batch, uint32_t depth, uint32_t m);

}  // namespace tkv::prof
