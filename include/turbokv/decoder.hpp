// turbokv::Decoder: decode attention of new queries against a Cache, for a batch of sequences on
// one layer. q_heads = kv_heads x a GQA ratio of 1 to 16; query head h reads KV head h / ratio.
//
// Shapes (row-major, contiguous), batch = number of sequences, m = 1..8 queries per sequence:
//   q   [batch][m][q_heads][head_dim]   f32 or f16
//   out [batch][m][q_heads][head_dim]   f32 or f16
// The m queries of a sequence are its m newest tokens, already appended to the layer: query i
// attends to positions [0, length - m + i] (and only the last `window` of them when set).
//
// decode() takes host memory, submits to the engine's queue and waits; record() records into the
// host's command buffer from and into the host's buffers, with the rules of "Recording" in
// turbokv/cache.hpp. A decoder owns small scratch buffers: several record() calls may go into one
// command buffer (the engine orders them), and that work must complete before the next decode()
// on the same decoder.
//
// Threads and lifetime: see turbokv/engine.hpp. A decoder keeps its cache alive.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "turbokv/cache.hpp"
#include "turbokv/types.hpp"

namespace tkv {
class Decoder;
}

namespace turbokv {

class Decoder {
 public:
  // An empty handle; every other call on it throws invalid_argument.
  Decoder() = default;
  // Loads the device's dispatch policy (a policy file written by `turboprof tune`, else built-in
  // defaults). Throws Error(invalid_argument) unless q_heads is kv_heads times 1..16.
  Decoder(const Cache& cache, uint32_t q_heads);

  explicit operator bool() const { return decoder_ != nullptr; }
  uint32_t q_heads() const;
  Cache cache() const;
  // Elements of q (and of out) for `batch` sequences with m queries each.
  size_t elements(uint32_t batch, uint32_t m) const;

  // The plan a call with these arguments would run with; no GPU work. Throws like decode().
  Plan plan(uint32_t layer, SequenceList seqs, uint32_t m, const DecodeOptions& options = {}) const;

  // Attention for `seqs` on `layer` into out (host path). Throws Error(invalid_argument) for a
  // layer out of range, m outside 1..8 or above a sequence's length, wrong q size, a short output,
  // bad options; Error(not_found) for an unknown sequence.
  void decode(uint32_t layer, SequenceList seqs, uint32_t m, HostTensor q, HostOutput out,
              const DecodeOptions& options = {});
  // Records the same call into the host's command buffer (record path): q is read from and out
  // written to the host's buffers (offsets multiples of the element size; `bytes` at least the
  // shape's). Nothing is submitted. Throws as decode() does; on error at most a memory barrier
  // has been recorded.
  void record(VkCommandBuffer command_buffer, uint32_t layer, SequenceList seqs, uint32_t m, DeviceSpan q,
              DeviceSpan out, const DecodeOptions& options = {});
  // Appends each sequence's m new tokens to `layer` and decodes their m queries (record path):
  // the outputs and the cache's contents are those of Cache::record_append of the rows to every
  // sequence followed by record(). k and v: [batch][m][kv_heads][head_dim] each, f32 or f16, in
  // the host's buffers; values unchecked (as record_append). One dispatch does both (the append
  // fused into the decode; options.fusion may ask for separate calls, which are also the fallback
  // where the device's shared memory cannot hold the fused kernel). Lengths advance when the call records.
  // The sequences must be distinct. Throws as record() and record_append do; nothing changes then.
  void record_append_decode(VkCommandBuffer command_buffer, uint32_t layer, SequenceList seqs, uint32_t m,
                            DeviceSpan k, DeviceSpan v, DeviceSpan q, DeviceSpan out,
                            const DecodeOptions& options = {});

 private:
  std::shared_ptr<tkv::Decoder> decoder_;
  Cache cache_;
  uint32_t q_heads_ = 0;
  tkv::Decoder& get() const;
  friend struct detail::Access;
};

}  // namespace turbokv
