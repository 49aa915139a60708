// Decode attention over the compressed cache for a batch of sequences on one layer.
//
// Shapes (row-major, contiguous):
//   q   [batch][m][q_heads][head_dim]   f32 or f16: the m newest tokens of each sequence, which
//                                       are already appended; query i attends to positions
//                                       [0, length - m + i] (and only the last `window` of them)
//   out [batch][m][q_heads][head_dim]   f32 or f16
// q_heads = kv_heads * ratio (GQA, ratio 1..16); query head h reads KV head h / ratio.
//
// Thread safety: one thread at a time per Decoder (it owns scratch buffers); several Decoders
// may share a cache only if the caller serialises them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "attention/plan.hpp"
#include "attention/policy.hpp"
#include "attention/timeline.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/buffer.hpp"

namespace tkv {

enum class TensorFormat : uint32_t { f32 = 0, f16 = 1 };

// How Decoder::record_append_decode appends: in the decode dispatch (fused), or as an append
// and then a decode call (separate); automatic: fused wherever the kernel with the tail fits the
// device's shared memory (H100, llama8b, every type from 4K to 32K: fused faster, e.g. turbo3 4K
// 541 against 688 us per 32-layer step; bench/results/2026-11-25-h100-session10, run7).
enum class AppendFusion : uint32_t { automatic = 0, fused = 1, separate = 2 };

// Fields that name a choice (variant other than automatic, non-zero knobs) override the dispatch
// policy and the environment (attention/policy.hpp).
struct DecodeOptions {
  float scale = 0.0f;     // softmax scale; 0: 1/sqrt(head_dim)
  float softcap = 0.0f;   // logit soft-cap: cap * tanh(s / cap); 0: off
  uint32_t window = 0;    // sliding window: attend to the last `window` positions; 0: off
  uint32_t splits = 0;    // split count; 0: the dispatch policy's (or the plan's) choice
  Variant variant = Variant::automatic;  // dequant implementation; automatic: the dispatch policy's
  // Profiling only: modes 1-4 give wrong outputs on purpose (see attention/variants.hpp).
  ProfileMode profile_mode = ProfileMode::full;
  // Tuning overrides (0: the dispatch policy's or the plan's choice); turboprof tune measures them.
  uint32_t dims_per_lane = 0;
  uint32_t unroll = 0;
  uint32_t subgroups = 0;  // tc only: subgroups per workgroup, 4, 6 or 8 (others ignore it)
  std::optional<bool> rows16;  // tc only: the query rows on the MMAs' 16-row side (PlanRequest::rows16)
  // record_append_decode only.
  AppendFusion fusion = AppendFusion::automatic;
};

struct HostTensor {
  const void* data = nullptr;
  size_t bytes = 0;
  TensorFormat format = TensorFormat::f32;
};

struct HostOutput {
  void* data = nullptr;
  size_t bytes = 0;
  TensorFormat format = TensorFormat::f32;
};

// A range of a device buffer (the caller's or ours).
struct DeviceTensor {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;  // bytes; a multiple of the element size
  uint64_t bytes = 0;   // bytes available from offset
  TensorFormat format = TensorFormat::f32;
};

// The request a call plans with, and why: the policy's choice for the shape, then the
// environment's overrides (apply_environment), then the fields of `options` that name a choice
// (variant other than automatic; splits, dims_per_lane, unroll other than 0); the profile mode
// always comes from `options`. Pure but for reading the environment.
PolicyChoice resolve_request(const DispatchPolicy& policy, const DecodeShape& shape, const DecodeOptions& options);

class Decoder {
 public:
  // Takes the dispatch policy for the cache's device: its tuned policy file when there is a
  // valid one (DispatchPolicy::for_device), else the built-in defaults; a malformed file is
  // logged as a warning, never fatal.
  Decoder(KvCache& cache, uint32_t q_heads);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  uint32_t q_heads() const { return q_heads_; }
  // Elements of q (and of out) for a batch of `batch` sequences with m queries each.
  size_t elements(uint32_t batch, uint32_t m) const;

  const DispatchPolicy& policy() const { return policy_; }
  void set_policy(DispatchPolicy policy) { policy_ = std::move(policy); }

  // The plan the call would run with (no GPU work): resolve_request, then plan_decode; the
  // plan's reason starts with the policy's.
  DecodePlan plan(uint32_t layer, std::span<const SequenceId> seqs, uint32_t m, const DecodeOptions& options = {}) const;

