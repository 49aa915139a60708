// Planning a decode call: from the device's capability record and the call's shape to the
// kernel's workgroup shape and split-K schedule. Pure: no GPU needed, so it is tested on
// capability records written by hand. Run (attention/decoder.hpp) only records what a plan says.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/variants.hpp"
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
  uint32_t page_size = 16;     // the cache's tokens per page (a step never straddles a page)
  // Each sequence's length (a ragged batch); empty: every sequence max_context long. The split
  // planner fills the GPU from the workgroups that hold tokens, so short sequences count less.
  std::vector<uint32_t> lengths;
  // Workgroups of the same dispatch besides the splits', per (sequence, KV head, row chunk)
  // group (the scalar kernel's fused append tails, one each): the split planner leaves them room
  // in the first wave.
  uint32_t reserved_per_group = 0;
  // The dispatch also appends the m new tokens (a fused append-decode call, fused_append_shape).
  bool appends = false;
};

// What the caller asks for beyond the shape; zero / automatic: the plan's choice.
struct PlanRequest {
  uint32_t splits = 0;
  Variant variant = Variant::automatic;
  ProfileMode mode = ProfileMode::full;
  uint32_t dims_per_lane = 0;  // tuning override: 4, 8, 16 or 32
  uint32_t unroll = 0;         // tuning override: 1, 2, 4 or 8
  uint32_t subgroups = 0;      // tuning override, tc only: subgroups per workgroup, 4, 6 or 8
  // Tuning override, tc only: the query rows on the MMAs' 16-row side (up to 16 rows a workgroup;
  // B fragments in mma's order); unset: the plan's choice (more than 8 rows).
  std::optional<bool> rows16;
  // Tuning override, tc with q8_0 V in the one-row loop: V one tile ahead (the kernel's
  // V_AHEAD_ROW); unset: the plan's choice (more than two tiles a subgroup).
  std::optional<bool> v_ahead;
};

struct DecodePlan {
  uint32_t workgroup = 128;    // invocations per workgroup
  uint32_t dims_per_lane = 16; // DPL: consecutive dims of a row each lane owns
  uint32_t team = 8;           // lanes per token (a power of two within one subgroup)
  uint32_t unroll = 4;         // tokens per team per step
  uint32_t rows = 1;           // query rows per workgroup (GQA heads x queries, or a chunk of them)
  uint32_t row_chunks = 1;     // workgroups that share one KV head's rows
  uint32_t splits = 1;         // splits per sequence (flash-decoding); 1: no partials
  uint32_t chunk = 1;          // tokens per split
  uint32_t shared_bytes = 0;   // shared memory per workgroup
  uint32_t workgroups = 0;     // decode workgroups launched (the grid)
  bool rows16 = false;         // tc: the query rows on the MMAs' 16-row side (shaders/decode_tc.comp)
  // tc: turbo4's table holds its negative bits too (256 entries of 16 copies, 32 KB; 64 without),
  // where it is the only table: one workgroup an SM, of eight subgroups. The kernel's TAB256.
  bool tab256 = false;
  // tc, q8_0 V in the one-row loop: V one tile ahead (plan_decode); true wherever it does not apply.
  bool v_ahead = true;
  uint32_t per_unit = 0;       // workgroups a compute unit the splits were planned for (0: not filled)
  Variant variant = Variant::mag4;
  ProfileMode mode = ProfileMode::full;
  std::string reason;          // why these splits and this variant

  // One split writes the output itself, except on the tensor cores (tc), whose single split still
  // goes through partials and the merge (shaders/split_merge.glsl).
  bool direct() const { return splits == 1 && variant != Variant::tc; }
  // Tokens staged and computed per step; a divisor of the page size, and every split's length
  // (chunk) is a multiple of it.
  uint32_t tokens_per_step() const { return workgroup / team * unroll; }
  std::string describe() const;
};

// The largest split count is ceil(max_context / tokens_per_step()): a split is whole steps.

// The shape a fused append-decode call (Decoder::record_append_decode) plans on for a kernel, from
// the shape of its sequences with the m new tokens appended. The tc kernel's splits cover every
// token, and those that hold new ones quantize and store them first (shaders/decode_tc.comp): the
// appended shape. The scalar kernel's tails (shaders/append_tail.glsl) attend to the new tokens
// and take one workgroup per group: the splits cover the old tokens.
DecodeShape fused_append_shape(DecodeShape appended, Variant variant);

// Shared memory the scalar kernel's fused append tail adds to its plan (shaders/append_tail.glsl
// and quantize_row.glsl, compiled into every workgroup of a fused dispatch): a copy of the
// quantizer's arrays (the row, its codes and scales), then the new tokens' scores, m and l per
// row. The tc kernel has no tail (its splits keep the quantizer's arrays in the region that
// decode_shared_bytes counts for a fused shape): 0.
uint32_t fused_tail_shared_bytes(const DecodePlan& plan);

// Throws invalid_argument when the shape cannot be planned (GQA ratio, head dim, m, a variant
// whose tables do not fit the device's shared memory).
DecodePlan plan_decode(const DeviceCaps& caps, const DecodeShape& shape, const PlanRequest& request = {});

// Why the tensor-core variant (tc, shaders/decode_tc.comp) cannot run a shape on a device, in
// words; "" when it can: VK_NV_cooperative_matrix with 16x8x16 f16 MMAs and mma.m16n8k16
// fragments, subgroups of 32, turbo K and V with one rotation group per row (head dim <= 64 or
// 128) or f16 / q8_0 rows of head dim 64 or 128 (either side), profile mode 0 or 1.
std::string tensor_core_problem(const DeviceCaps& caps, const DecodeShape& shape, ProfileMode mode = ProfileMode::full);
// Why the tc kernel cannot take its query rows on the MMAs' 16-row side here; empty: it can.
std::string rows16_problem(const DeviceCaps& caps, const DecodeShape& shape, const PlanRequest& request);

// Shared memory the decode kernel declares for a plan (mirrors shaders/decode.comp).
uint32_t decode_shared_bytes(const DeviceCaps& caps, const DecodeShape& shape, const DecodePlan& plan);

}  // namespace tkv
