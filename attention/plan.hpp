// Planning a decode call: from the device's capability record and the call's shape to the
// kernel's workgroup shape and split-K schedule. Pure: no GPU needed, so it is tested on
// capability records written by hand. Run (attention/decoder.hpp) only records what a plan says.
#pragma once

#include <cstdint>
#include <string>

#include "kvcache/types.hpp"
#include "kvcache/vk/caps.hpp"

namespace tkv {

struct DecodeShape {
  KvType k_type = KvType::f16;
  KvType v_type = KvType::f16;
  uint32_t head_dim = 128;
  uint32_t q_heads = 32;
  uint32_t kv_heads = 8;
  uint32_t batch = 1;
  uint32_t m = 1;              // queries per sequence
  uint32_t max_context = 1;    // longest sequence of the batch, in tokens
};

struct DecodePlan {
  uint32_t tile = 128;         // tokens per tile = invocations per workgroup
  uint32_t rows = 1;           // query rows per workgroup (GQA heads x queries, or a chunk of them)
  uint32_t row_chunks = 1;     // workgroups that share one KV head's rows
  uint32_t vd = 1;             // output dims per invocation in the P.V phase
  uint32_t splits = 1;         // splits per sequence (flash-decoding); 1: no reduce pass
  uint32_t chunk = 1;          // tokens per split
  uint32_t shared_bytes = 0;   // shared memory per workgroup
  uint32_t workgroups = 0;     // decode workgroups launched (the grid)
  std::string reason;          // why these splits

  bool direct() const { return splits == 1; }
  std::string describe() const;
};

// Splits are at least this many tokens; the largest split count is ceil(max_context / this).
inline constexpr uint32_t kMinSplitTokens = 16;

// Throws invalid_argument when the shape cannot be planned (GQA ratio, head dim, m).
// forced_splits > 0 overrides the split count (clamped to [1, ceil(max_context / kMinSplitTokens)]).
DecodePlan plan_decode(const DeviceCaps& caps, const DecodeShape& shape, uint32_t forced_splits = 0);

// Shared memory the decode kernel declares for these constants (mirrors shaders/decode.comp).
uint32_t decode_shared_bytes(const DecodeShape& shape, uint32_t tile, uint32_t rows, uint32_t vd);

}  // namespace tkv