  // Uploads q, records, submits, waits, downloads out.
  void decode(uint32_t layer, std::span<const SequenceId> seqs, uint32_t m, HostTensor q, HostOutput out,
              const DecodeOptions& options = {});
  // Records the call into the caller's command buffer: q and out are device buffers. Scratch
  // state is per Decoder: several calls may be recorded into one command buffer (barriers are
  // recorded between them), and that command buffer must complete before the next record.
  void record(vk::Recorder& r, uint32_t layer, std::span<const SequenceId> seqs, uint32_t m, DeviceTensor q,
              DeviceTensor out, const DecodeOptions& options = {});
  // Appends each sequence's m new tokens to `layer` and decodes their m queries, in one dispatch
  // (shaders/append_tail.glsl): the outputs and the cache's contents are those of
  // KvCache::record_append of the rows to every sequence followed by record(), without the
  // append's two dispatches and barriers. k and v: [batch][m][kv_heads][head_dim] each, f32 or
  // f16, in device buffers; their values are not checked (as record_append). The lengths advance
  // when the call records (see KvCache::record_append). The sequences must be distinct. Throws as
  // record() does, and Error(capacity) when the pages run out; nothing changes then.
  void record_append_decode(vk::Recorder& r, uint32_t layer, std::span<const SequenceId> seqs, uint32_t m,
                            DeviceTensor k, DeviceTensor v, DeviceTensor q, DeviceTensor out,
                            const DecodeOptions& options = {});

  // Profiling (turboprof timeline): while `trace.buffer` is set, the calls recorded run the
  // kernels that stamp each workgroup's phases into `trace` (attention/timeline.hpp: at least
  // timeline_grid(plan, ...).bytes() from `offset`, a multiple of 256; fused append-decode calls,
  // whose tails stamp too, timeline_grid(plan, ..., true)). Needs Context::device_clock().
  // VK_NULL_HANDLE: off (the default).
  void set_timeline(DeviceTensor trace);
  // The grid of the last call recorded while the timeline was on: where its stamps lie.
  TimelineGrid recorded_timeline_grid() const { return timeline_grid_; }

 private:
  // record() and record_append_decode(): new_k / new_v null for a plain decode. False (nothing
  // recorded) when the fused kernel would not fit the device's shared memory.
  bool record_dispatch(vk::Recorder& r, uint32_t layer, std::span<const SequenceId> seqs, uint32_t m, DeviceTensor q,
                       DeviceTensor out, const DecodeOptions& options, const DeviceTensor* new_k,
                       const DeviceTensor* new_v);
  DecodeShape shape(uint32_t layer, std::span<const SequenceId> seqs, uint32_t m) const;
  // The recorder's context, the options, q's and out's formats (`call` names the caller).
  void check_call(const vk::Recorder& r, const DecodeOptions& options, const DeviceTensor& q, const DeviceTensor& out,
                  const char* call) const;
  DecodePlan make_plan(const DecodeShape& shape, const DecodeOptions& options) const;
  // A fused append-decode call's plan, from the appended shape `s`, which becomes the shape the
  // plan's kernel plans on (fused_append_shape).
  DecodePlan make_fused_plan(DecodeShape& s, const DecodeOptions& options) const;
  // Makes `buffer` hold at least `bytes` (a larger one is kept); true when it made a new one.
  bool ensure(vk::Buffer& buffer, uint64_t bytes, vk::MemoryKind kind);

  KvCache& cache_;
  uint32_t q_heads_;
  DispatchPolicy policy_;
  // The scalar kernel's SPIR-V specialized on the host (kvcache/vk/specialize.hpp); read from
  // TKV_SPECIALIZE when the decoder is made ("0": the driver specializes it, for comparisons).
  bool host_specialize_ = true;
  vk::Buffer seq_info_, partials_, arrivals_, q_staging_, out_staging_;
  DeviceTensor timeline_;  // set_timeline's range; buffer VK_NULL_HANDLE: off
  TimelineGrid timeline_grid_;
  // Buffers replaced by larger ones while commands recorded earlier may still use them; freed
  // by the next decode(), which waits for its own submission.
  std::vector<vk::Buffer> retired_;
};

}  // namespace tkv
