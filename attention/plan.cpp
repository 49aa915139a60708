#include "attention/plan.hpp"

#include <algorithm>
#include <sstream>

#include "kvcache/error.hpp"
#include "kvcache/layout.hpp"

namespace tkv {
namespace {

uint32_t ceil_div(uint64_t a, uint64_t b) { return uint32_t((a + b - 1) / b); }

// Workgroups that keep every SM/CU busy: about two per unit (llama.cpp's target).
uint32_t target_workgroups(const DeviceCaps& caps) {
  const uint32_t units = caps.compute_units ? caps.compute_units : (caps.device_class == DeviceClass::cpu ? 8 : 32);
  return 2 * units;
}

// Register budget of the P.V phase: rows x vd accumulators per invocation.
uint32_t pick_vd(uint32_t rows, uint32_t v_dim, uint32_t tile) {
  uint32_t vd = 8;
  while (vd > 1 && rows * vd > 32) vd /= 2;
  while (ceil_div(v_dim, vd) > tile) vd *= 2;
  return vd;
}

}  // namespace

uint32_t decode_shared_bytes(const DecodeShape& s, uint32_t tile, uint32_t rows, uint32_t vd) {
  const uint32_t k_dim = RowLayout::make(s.k_type, s.head_dim).stored_dim;
  const uint32_t v_dim = RowLayout::make(s.v_type, s.head_dim).stored_dim;
  const uint32_t qdim = std::max(k_dim, v_dim);
  const uint32_t slices = tile / ceil_div(v_dim, vd);
  const uint32_t psize = std::max(tile * rows, slices * v_dim);
  const uint32_t floats = rows * qdim + psize + (tile / 4) * rows + 3 * rows;
  return 4 * (floats + tile);
}

DecodePlan plan_decode(const DeviceCaps& caps, const DecodeShape& s, uint32_t forced_splits) {
  check_head_dim(s.head_dim);
  if (s.kv_heads == 0 || s.q_heads == 0 || s.q_heads % s.kv_heads != 0)
    fail(ErrorCode::invalid_argument, "decode: " + std::to_string(s.q_heads) + " query heads is not a multiple of " +
                                          std::to_string(s.kv_heads) + " KV heads");
  const uint32_t ratio = s.q_heads / s.kv_heads;
  if (ratio > 16)
    fail(ErrorCode::invalid_argument, "decode: GQA ratio " + std::to_string(ratio) + " is above 16");
  if (s.m == 0 || s.m > 8) fail(ErrorCode::invalid_argument, "decode: m = " + std::to_string(s.m) + " is not in 1..8");
  if (s.batch == 0) fail(ErrorCode::invalid_argument, "decode: empty batch");

  DecodePlan p;
  const uint32_t v_dim = RowLayout::make(s.v_type, s.head_dim).stored_dim;
  const uint32_t rm = ratio * s.m;
  const uint32_t budget = std::min<uint32_t>(caps.max_shared_memory ? caps.max_shared_memory : 16384, 49152);
  // Query rows per workgroup: all of a KV head's rows when they fit (each K/V row read once),
  // else the fewest equal chunks that fit the register and shared-memory budgets.
  for (p.row_chunks = ceil_div(rm, 32);; ++p.row_chunks) {
    p.rows = ceil_div(rm, p.row_chunks);
    p.vd = pick_vd(p.rows, v_dim, p.tile);
    p.shared_bytes = decode_shared_bytes(s, p.tile, p.rows, p.vd);
    if (p.shared_bytes <= budget || p.rows == 1) break;
  }
  if (p.shared_bytes > budget)
    fail(ErrorCode::invalid_argument, "decode: no workgroup shape fits the device's shared memory");

  const uint32_t ctx = std::max<uint32_t>(s.max_context, 1);
  const uint32_t max_splits = ceil_div(ctx, kMinSplitTokens);
  const uint32_t base = s.batch * s.kv_heads * p.row_chunks;
  uint32_t splits = 1;
  if (forced_splits) {
    splits = std::clamp<uint32_t>(forced_splits, 1, max_splits);
    p.reason = "split count forced";
    p.chunk = ceil_div(ctx, splits);
  } else if (ctx <= 4 * p.tile) {
    p.reason = "short context: one split, no reduce pass";
    p.chunk = ctx;
  } else {
    const uint32_t target = target_workgroups(caps);
    splits = std::max<uint32_t>(1, ceil_div(target, base));
    // Each split should stream at least two tiles.
    splits = std::min(splits, ceil_div(ctx, 2 * p.tile));
    // Whole tiles per split, rounding down so that the split count never falls below the target.
    p.chunk = std::max(p.tile, ceil_div(ctx, splits) / p.tile * p.tile);
    p.reason = "fill " + std::to_string(target) + " workgroups (" +
               std::to_string(caps.compute_units ? caps.compute_units : 0) + " compute units) from " +
               std::to_string(base) + " (sequence, KV head, row chunk) groups";
  }
  p.splits = ceil_div(ctx, p.chunk);
  p.workgroups = p.splits * base;
  return p;
}

std::string DecodePlan::describe() const {
  std::ostringstream o;
  o << "splits " << splits << " x " << chunk << " tokens, " << workgroups << " workgroups of " << tile
    << " invocations, " << rows << " query rows each (" << row_chunks << " chunk" << (row_chunks > 1 ? "s" : "")
    << "), vd " << vd << ", " << shared_bytes << " B shared" << (direct() ? ", no reduce pass" : ", + reduce pass")
    << " — " << reason;
  return o.str();
}

}  // namespace tkv
