#include "attention/plan.hpp"

#include <algorithm>
#include <sstream>

#include "kvcache/error.hpp"
#include "kvcache/layout.hpp"

namespace tkv {
namespace {

// Workgroups per compute unit the split planner aims for (H200: 4 beat 8 by 8-29% at 32K and 128K,
// where more splits cost more in partials and their merge than they gained in occupancy), and 2
// where 4 would cut splits shorter than kMinStepsForMax steps: the group's last split merges the
// others (shaders/split_merge.glsl), one round trip to L2 per 16 splits, and each split pays its
// own prologue. H100, f16 llama8b at forced split counts (session 7): 4K 21.5 us with 64 splits
// (2 steps each) against 18.5 with 32; 8K 28.1 (64) against 25.9 (32); 16K 40.2 with either; 32K
// 62.4 with 64 (16 steps) against 66.2 with 32.
constexpr uint32_t kWorkgroupsPerUnit = 4, kWorkgroupsPerUnitShortSplits = 2;
constexpr uint32_t kMinStepsForMax = 16;

uint32_t ceil_div(uint64_t a, uint64_t b) { return uint32_t((a + b - 1) / b); }
uint32_t pow2_ceil(uint32_t v) {  // smallest power of two >= v
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Workgroups that keep every SM/CU busy: the kernel streams without workgroup barriers and holds
// few registers, so several workgroups per unit run at once and hide the memory latency.
// The tensor-core kernel holds 160-177 registers per invocation: an SM holds 3 of its 128-wide
// workgroups when the registers allow (<= 168) and the shared memory does. H100, session 6, forced
// split counts: at 128K turbo2 (162 registers, 12.4 KB) ran 7% faster with 3 x 132 workgroups
// than with 2 x 132 (88.7 against 95.6 us), and turbo3 6% once K and V shared one table (12.4 KB;
// with 20 KB it did not fit a third: a second wave, 133 us); at 32K equal, at 8K 7% slower (each
// split's fixed cost, on splits of a few tiles). turbo4 (177 registers: 2 fit, so 392 workgroups
// run as 1.5 waves) was still 3% faster with 3 x 132 (126.0 against 130.5 us; not understood).
// (Session 4, before the tiles: 4 x 132 was 9-16% slower than 2 x 132.)
constexpr uint32_t kTensorCoreWorkgroupsPerUnit = 2, kTensorCoreWorkgroupsPerUnitMax = 3;
// Shared memory NVIDIA's driver gives the tc kernel an SM, with 1 KB more reserved a workgroup:
// the most measured to fit. H100: two of 23.5 KB and three of 12.4 KB ran at once, two of 27.2 KB
// (session 21) and three of 20 KB (session 6) did not (a second wave of workgroups).
constexpr uint32_t kReservedSharedPerWorkgroup = 1024;
constexpr uint32_t kTensorCoreSharedPerUnit = 2 * (24064 + kReservedSharedPerWorkgroup);  // (23.5 KB)
constexpr uint32_t kTensorCoreMinStepsForMax = 32;  // splits at least this long take the third
constexpr uint32_t kTensorCoreWideMinSteps = 8;     // wide (5-8 rows) or six-subgroup workgroups on splits this long
uint32_t compute_units(const DeviceCaps& caps) {
  return caps.compute_units ? caps.compute_units : (caps.device_class == DeviceClass::cpu ? 8 : 32);
}

uint32_t min_subgroup(const DeviceCaps& caps) { return caps.smallest_subgroup(); }

uint32_t codebook_size(KvType t) { return t == KvType::turbo2 ? 4 : t == KvType::turbo3 ? 8 : 16; }

// The decode kernel reads a split's page numbers into shared memory (MAX_SPLIT_PAGES there).
constexpr uint32_t kMaxSplitPages = 512;

// Words of one copy of the fused append's quantizer arrays (shaders/quantize_row.glsl): the row's
// 256 floats, its 256 codes and 8 scales.
constexpr uint32_t kQuantizerCopyWords = 256 + 256 + 8;

// Registers: a lane holds rows x DPL query values and as many output accumulators.
constexpr uint32_t kLaneRegisterBudget = 64;

}  // namespace

std::string tensor_core_problem(const DeviceCaps& caps, const DecodeShape& s, ProfileMode mode) {
  if (!caps.cooperative_matrix_nv)
    return "device " + caps.name + " has no VK_NV_cooperative_matrix (enabled)";
  if (std::find(caps.cooperative_matrix_shapes.begin(), caps.cooperative_matrix_shapes.end(),
                "16x8x16 f16*f16+f32 subgroup") == caps.cooperative_matrix_shapes.end())
    return "device " + caps.name + " offers no 16x8x16 f16*f16+f32 subgroup cooperative matrix";
  if (!caps.mma_fragment_layout)
    return "the cooperative-matrix fragments of " + caps.name + " are not laid out as mma.m16n8k16";
  if (caps.subgroup_size != 32 || (caps.min_subgroup_size && caps.min_subgroup_size != 32))
    return "it needs subgroups of exactly 32 invocations";
  const RowLayout k = RowLayout::make(s.k_type, s.head_dim), v = RowLayout::make(s.v_type, s.head_dim);
  for (const RowLayout* l : {&k, &v}) {
    if (traits(l->type).is_turbo && l->groups != 1)
      return "head dim " + std::to_string(s.head_dim) + " has " + std::to_string(l->groups) +
             " rotation groups per row; it handles one (head dim <= 64 or 128)";
    // (f16 and q8_0 rows go straight into the fragments: whole 16-dim blocks, 8- or 16-byte loads)
    if (!traits(l->type).is_turbo && s.head_dim != 64 && s.head_dim != 128)
      return std::string(type_name(l->type)) + " rows of head dim " + std::to_string(s.head_dim) +
             ": it handles 64 and 128";
  }
  if (k.stored_dim != v.stored_dim)
    return "K and V rows of " + std::to_string(k.stored_dim) + " and " + std::to_string(v.stored_dim) +
           " elements: it needs one length";
  if (mode != ProfileMode::full && mode != ProfileMode::zero)
    return "it offers profile modes 0 and 1 only";
  return "";
}

std::string rows16_problem(const DeviceCaps& caps, const DecodeShape&, const PlanRequest& request) {
  if (!caps.mma_b_native) return "device " + caps.name + " has no B fragments in mma.m16n8k16's order (KHR matrices)";
  if (request.subgroups && request.subgroups != 4 && request.subgroups != 8)
    return "it takes 4 or 8 subgroups a workgroup";
  return "";
}

uint32_t decode_shared_bytes(const DeviceCaps& caps, const DecodeShape& s, const DecodePlan& p) {
  if (p.variant == Variant::tc) {  // mirrors shaders/decode_tc.comp
    const uint32_t dim = RowLayout::make(s.k_type, s.head_dim).stored_dim;
    // One region for the tables (16 copies of 8-byte entries: one per pair field, turbo2 16,
    // turbo3 64; turbo4 64 magnitude pairs, or 256 with their signs: tab256), then the
    // subgroups' outputs, then the merged rows;
    // Qb's 8 f16 columns (16 for more than 4 rows: hi and lo apart); the page list; the query
    // maxima of the subgroups that hold rows (8 slots); the merge's flag and sums
    // (shaders/split_merge.glsl).
    // (K and V of one type share a table.)
    auto entries = [&](KvType t) -> uint32_t {
      return !traits(t).is_turbo ? 0 : t == KvType::turbo2 ? 16 : t == KvType::turbo3 || !p.tab256 ? 64 : 256;
    };
    const uint32_t tables = entries(s.k_type) + (s.k_type == s.v_type ? 0 : entries(s.v_type));
    const uint32_t subgroups = p.workgroup / 32;
    // (rows16 folds half the subgroups' outputs into the others' first: half the slots)
    const uint32_t oslots = p.rows16 ? subgroups / 2 : subgroups;
    // (A fused dispatch's splits that hold new tokens quantize them during the prologue, in two
    // copies of the quantizer's arrays after the tables, four for rows16 and more than 4 rows: a
    // row's values and codes, 8 scales.)
    const uint32_t copies = p.rows16 || p.rows > 4 ? 4 : 2;
    // (Then the fresh words of the turbo sides: 33 per new row, K's rows then V's.)
    auto fresh_words = [&](KvType t) -> uint32_t { return traits(t).is_turbo ? 33 * s.m : 0; };
    const uint32_t quantizer =
        s.appends ? 8 * ((copies * (2 * dim + 8) + fresh_words(s.k_type) + fresh_words(s.v_type) + 1) / 2) : 0;
    const uint32_t region = std::max(8 * 16 * tables + quantizer,
                                     8 * ((oslots * p.rows * dim + subgroups * p.rows * 2 + 1) / 2));
    // (rows16: Q's 16 rows' hi halves, then their lo halves)
    return region + 2 * dim * (p.rows16 || p.rows > 4 ? 16 : 8) + 4 * kMaxSplitPages + 4 * 8 + 4 + 4 * p.rows;
  }
  const uint32_t k_dim = RowLayout::make(s.k_type, s.head_dim).stored_dim;
  const uint32_t v_dim = RowLayout::make(s.v_type, s.head_dim).stored_dim;
  const uint32_t qdim = std::max(k_dim, v_dim);
  const uint32_t max_subgroups = p.workgroup / min_subgroup(caps);
  const bool qlut = p.variant == Variant::qlut && traits(s.k_type).is_turbo && p.mode != ProfileMode::zero &&
                    p.mode != ProfileMode::norm_only;
  const uint32_t tsize = qlut ? p.rows * k_dim * codebook_size(s.k_type) : 1;
  // Per team: the step's scores, unroll x rows padded to a power of two, at least 4.
  const uint32_t scores = p.workgroup / p.team * std::max<uint32_t>(4, p.unroll * pow2_ceil(p.rows));
  // smem: a table of value pairs per turbo2 / turbo3 side (vec2 entries); turbo4's
  // 16-entry codebooks (32 floats) are declared always.
  auto pairs = [&](KvType t) -> uint32_t {
    if (p.variant != Variant::smem || (t != KvType::turbo2 && t != KvType::turbo3)) return 1;
    return t == KvType::turbo3 ? 64 : 16;
  };
  // (+ the merge's flag and per-row sums, shaders/split_merge.glsl)
  return 4 * (p.rows * qdim + max_subgroups * p.rows * 2 + tsize + scores + kMaxSplitPages + 32 + 1 + p.rows) +
         8 * (pairs(s.k_type) + pairs(s.v_type));
}

namespace {

// The split-K schedule of a plan whose workgroup shape is set: chunk, splits, workgroups, reason.
// Returns the workgroups per compute unit it filled (0 where the splits were forced or one).
uint32_t plan_splits(const DeviceCaps& caps, const DecodeShape& s, const PlanRequest& request, DecodePlan& p) {
  uint32_t per_unit = 0;
  const uint32_t ctx = std::max<uint32_t>(s.max_context, 1);
  const uint32_t step = p.tokens_per_step();
  const uint32_t max_splits = ceil_div(ctx, step);
  const uint32_t base = s.batch * s.kv_heads * p.row_chunks;
  if (request.splits) {
    const uint32_t splits = std::clamp<uint32_t>(request.splits, 1, max_splits);
    p.reason = "split count forced";
    p.chunk = ceil_div(ceil_div(ctx, splits), step) * step;
  } else if (ctx <= 8 * step) {
    p.reason = p.variant == Variant::tc ? "short context: one split" : "short context: one split, no partials";
    p.chunk = ceil_div(ctx, step) * step;
  } else {
    // The shortest split (whole steps, at least two) whose workgroups that hold tokens fit one
    // wave of `target`: a few workgroups beyond what the units hold at once run as a second wave
    // (H200 at 32K: 69 splits x 8 heads = 552 workgroups took 30% longer than 64 x 8 = 512). A
    // ragged batch's short sequences need fewer splits, which leaves room for shorter splits.
    const uint64_t per_seq = base / s.batch;  // KV heads x row chunks
    auto workgroups = [&](uint32_t chunk) {
      uint64_t n = 0;
      if (s.lengths.empty()) n = uint64_t(s.batch) * ceil_div(ctx, chunk);
      for (uint32_t len : s.lengths) n += ceil_div(std::max<uint32_t>(len, 1), chunk);
      return n * per_seq;
    };
    auto steps_for = [&](uint64_t target, uint32_t fewest = 2) {
      uint32_t lo = fewest, hi = std::max<uint32_t>(fewest, ceil_div(ctx, step));  // in steps
      while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (workgroups(mid * step) <= target) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
    // The most workgroups per unit where the splits stay long enough, else fewer. (Wide tc
    // workgroups, 184-200 registers, fit two: H100 at m 8 32K, 384 of them took 118.8 us, 256
    // 86.9.)
    // (rows16 workgroups of 8 subgroups, 39 KB, fit one: as many warps as two of 4.)
    // (A fused dispatch's workgroups all carry its tail's shared memory: without it the plan put
    // three an SM where two fit, m 1 at 128K, and two where one fits, the wide form's 27.3 KB.)
    const bool tc = p.variant == Variant::tc;
    const uint32_t tail = s.reserved_per_group ? fused_tail_shared_bytes(p) : 0;
    const uint32_t tc_fit =
        std::max<uint32_t>(1, kTensorCoreSharedPerUnit / (p.shared_bytes + tail + kReservedSharedPerWorkgroup));
    const uint32_t tc_max =
        std::min(tc_fit, p.rows > 4 || p.rows16 ? kTensorCoreWorkgroupsPerUnit : kTensorCoreWorkgroupsPerUnitMax);
    auto room = [&](uint32_t per_unit) {
      const uint32_t all = per_unit * compute_units(caps), reserved = s.reserved_per_group * base;
      return std::max<uint32_t>(all > reserved ? all - reserved : 0, 1);
    };
    per_unit = tc ? tc_max : kWorkgroupsPerUnit;
    uint32_t target = room(per_unit);
    uint32_t steps = steps_for(target);
    if (steps < (tc ? kTensorCoreMinStepsForMax : kMinStepsForMax)) {
      per_unit = tc ? std::min(tc_max, kTensorCoreWorkgroupsPerUnit) : kWorkgroupsPerUnitShortSplits;
      target = room(per_unit);
      steps = steps_for(target);
    }
    if (tc && per_unit > 1 && steps == 2 && workgroups(steps * step) < compute_units(caps)) {
      // Splits of one step where two-step ones leave SMs idle (not with turbo4's 32 KB table,
      // one workgroup an SM: unmeasured). H200, session 52 runs 4-5, us per call, llama8b m 1
      // 1K, 8 splits of two steps (64 workgroups) / 16 of one: f16 10.2 / 9.55 and 10.5 / 9.6,
      // q8_0 10.0 / 9.5 and 10.1 / 9.1, turbo2 11.15 / 10.35 and 11.3 / 10.3, turbo3 11.75 /
      // 10.8 and 11.6 / 10.9, turbo4 13.2 / 12.15 and 12.8 / 11.5. (Where two-step splits filled
      // the SMs, fewer and longer ones at one an SM lost: run 5, 4097 tokens, m 2 2K, m 3 1K,
      // batch 4 1K, +0.3..1.3 us.)
      per_unit = 1;
      target = room(per_unit);
      steps = steps_for(target, 1);
    }
    // (The fused append's tails take no longer splits: once its quantizer ran in registers, the
    // tail's chain was shorter than the splits', and the plan's own splits were the fastest fused
    // steps measured; bench/results/2026-11-26-h100-session16.)
    p.chunk = steps * step;
    p.reason = "fill " + std::to_string(target) + " workgroups (" + std::to_string(caps.compute_units) +
               " compute units) from " + std::to_string(base) + " (sequence, KV head, row chunk) groups" +
               (steps == 1 ? ", splits of one step (two-step ones leave units idle)" : "");
  }
  // A split spans at most kMaxSplitPages pages (a step-aligned split of chunk tokens touches
  // chunk / page_size of them): longer splits are cut into more.
  const uint32_t max_chunk = (kMaxSplitPages - 1) * s.page_size / step * step;
  if (p.chunk > max_chunk) {
    p.chunk = max_chunk;
    p.reason += "; splits of at most " + std::to_string(max_chunk) + " tokens (page list in shared memory)";
  }
  p.splits = ceil_div(ctx, p.chunk);
  p.workgroups = p.splits * base;
  p.per_unit = per_unit;
  return per_unit;
}

}  // namespace

uint32_t fused_tail_shared_bytes(const DecodePlan& p) {
  if (p.variant == Variant::tc) return 0;
  return 4 * kQuantizerCopyWords + 4 * p.rows * 8 + 4 * p.rows * 2;
}

DecodeShape fused_append_shape(DecodeShape s, Variant variant) {
  s.appends = true;
  if (variant == Variant::tc) return s;
  // (Planned on the appended lengths, a 4K context took 22 splits instead of 32 on an H100: 4097
  // tokens pass 32 two-step splits, and 33 leave no room for the tails.)
  s.reserved_per_group = 1;
  s.max_context -= std::min(s.m, s.max_context);
  for (uint32_t& len : s.lengths) len -= std::min(s.m, len);
  return s;
}

namespace {

// The plan with turbo4's tc table of 256 entries or of 64 (tab256): below.
DecodePlan plan_with_table(const DeviceCaps& caps, const DecodeShape& s, const PlanRequest& request, bool tab256) {
  check_head_dim(s.head_dim);
  if (s.kv_heads == 0 || s.q_heads == 0 || s.q_heads % s.kv_heads != 0)
    fail(ErrorCode::invalid_argument, "decode: " + std::to_string(s.q_heads) + " query heads is not a multiple of " +
                                          std::to_string(s.kv_heads) + " KV heads");
  const uint32_t ratio = s.q_heads / s.kv_heads;
  if (ratio > 16) fail(ErrorCode::invalid_argument, "decode: GQA ratio " + std::to_string(ratio) + " is above 16");
  if (s.m == 0 || s.m > 8) fail(ErrorCode::invalid_argument, "decode: m = " + std::to_string(s.m) + " is not in 1..8");
  if (s.batch == 0) fail(ErrorCode::invalid_argument, "decode: empty batch");
  if (!mode_supported(s.k_type, request.mode) || !mode_supported(s.v_type, request.mode))
    fail(ErrorCode::invalid_argument, "decode: profile mode " + std::string(mode_name(request.mode)) +
                                          " needs turbo K and V types");

  if (request.dims_per_lane && (request.dims_per_lane < 4 || request.dims_per_lane > 32 ||
                                (request.dims_per_lane & (request.dims_per_lane - 1))))
    fail(ErrorCode::invalid_argument, "decode: dims per lane must be 4, 8, 16 or 32");
  if (request.unroll && (request.unroll > 8 || (request.unroll & (request.unroll - 1))))
    fail(ErrorCode::invalid_argument, "decode: unroll must be 1, 2, 4 or 8");
  if (request.subgroups && request.subgroups != 4 && request.subgroups != 6 && request.subgroups != 8)
    fail(ErrorCode::invalid_argument, "decode: subgroups per workgroup must be 4, 6 or 8");

  if (s.page_size == 0 || s.page_size % 16 != 0)
    fail(ErrorCode::invalid_argument, "decode: page size " + std::to_string(s.page_size) + " is not a multiple of 16");

  DecodePlan p;
  p.tab256 = tab256;
  p.mode = request.mode;
  p.variant = request.variant == Variant::automatic ? Variant::mag4 : request.variant;
  const uint32_t k_dim = RowLayout::make(s.k_type, s.head_dim).stored_dim;
  const uint32_t v_dim = RowLayout::make(s.v_type, s.head_dim).stored_dim;
  const uint32_t qdim = std::max(k_dim, v_dim);
  const uint32_t max_team = std::min<uint32_t>(min_subgroup(caps), 32);
  const uint32_t dpl_min = std::max<uint32_t>(4, pow2_ceil(ceil_div(qdim, max_team)));
  const uint32_t rm = ratio * s.m;
  const uint32_t budget = std::min<uint32_t>(caps.max_shared_memory ? caps.max_shared_memory : 16384, 49152);

  // Query rows per workgroup: all of a KV head's rows when they fit the lane's registers and the
  // shared memory (each K/V row is then read once), else the fewest equal chunks that fit.
  for (p.row_chunks = 1; p.variant != Variant::tc; ++p.row_chunks) {  // (tc: below)
    p.rows = ceil_div(rm, p.row_chunks);
    uint32_t dpl = 4;  // the largest power of two up to 16 within the register budget (q and o)
    while (dpl < 16 && p.rows * dpl * 4 <= kLaneRegisterBudget) dpl *= 2;
    p.dims_per_lane = std::max(request.dims_per_lane ? request.dims_per_lane : dpl, dpl_min);
    // Turbo tiles (kvcache/layout.hpp): a V token's dims are spread over 8 lanes of a tile, so a
    // team of at least 8 lanes; a K token's over 4.
    const uint32_t min_team = traits(s.v_type).is_turbo ? 8 : traits(s.k_type).is_turbo ? 4 : 1;
    if (min_team > max_team)
      fail(ErrorCode::invalid_argument, "decode: turbo " + std::string(traits(s.v_type).is_turbo ? "V" : "K") +
                                            " needs teams of " + std::to_string(min_team) + " lanes; subgroups of " +
                                            std::to_string(max_team) + " on " + caps.name + " are too small");
    while (pow2_ceil(ceil_div(qdim, p.dims_per_lane)) < min_team && p.dims_per_lane > 4) p.dims_per_lane /= 2;
    p.team = pow2_ceil(ceil_div(qdim, p.dims_per_lane));
    // Tokens per step: the most that divide the page size and fit the shared memory, up to 4.
    // (Turbo tiles, specialized on the host, H100 at 128K, 8 dims per lane: turbo3 smem 341 / 313
    // / 285 us at 1 / 2 / 4 tokens, turbo4 328 / 299 / 265.)
    p.unroll = request.unroll ? request.unroll : 4;
    // (The kernel holds unroll x rows partial scores per lane, padded to a power of two: at most 32.)
    while (p.unroll > 1 && (s.page_size % p.tokens_per_step() != 0 || decode_shared_bytes(caps, s, p) > budget ||
                            p.unroll * pow2_ceil(p.rows) > 32))
      p.unroll /= 2;
    // Small pages with narrow teams (e.g. 16 tokens, 4 lanes a token): fewer teams per workgroup.
    p.workgroup = 128;
    while (s.page_size % p.tokens_per_step() != 0 && p.workgroup / 2 >= std::max(p.team, min_subgroup(caps)))
      p.workgroup /= 2;
    if (s.page_size % p.tokens_per_step() != 0)
      fail(ErrorCode::invalid_argument, "decode: page size " + std::to_string(s.page_size) + " is not a multiple of " +
                                            std::to_string(p.tokens_per_step()) + " tokens per step");
    p.shared_bytes = decode_shared_bytes(caps, s, p);
    const bool registers_ok = p.rows * p.dims_per_lane <= kLaneRegisterBudget || p.rows == 1;
    if ((registers_ok && p.shared_bytes <= budget) || p.rows == 1) break;
  }
  // tc: the fewest equal row chunks of at most `most` rows, and the shared memory they need.
  auto tc_rows = [&](uint32_t most) {
    p.row_chunks = ceil_div(rm, most);
    p.rows = ceil_div(rm, p.row_chunks);
    p.shared_bytes = decode_shared_bytes(caps, s, p);
  };
  if (p.variant == Variant::tc) {
    // Four subgroups (or 6 or 8: below), each streaming tiles of 16 tokens; the MMAs' 8 columns
    // hold 4 rows' hi and lo halves, or (5 to 8 rows) 8 rows' hi halves with their lo halves in a
    // second matrix: a workgroup takes at most 8 query rows.
    if (const std::string problem = tensor_core_problem(caps, s, request.mode); !problem.empty())
      fail(ErrorCode::invalid_argument, "decode: variant tc cannot run here: " + problem);
    p.workgroup = 32 * (request.subgroups ? request.subgroups : 4);
    p.team = 32;
    p.unroll = 16;  // tokens_per_step(): subgroups x 16 tokens
    p.dims_per_lane = k_dim;
    // More than 8 rows (or on request): up to 16 on the MMAs' 16-row side, where it runs. H100, µs
    // per call, columns / rows16, llama8b 32K (session 21): m 3 turbo3 51.6 / 45.4, q8_0 66.3 /
    // 55.1 (128K turbo3 159.6 / 118.3); m 8 turbo3 88.0 / 66.8, q8_0 114.8 / 81.1. f16 pairs
    // (session 22, run 3, with the fold's bank swizzle for f16 V, decode_tc.comp's osh_at): m 8 f16
    // 100.1 / 72.9, f16 / turbo3 95.7 / 69.3, q8_0 / f16 100.3 / 78.4; m 3 f16 / turbo3 59.5 /
    // 51.8, q8_0 / f16 62.9 / 59.0, f16 65.1 / 65.8.
    if (request.rows16.value_or(false)) {
      const std::string why = rows16_problem(caps, s, request);
      if (!why.empty()) fail(ErrorCode::invalid_argument, "decode: the query rows on the MMAs' 16-row side: " + why);
    }
    p.rows16 = request.rows16.value_or(rm > 8) && rows16_problem(caps, s, request).empty();
    tc_rows(p.rows16 ? 16 : 8);
    if (p.rows16 && !request.rows16.has_value() && p.shared_bytes > budget) {  // (a device with less shared memory)
      p.rows16 = false;
      tc_rows(8);
    }
  }
  if (p.shared_bytes > budget)
    fail(ErrorCode::invalid_argument, "decode: variant " + std::string(variant_name(p.variant)) + " needs " +
                                          std::to_string(p.shared_bytes) + " B of shared memory, the device has " +
                                          std::to_string(budget));

  const uint32_t per_unit = plan_splits(caps, s, request, p);
  // Wide tc workgroups cost more at their ends (two query rows a subgroup, twice the partials
  // and the merge) and fit two an SM (184-200 registers): they pay where their splits are long.
  // H100, session 17, µs per call (4-row chunks / wide): llama8b turbo3 m 2 8K 18.4 / 19.3
  // (splits of 4 steps), 32K 42.1 / 34.3 (16 steps); m 3 8K 22.8 / 21.8 (8 steps); qwen7b
  // (7 rows) 8K 14.8 / 18.4-19.6 (2-6 steps), 32K 27.9 / 27.3 (8 steps); m 8 32K 125.1 / 86.9.
  // Shorter splits than kTensorCoreWideMinSteps take smaller chunks of rows instead: rows16's
  // (up to 16) chunks of at most 8, then of 4.
  auto short_splits = [&] { return p.chunk / p.tokens_per_step() < kTensorCoreWideMinSteps; };
  bool fewer_rows = false;
  if (p.variant == Variant::tc && !request.splits && !request.rows16.has_value()) {
    if (p.rows16 && short_splits()) {
      p.rows16 = false;
      tc_rows(8);
      plan_splits(caps, s, request, p);
      fewer_rows = true;
    }
    if (p.rows > 4 && short_splits()) {
      tc_rows(4);
      plan_splits(caps, s, request, p);
      fewer_rows = true;
    }
  }
  // The plan in workgroups of n subgroups instead: its shared memory and splits planned again.
  auto with_subgroups = [&](uint32_t n) {
    DecodePlan q = p;
    q.workgroup = 32 * n;
    q.shared_bytes = decode_shared_bytes(caps, s, q);
    plan_splits(caps, s, request, q);
    return q;
  };
  if (!fewer_rows && p.variant == Variant::tc && p.rows <= 4 && !p.rows16 && !request.subgroups &&
      !request.splits && s.k_type != KvType::f16 && per_unit == kTensorCoreWorkgroupsPerUnit) {
    // Six subgroups where splits too short for a third workgroup an SM leave two (12 warps an SM
    // instead of 8, the same partials to merge), once their splits are kTensorCoreWideMinSteps
    // long. H100, session 20, us per call, 4 / 6 subgroups, llama8b m 1: 32K q8_0 42.3 / 39.7,
    // turbo3 29.0 / 28.6; 64K q8_0 71.9 / 66.0, turbo3 45.9 / 43.5, turbo2 39.3 / 37.6, turbo4
    // 63.0 / 61.4; 8K (3-step splits) turbo2 14.8 / 15.1, turbo4 18.2 / 18.9. f16 K, bound by its
    // reads, lost (32K 55.5 / 57.7, 64K 99.6 / 101.3).
    const DecodePlan six = with_subgroups(6);
    if (six.shared_bytes <= budget && six.chunk / six.tokens_per_step() >= kTensorCoreWideMinSteps) p = six;
  }
  if (p.rows16 && p.rows > 8 && !request.subgroups && !request.splits && traits(s.k_type).is_turbo &&
      traits(s.v_type).is_turbo) {
    // Turbo rows16 (more than 8 rows: measured at 12 and 16) in workgroups of eight subgroups,
    // one an SM: as many warps as two of four, half the splits to write and merge (the last
    // workgroup's merge of m 3 32K: 4.8 -> 1.9 us). H100, session 22, us per call, 4 / 8
    // subgroups, llama8b: m 3 turbo3 8K 22.1 / 21.4, 32K 45.3 / 43.0, 128K 118.6 / 112.7; turbo4
    // 32K 54.6 / 53.2, 128K 152.8 / 147.9; turbo2 32K 38.7 / 36.4; m 8 turbo3 32K 67.9 / 65.8,
    // 128K 203.4 / 202.6; turbo4 32K 87.8 / 82.8, 128K 278.9 / 264.6. q8_0, whose tiles read 2-3x
    // the bytes, lost (its tiles slowed more than the merge gained): m 3 128K 157.0 / 162.8, m 8
    // 32K 80.3 / 86.4, 128K 262.0 / 286.6; so did turbo / q8_0 pairs (m 8 32K turbo3 / q8_0 85.7 /
    // 87.1, 128K turbo4 / q8_0 303.2 / 307.5; q8_0 / turbo3 even). They keep four.
    const DecodePlan eight = with_subgroups(8);
    if (eight.shared_bytes <= budget) p = eight;
  }
  if (p.tab256 && p.workgroup < 256 && !request.subgroups && !request.splits) {
    // turbo4's 256-entry table (32 KB) leaves one workgroup an SM: eight subgroups, as many warps
    // as two of four. H200, session 39 run 4, us, before (64 or 128 entries, two or three
    // workgroups an SM) / 256 entries in one workgroup of 4 / of 8 subgroups: turbo4 32K 34.6 /
    // 37.7 / 28.5, 128K 95.0 / 112.8 / 78.2, batch 16 8K 105.3 / 120.5 / 86.4.
    const DecodePlan eight = with_subgroups(8);
    if (eight.shared_bytes <= budget) p = eight;
  }
  return p;
}

// The plan with the table plan_decode picks for turbo4 (below).
DecodePlan plan_tables(const DeviceCaps& caps, const DecodeShape& s, const PlanRequest& request) {
  const DecodePlan narrow = plan_with_table(caps, s, request, false);
  // turbo4's tc table of 256 entries (both negative bits folded in: a pair's sign work, ~3 ALU
  // instructions, gone) where it is the only table and fits (tab256, in plan_with_table: one
  // workgroup an SM of eight subgroups), unless its plan then leaves idle more than a tenth of
  // the SMs that the 64-entry one fills (short contexts: its splits take twice the tokens).
  // H200, session 39 run 5, us, before (64 or 128 entries) / 256: turbo4 1K 12.5 / 19.0 (one
  // split: 8 workgroups), 2K 12.5 / 13.4 (64 workgroups), 4K 14.6 / 13.2 (128), 8K 17.9 / 16.0,
  // 32K 34.7 / 28.4, 128K 94.6 / 78.5; m 2 8K 22.6 / 18.2, 32K 39.0 / 33.1; m 3 32K 45.6 / 41.0;
  // m 8 32K 75.8 / 65.4; batch 16 8K 105.0 / 87.1; beside q8_0 or f16 within -5% / +3%.
  // (Session 27's 128 entries, the first bit alone in 16 KB, had paid only where they cost the
  // SMs no tokens.)
  if (narrow.variant != Variant::tc || (s.k_type != KvType::turbo4 && s.v_type != KvType::turbo4) ||
      (s.k_type != s.v_type && traits(s.k_type).is_turbo && traits(s.v_type).is_turbo))
    return narrow;
  DecodePlan wide;
  try {
    wide = plan_with_table(caps, s, request, true);
  } catch (const Error&) {  // (its shared memory past the device's)
    return narrow;
  }
  const uint64_t filled = std::min<uint64_t>(narrow.workgroups, compute_units(caps));
  return 10 * uint64_t(wide.workgroups) >= 9 * filled ? wide : narrow;
}

}  // namespace

DecodePlan plan_decode(const DeviceCaps& caps, const DecodeShape& s, const PlanRequest& request) {
  DecodePlan p = plan_tables(caps, s, request);
  // q8_0 V in the tc kernel's one-row (8-column) loop: V one tile ahead (V_AHEAD, in flight for a
  // whole step) where a subgroup has more than two tiles of a split: with two it overlaps one
  // step's loads, and measured slower there. H200, session 51 run 3, us per call, llama8b, ahead /
  // not: 1K 10.0 / 9.7 and 4K 13.6 / 13.5 (splits of 128 tokens: two tiles a subgroup; the
  // 32-layer step at 4K 403 / 396), 32K 31.9 / 32.6 and 128K 86.2 / 88.1. The line (session 52
  // run 1, two rounds forced each way): 4K 14.3, 13.8 / 13.6, 13.3 (two tiles); 8K 16.6, 16.6 /
  // 16.6, 16.9 (four); 16K 22.5, 22.5 / 22.8, 22.9; 32K 31.6, 31.7 / 32.4, 32.4. A fused call's
  // one-row loop never has it (shaders/decode_tc.comp), nor does the choice matter to other V
  // types: theirs stays set, one pipeline.
  const uint32_t tiles = p.chunk / (16 * std::max<uint32_t>(1, p.workgroup / 32));
  const bool one_row = p.variant == Variant::tc && s.v_type == KvType::q8_0 && !p.rows16 && p.rows <= 4 && !s.appends;
  p.v_ahead = !one_row || (request.v_ahead ? *request.v_ahead : tiles > 2);
  return p;
}

std::string DecodePlan::describe() const {
  std::ostringstream o;
  o << "variant " << variant_name(variant) << (mode == ProfileMode::full ? "" : ", profile mode " + std::string(mode_name(mode)))
    << ", splits " << splits << " x " << chunk << " tokens, " << workgroups << " workgroups of " << workgroup;
  if (variant == Variant::tc)
    o << " (" << workgroup / 32 << " subgroups x 16-token tiles on the tensor cores"
      << (rows16 ? ", queries on the MMAs' 16-row side" : "") << "), ";
  else o << " (teams of " << team << " lanes x " << dims_per_lane << " dims, " << unroll << " tokens/step), ";
  o << rows << " query rows each (" << row_chunks << " chunk" << (row_chunks > 1 ? "s" : "") << "), " << shared_bytes
    << " B shared" << (tab256 ? " (turbo4's table of 256 entries)" : "") << (v_ahead ? "" : ", V not ahead")
    << (direct() ? ", one split" : ", splits merged by the last") << " — " << reason;
  return o.str();
}

}  // namespace tkv
