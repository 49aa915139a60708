// Planning is a pure function of the capability record and the shape: tested without a GPU on
// records written by hand.
#include <gtest/gtest.h>
#include <algorithm>
#include <utility>

#include "attention/plan.hpp"
#include "kvcache/error.hpp"
#include "device_records.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

DecodeShape llama8b(uint32_t ctx, uint32_t batch = 1, uint32_t m = 1) {
  return {KvType::turbo3, KvType::turbo3, 128, 32, 8, batch, m, ctx, 64};
}

// The tc workgroups of a fused plan an SM holds: ~49 KB of shared memory an SM, 1 KB more a
// workgroup (H100, sessions 6 and 21), each with the scalar tail's shared memory (the tc kernel has none).
uint32_t fused_workgroups_per_sm(const DecodePlan& p) {
  return std::max(1u, 50176u / (p.shared_bytes + fused_tail_shared_bytes(p) + 1024));
}

}  // namespace

TEST(Plan, ShortContextsRunOneSplitWithoutReduce) {
  // Up to two steps of tokens: one split (a split streams at least two steps).
  const uint32_t ctx = 2 * plan_decode(h100(), llama8b(64)).tokens_per_step();
  const auto p = plan_decode(h100(), llama8b(ctx));
  EXPECT_EQ(p.splits, 1u);
  EXPECT_TRUE(p.direct());
  EXPECT_GE(p.chunk, ctx);
}

TEST(Plan, LongContextsFillEverySmAtBatchOne) {
  for (uint32_t ctx : {8192u, 32768u, 131072u}) {
    const auto p = plan_decode(h100(), llama8b(ctx));
    // About four workgroups per SM and never more (one wave) where the splits stay at least 16
    // steps long, else about two; fewer only where the splits are at their minimum of two steps.
    const uint32_t per_sm = p.chunk >= 16 * p.tokens_per_step() ? 4 : 2;
    EXPECT_EQ(per_sm, ctx >= 32768u ? 4u : 2u) << ctx << ": " << p.describe();
    EXPECT_LE(p.workgroups, 132u * per_sm) << ctx << ": " << p.describe();
    EXPECT_TRUE(p.workgroups + 8 * 8 > 132u * per_sm || p.chunk <= 2 * p.tokens_per_step()) << ctx << ": " << p.describe();
    if (per_sm == 2) {  // four per SM would have cut shorter splits (66 per KV head)
      EXPECT_LT(uint64_t(ctx) / (132u * 4 / 8) / p.tokens_per_step(), 16u) << ctx;
    }
    EXPECT_GE(uint64_t(p.splits) * p.chunk, ctx);            // covers the sequence
    EXPECT_LT(uint64_t(p.splits - 1) * p.chunk, ctx);        // no empty split
    EXPECT_EQ(p.rows, 4u);                                   // all GQA heads of a KV head together
    EXPECT_LE(p.shared_bytes, 49152u);
  }
}

TEST(Plan, LargeBatchesNeedFewerSplits) {
  const auto one = plan_decode(h100(), llama8b(32768, 1));
  const auto many = plan_decode(h100(), llama8b(32768, 64));
  EXPECT_LT(many.splits, one.splits);
}

TEST(Plan, RaggedBatchesFillTheGpuFromTheWorkgroupsThatHoldTokens) {
  // 16 sequences from 8K down to 4K: planned as if all were 8K long, the short ones would hold
  // tokens in fewer splits and leave SMs idle; the planner counts each sequence's own splits.
  DecodeShape full = llama8b(8192, 16), ragged = full;
  for (uint32_t b = 0; b < 16; ++b) ragged.lengths.push_back(8192 - 4096 * b / 15);
  const auto pf = plan_decode(h100(), full), pr = plan_decode(h100(), ragged);
  auto live = [&](uint32_t chunk) {  // workgroups that hold tokens
    uint64_t n = 0;
    for (uint32_t len : ragged.lengths) n += (len + chunk - 1) / chunk;
    return n * ragged.kv_heads * pr.row_chunks;
  };
  EXPECT_LT(pr.chunk, pf.chunk) << pr.describe();
  EXPECT_LE(live(pr.chunk), 132u * 4) << pr.describe();                         // one wave
  EXPECT_GT(live(pr.chunk), live(pf.chunk)) << pr.describe();                   // more of it busy
  EXPECT_GT(live(pr.chunk - pr.tokens_per_step()), 132u * 4) << pr.describe();  // the shortest such split
  EXPECT_EQ(pr.chunk % pr.tokens_per_step(), 0u);
  // Equal lengths plan as without them.
  DecodeShape listed = llama8b(32768, 2);
  listed.lengths = {32768, 32768};
  EXPECT_EQ(plan_decode(h100(), listed).chunk, plan_decode(h100(), llama8b(32768, 2)).chunk);
}

TEST(Plan, RowsArePackedAndChunkedToFitSharedMemory) {
  // qwen7b: GQA 7, m = 8 -> 56 rows: more than one chunk, each within the budget.
  DecodeShape s{KvType::turbo3, KvType::turbo3, 256, 28, 4, 1, 8, 4096, 64};
  for (const auto& caps : {h100(), lavapipe()}) {
    const auto p = plan_decode(caps, s);
    EXPECT_GE(p.rows * p.row_chunks, 56u);
    EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
    EXPECT_EQ(p.shared_bytes, decode_shared_bytes(caps, s, p));
    EXPECT_LE(p.rows * p.dims_per_lane, 64u);
    EXPECT_LE(p.team, caps.subgroup_size);
    EXPECT_EQ(64 % p.tokens_per_step(), 0u);
  }
}

TEST(Plan, ForcedSplitsAreClampedToTheMaximum) {
  const auto p = plan_decode(h100(), llama8b(4097), {.splits = 100000});
  EXPECT_EQ(p.splits, (4097 + p.tokens_per_step() - 1) / p.tokens_per_step());  // one step per split
  EXPECT_EQ(plan_decode(h100(), llama8b(4097), {.splits = 7}).splits, 7u);
}

TEST(Plan, BadShapesAreErrors) {
  DecodeShape s = llama8b(100);
  s.q_heads = 30;
  EXPECT_THROW(plan_decode(h100(), s), Error);
  s = llama8b(100, 1, 9);
  EXPECT_THROW(plan_decode(h100(), s), Error);
  s = llama8b(100);
  s.q_heads = 8 * 17;
  EXPECT_THROW(plan_decode(h100(), s), Error);
  s = llama8b(100);
  s.head_dim = 300;
  EXPECT_THROW(plan_decode(h100(), s), Error);
}

TEST(Plan, DescribeNamesTheChoice) {
  const auto text = plan_decode(h100(), llama8b(131072)).describe();
  EXPECT_NE(text.find("splits"), std::string::npos);
  EXPECT_NE(text.find("132 compute units"), std::string::npos);
}

TEST(Plan, SmallPagesWithNarrowTeamsGetSmallerWorkgroups) {
  // Head dim 64 and GQA 2: 16 dims per lane, 4 lanes a token, 32 teams in 128 invocations; a page
  // of 16 tokens needs a step of at most 16 tokens, so the workgroup shrinks.
  for (uint32_t page : {16u, 32u, 64u}) {
    const DecodeShape s{KvType::f16, KvType::turbo3, 64, 4, 2, 1, 1, 1000, page};
    for (const auto& caps : {h100(), lavapipe()}) {
      const auto p = plan_decode(caps, s);
      EXPECT_EQ(page % p.tokens_per_step(), 0u) << page << ": " << p.describe();
      EXPECT_GE(p.workgroup, p.team);
      EXPECT_EQ(p.workgroup % caps.subgroup_size, 0u);
    }
  }
}

TEST(Plan, PartialScoresPerLaneStayWithinTheKernelsArrays) {
  // The kernel holds unroll x (rows padded to a power of two) scores per lane, at most 32.
  for (uint32_t m : {1u, 2u, 4u, 8u})
    for (uint32_t unroll : {0u, 8u}) {
      const auto p = plan_decode(h100(), llama8b(32768, 1, m), {.unroll = unroll});
      uint32_t r2 = 1;
      while (r2 < p.rows) r2 *= 2;
      EXPECT_LE(p.unroll * r2, 32u) << p.describe();
    }
}

namespace {

std::string tc_error(const DeviceCaps& caps, const DecodeShape& s, ProfileMode mode = ProfileMode::full) {
  try {
    plan_decode(caps, s, {.variant = Variant::tc, .mode = mode});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Plan, TensorCoresTakeUpToEightRowsInTilesOfSixteenTokensAndAlwaysReduce) {
  const auto caps = h100_tensor_cores();
  const auto p = plan_decode(caps, llama8b(32768), {.variant = Variant::tc, .subgroups = 4});
  EXPECT_EQ(p.variant, Variant::tc);
  EXPECT_EQ(p.rows, 4u);
  EXPECT_EQ(p.row_chunks, 1u);
  EXPECT_EQ(p.workgroup, 128u);
  EXPECT_EQ(p.tokens_per_step(), 64u);
  EXPECT_EQ(p.chunk % 64, 0u);
  EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
  EXPECT_EQ(p.shared_bytes, decode_shared_bytes(caps, llama8b(32768), p));
  EXPECT_LE(p.workgroups, 2u * caps.compute_units);  // two workgroups an SM on splits of a few tiles
  EXPECT_GT(p.workgroups, caps.compute_units);
  // Long splits: three workgroups an SM.
  const auto p3 = plan_decode(caps, llama8b(131072), {.variant = Variant::tc});
  EXPECT_LE(p3.workgroups, 3u * caps.compute_units);
  EXPECT_GT(p3.workgroups, 2u * caps.compute_units);
  // ... where three fit the SM's shared memory (~49 KB, 1 KB more a workgroup): not with a K table
  // and a V table of 64 entries each (turbo3 / turbo4: 20.5 KB).
  DecodeShape mixed = llama8b(131072);
  mixed.v_type = KvType::turbo4;
  const auto p2 = plan_decode(caps, mixed, {.variant = Variant::tc});
  EXPECT_GT(p2.shared_bytes, 16384u);
  EXPECT_LE(p2.workgroups, 2u * caps.compute_units);
  EXPECT_LE(3 * (p3.shared_bytes + 1024), 50176u);
  // One split still goes through partials and the merge (the tc kernel has no direct path).
  const auto short_plan = plan_decode(caps, llama8b(100), {.variant = Variant::tc});
  EXPECT_EQ(short_plan.splits, 1u);
  EXPECT_FALSE(short_plan.direct());
  // More than 4 rows take the wide form (8 rows' hi halves in the MMAs' columns, their lo halves
  // apart) where its splits are at least 8 steps long, else chunks of 4 rows: GQA 7 (qwen7b) x 1
  // query in one chunk at 32K, two at 8K; llama8b with m = 2 (8 rows) likewise; m = 3 (12) in two
  // of 6 at 8K; m = 8 (32) in four of 8, two wide workgroups an SM.
  auto qwen = [&](uint32_t ctx) {
    return plan_decode(caps, {KvType::turbo4, KvType::turbo3, 128, 28, 4, 1, 1, ctx, 64}, {.variant = Variant::tc});
  };
  EXPECT_EQ(qwen(32768).row_chunks, 1u);
  EXPECT_EQ(qwen(32768).rows, 7u);
  EXPECT_GE(qwen(32768).chunk, 8u * 64u);
  EXPECT_EQ(qwen(8192).row_chunks, 2u);
  EXPECT_EQ(qwen(8192).rows, 4u);
  EXPECT_EQ(plan_decode(caps, llama8b(32768, 1, 2), {.variant = Variant::tc}).row_chunks, 1u);
  EXPECT_EQ(plan_decode(caps, llama8b(8192, 1, 2), {.variant = Variant::tc}).row_chunks, 2u);
  EXPECT_EQ(plan_decode(caps, llama8b(8192, 1, 2), {.splits = 8, .variant = Variant::tc}).row_chunks, 1u);
  EXPECT_EQ(plan_decode(caps, llama8b(200, 1, 2), {.variant = Variant::tc}).rows, 4u);  // one short split
  EXPECT_EQ(plan_decode(caps, llama8b(200, 1, 2), {.splits = 1, .variant = Variant::tc}).rows, 8u);  // forced
  const auto m3 = plan_decode(caps, llama8b(8192, 1, 3), {.variant = Variant::tc});
  EXPECT_EQ(m3.row_chunks, 2u);
  EXPECT_EQ(m3.rows, 6u);
  const auto m8 = plan_decode(caps, llama8b(32768, 1, 8), {.variant = Variant::tc});
  EXPECT_EQ(m8.row_chunks, 4u);
  EXPECT_EQ(m8.rows, 8u);
  EXPECT_LE(m8.workgroups, 2u * caps.compute_units);
  EXPECT_LE(m8.shared_bytes, caps.max_shared_memory);
  EXPECT_GT(m8.shared_bytes, p.shared_bytes);  // Qb's lo columns apart, 8 rows' outputs
  EXPECT_NE(p.describe().find("tensor cores"), std::string::npos);
  EXPECT_NE(m8.describe().find("8 query rows each (4 chunks)"), std::string::npos) << m8.describe();
}

// A tuning request: 6 or 8 subgroups a workgroup (more warps per split where the splits fill two
// workgroups an SM), each on its own 16-token tiles: steps of 96 or 128 tokens, whole-step
// splits, the subgroups' outputs in shared memory; the plain kernels and bad counts.
TEST(Plan, TensorCoreWorkgroupsOfSixOrEightSubgroupsOnRequest) {
  const auto caps = h100_tensor_cores();
  const auto four = plan_decode(caps, llama8b(32768), {.variant = Variant::tc, .subgroups = 4});
  for (uint32_t sgs : {6u, 8u}) {
    SCOPED_TRACE(sgs);
    const auto p = plan_decode(caps, llama8b(32768), {.variant = Variant::tc, .subgroups = sgs});
    EXPECT_EQ(p.workgroup, 32u * sgs);
    EXPECT_EQ(p.tokens_per_step(), 16u * sgs);
    EXPECT_EQ(p.chunk % (16u * sgs), 0u);
    EXPECT_GE(p.splits * p.chunk, 32768u);
    EXPECT_EQ(p.shared_bytes, decode_shared_bytes(caps, llama8b(32768), p));
    EXPECT_GT(p.shared_bytes, four.shared_bytes);  // the subgroups' outputs
    EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
    EXPECT_NE(p.describe().find(std::to_string(sgs) + " subgroups x 16-token tiles"), std::string::npos)
        << p.describe();
    const auto wide = plan_decode(caps, llama8b(32768, 1, 2), {.variant = Variant::tc, .subgroups = sgs});
    EXPECT_EQ(wide.rows, 8u);
    EXPECT_EQ(wide.workgroup, 32u * sgs);
  }
  EXPECT_EQ(four.workgroup, 128u);
  // The other variants keep their own workgroups.
  EXPECT_EQ(plan_decode(caps, llama8b(32768), {.variant = Variant::smem, .subgroups = 8}).workgroup,
            plan_decode(caps, llama8b(32768), {.variant = Variant::smem}).workgroup);
  for (uint32_t bad : {1u, 5u, 7u, 16u}) {
    try {
      plan_decode(caps, llama8b(32768), {.variant = Variant::tc, .subgroups = bad});
      ADD_FAILURE() << bad << " subgroups planned";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("subgroups per workgroup must be 4, 6 or 8"), std::string::npos) << e.what();
    }
  }
}

// Unasked, the tc kernel takes six subgroups where its splits fill two workgroups an SM (too short
// for a third) and are at least 8 six-subgroup steps long, for rows of compressed K (f16 K, bound
// by its reads, keeps four): llama8b m 1 at 32K and 64K. At 8K the splits are shorter, at 128K
// three workgroups an SM run; wide workgroups (5-8 rows) keep four.
TEST(Plan, TensorCoresTakeSixSubgroupsOnLongSplitsTwoAnSm) {
  const auto caps = h100_tensor_cores();
  auto plan = [&](DecodeShape s, uint32_t subgroups = 0) {
    return plan_decode(caps, s, {.variant = Variant::tc, .subgroups = subgroups});
  };
  for (uint32_t ctx : {32768u, 65536u}) {
    SCOPED_TRACE(ctx);
    // (turbo4: its 256-entry table leaves one workgroup an SM, of eight subgroups:
    // Turbo4TableOf256WhereItIsTheOnlyTable)
    for (KvType k : {KvType::turbo2, KvType::turbo3, KvType::q8_0}) {
      DecodeShape s = llama8b(ctx);
      s.k_type = s.v_type = k;
      const auto p = plan(s);
      EXPECT_EQ(p.workgroup, 192u) << p.describe();
      EXPECT_GE(p.chunk / p.tokens_per_step(), 8u);
      EXPECT_LE(p.workgroups, 2u * caps.compute_units);
      EXPECT_GE(p.splits * p.chunk, ctx);
      const auto asked = plan(s, 6);
      EXPECT_EQ(asked.chunk, p.chunk);
      EXPECT_EQ(asked.shared_bytes, p.shared_bytes);
      EXPECT_EQ(plan(s, 4).workgroup, 128u);  // asked for four: four
    }
    DecodeShape f16 = llama8b(ctx);
    f16.k_type = f16.v_type = KvType::f16;
    EXPECT_EQ(plan(f16).workgroup, 128u);
    EXPECT_EQ(plan(llama8b(ctx, 1, 2)).workgroup, 128u);  // 8 rows, wide
  }
  EXPECT_EQ(plan(llama8b(8192)).workgroup, 128u);
  EXPECT_EQ(plan(llama8b(8192)).chunk, plan(llama8b(8192), 4).chunk);
  const auto long_splits = plan(llama8b(131072));
  EXPECT_EQ(long_splits.workgroup, 128u);
  EXPECT_GT(long_splits.workgroups, 2u * caps.compute_units);
  EXPECT_EQ(plan_decode(caps, llama8b(32768), {.splits = 32, .variant = Variant::tc}).workgroup, 128u);  // forced
}

// Under KHR matrices, more than 8 rows take the rows16 form: up to 16 query rows a workgroup on the
// MMAs' 16-row side (llama8b m 3: 12 rows, one chunk; m 8: two chunks of 16), two workgroups an
// SM, with chunks of at most 8 (then 4) rows where its splits are short; 8 rows or fewer keep the
// columns, and so do NV matrices and other subgroup counts.
TEST(Plan, TensorCoresTakeUpToSixteenRowsOnTheMmasRowSide) {
  const auto caps = h100_tensor_cores_khr();
  auto plan = [&](DecodeShape s, PlanRequest r = {}) {
    r.variant = Variant::tc;
    return plan_decode(caps, s, r);
  };
  // (Four subgroups asked for: unasked, turbo rows take eight, the next test.)
  const auto m3 = plan(llama8b(32768, 1, 3), {.subgroups = 4});
  EXPECT_TRUE(m3.rows16);
  EXPECT_EQ(m3.rows, 12u);
  EXPECT_EQ(m3.row_chunks, 1u);
  EXPECT_EQ(m3.workgroup, 128u);
  EXPECT_GE(m3.chunk / m3.tokens_per_step(), 8u);
  EXPECT_LE(m3.workgroups, 2u * caps.compute_units);
  EXPECT_EQ(m3.shared_bytes, decode_shared_bytes(caps, llama8b(32768, 1, 3), m3));
  EXPECT_LE(m3.shared_bytes, 49152u);
  EXPECT_NE(m3.describe().find("queries on the MMAs' 16-row side"), std::string::npos) << m3.describe();
  const auto m8 = plan(llama8b(32768, 1, 8), {.subgroups = 4});
  EXPECT_TRUE(m8.rows16);
  EXPECT_EQ(m8.rows, 16u);
  EXPECT_EQ(m8.row_chunks, 2u);
  EXPECT_GT(m8.shared_bytes, m3.shared_bytes);  // 16 rows' outputs
  // Two an SM on the H100: 23.5 KB a workgroup ran two an SM (sessions 5, 21), 27.2 KB one
  // (session 21, a second wave of workgroups): half the subgroups' outputs folded into the others'
  // first, Q's hi and lo halves through shared memory one after the other.
  EXPECT_LE(m8.shared_bytes, 24064u);
  // 8 rows or fewer: the columns (m 2: the wide form; m 1: four subgroups' 4 rows, or six).
  const auto m2 = plan(llama8b(32768, 1, 2));
  EXPECT_FALSE(m2.rows16);
  EXPECT_EQ(m2.rows, 8u);
  EXPECT_FALSE(plan(llama8b(32768)).rows16);
  EXPECT_EQ(plan(llama8b(32768, 1, 2)).describe().find("16-row side"), std::string::npos);
  // Short splits: m 3 at 8K as without rows16 (two chunks of 6: splits of 8 steps); m 8 at 8K
  // keeps 16-row chunks (16 groups: splits of 8 steps).
  const auto short3 = plan(llama8b(8192, 1, 3));
  EXPECT_FALSE(short3.rows16);
  EXPECT_EQ(short3.rows, 6u);
  EXPECT_EQ(short3.row_chunks, 2u);
  EXPECT_EQ(short3.chunk, plan_decode(h100_tensor_cores(), llama8b(8192, 1, 3), {.variant = Variant::tc}).chunk);
  EXPECT_TRUE(plan(llama8b(8192, 1, 8)).rows16);
  // The row types too (q8_0 and f16, K or V or both); not NV matrices or six subgroups.
  for (KvType t : {KvType::f16, KvType::q8_0}) {
    DecodeShape s = llama8b(32768, 1, 3);
    s.v_type = t;
    EXPECT_TRUE(plan(s).rows16) << type_name(t);
    s.v_type = KvType::turbo3;
    s.k_type = t;
    EXPECT_TRUE(plan(s).rows16) << type_name(t);
    s.v_type = t;
    EXPECT_TRUE(plan(s).rows16) << type_name(t);
    EXPECT_FALSE(plan(s, {.rows16 = false}).rows16) << type_name(t);
  }
  EXPECT_FALSE(plan_decode(h100_tensor_cores(), llama8b(32768, 1, 3), {.variant = Variant::tc}).rows16);
  EXPECT_FALSE(plan(llama8b(32768, 1, 3), {.subgroups = 6}).rows16);
  // 8 subgroups on request: one workgroup an SM (8 warps, as two of 4), half the splits.
  const auto eight = plan(llama8b(32768, 1, 3), {.subgroups = 8});
  EXPECT_TRUE(eight.rows16);
  EXPECT_EQ(eight.workgroup, 256u);
  EXPECT_LE(eight.workgroups, caps.compute_units);
  EXPECT_GT(eight.workgroups, caps.compute_units / 2);
  EXPECT_EQ(eight.shared_bytes, decode_shared_bytes(caps, llama8b(32768, 1, 3), eight));
  // On request: on at 4 rows, off at 12 (then the wide form's two chunks of 6).
  const auto on = plan(llama8b(32768), {.rows16 = true});
  EXPECT_TRUE(on.rows16);
  EXPECT_EQ(on.rows, 4u);
  EXPECT_EQ(on.workgroup, 128u);  // (no six subgroups)
  EXPECT_TRUE(plan(llama8b(8192, 1, 3), {.rows16 = true}).rows16);  // (kept on short splits)
  const auto off = plan(llama8b(32768, 1, 3), {.rows16 = false});
  EXPECT_FALSE(off.rows16);
  EXPECT_EQ(off.rows, 6u);
  // Asked for where it cannot run: a clear error.
  auto expect_refused = [&](const DeviceCaps& c, DecodeShape s, PlanRequest r, const std::string& why) {
    r.variant = Variant::tc;
    r.rows16 = true;
    try {
      plan_decode(c, s, r);
      ADD_FAILURE() << "planned: " << why;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  expect_refused(h100_tensor_cores(), llama8b(32768, 1, 3), {}, "mma.m16n8k16's order");
  expect_refused(caps, llama8b(32768, 1, 3), {.subgroups = 6}, "it takes 4 or 8 subgroups a workgroup");
  // The other variants ignore it, as they ignore subgroups.
  const auto smem = plan_decode(h100(), llama8b(32768, 1, 3), {.variant = Variant::smem, .rows16 = true});
  EXPECT_FALSE(smem.rows16);
  EXPECT_EQ(smem.variant, Variant::smem);
}

// Unasked, rows16 over turbo K and V takes workgroups of eight subgroups, one an SM (as many warps
// as two of four, half the splits to merge); q8_0 on either side keeps four (session 22: its
// tiles slowed more than its merge gained), and so do forced subgroups or splits.
TEST(Plan, TensorCoresTakeEightSubgroupsForTurboRowsOnTheMmasRowSide) {
  const auto caps = h100_tensor_cores_khr();
  auto plan = [&](DecodeShape s, PlanRequest r = {}) {
    r.variant = Variant::tc;
    return plan_decode(caps, s, r);
  };
  for (KvType t : {KvType::turbo2, KvType::turbo3, KvType::turbo4}) {
    for (uint32_t ctx : {8192u, 32768u, 131072u}) {
      DecodeShape s = llama8b(ctx, 1, 8);
      s.k_type = s.v_type = t;
      const auto p = plan(s);
      const auto four = plan(s, {.subgroups = 4});
      EXPECT_TRUE(p.rows16) << type_name(t) << " " << ctx;
      EXPECT_EQ(p.workgroup, 256u) << type_name(t) << " " << ctx;
      EXPECT_EQ(p.rows, four.rows);
      EXPECT_LE(p.workgroups, caps.compute_units) << type_name(t) << " " << ctx;
      // fewer splits (turbo4: its 256-entry table holds one workgroup an SM of either size)
      if (t != KvType::turbo4) EXPECT_LT(p.workgroups, four.workgroups) << type_name(t) << " " << ctx;
      EXPECT_EQ(p.shared_bytes, decode_shared_bytes(caps, s, p));
      EXPECT_LE(p.shared_bytes, caps.max_shared_memory);
      EXPECT_NE(p.describe().find("8 subgroups x 16-token tiles"), std::string::npos) << p.describe();
    }
  }
  EXPECT_EQ(plan(llama8b(32768, 1, 3)).workgroup, 256u);
  // q8_0 as K, V or both; f16 rows.
  for (auto [k, v] : {std::pair{KvType::turbo3, KvType::q8_0}, std::pair{KvType::q8_0, KvType::turbo3},
                      std::pair{KvType::q8_0, KvType::q8_0}, std::pair{KvType::f16, KvType::f16}}) {
    DecodeShape s = llama8b(32768, 1, 3);
    s.k_type = k;
    s.v_type = v;
    EXPECT_TRUE(plan(s).rows16) << type_name(k) << " / " << type_name(v);
    EXPECT_EQ(plan(s).workgroup, 128u) << type_name(k) << " / " << type_name(v);
  }
  EXPECT_EQ(plan(llama8b(32768, 1, 3), {.subgroups = 4}).workgroup, 128u);
  EXPECT_EQ(plan(llama8b(32768, 1, 3), {.splits = 16}).workgroup, 128u);
  // Without rows16 (8 rows or fewer, short splits at m 3 8K, NV matrices): as before.
  EXPECT_NE(plan(llama8b(32768, 1, 2)).workgroup, 256u);
  EXPECT_NE(plan(llama8b(8192, 1, 3)).workgroup, 256u);
  EXPECT_EQ(plan_decode(h100_tensor_cores(), llama8b(32768, 1, 3), {.variant = Variant::tc}).workgroup, 128u);
}

// Every tc plan over a grid of shapes (type pairs, head dims, GQA, m, depths, batches; KHR and NV
// matrices) stays within what decode_tc.comp holds: 4, 6 or 8 subgroups (rows16: 4 or 8, and 8
// unasked only over turbo K and V or beside turbo4's 256-entry table), at most 8 rows a
// workgroup (rows16: 16) in equal chunks that cover the group's rows, whole-step splits that
// cover the context, and the shared memory the kernel declares, within the device's.
TEST(Plan, TensorCorePlansStayWithinTheKernelOverAGridOfShapes) {
  const KvType types[] = {KvType::f16, KvType::q8_0, KvType::turbo2, KvType::turbo3, KvType::turbo4};
  struct Heads {
    uint32_t q, kv;
  };
  uint32_t planned = 0;
  for (const DeviceCaps& caps : {h100_tensor_cores_khr(), h100_tensor_cores()})
    for (KvType k : types)
      for (KvType v : types)
        for (uint32_t dim : {64u, 128u})
          for (Heads h : {Heads{32, 8}, Heads{28, 4}, Heads{32, 32}, Heads{8, 1}})
            for (uint32_t m : {1u, 2u, 3u, 4u, 8u})
              for (uint32_t ctx : {100u, 4096u, 32768u, 131072u})
                for (uint32_t batch : {1u, 16u}) {
                  const DecodeShape s{k, v, dim, h.q, h.kv, batch, m, ctx, 64};
                  const std::string at = std::string(type_name(k)) + "/" + std::string(type_name(v)) + " dim " +
                                         std::to_string(dim) + " heads " + std::to_string(h.q) + "/" +
                                         std::to_string(h.kv) + " m " + std::to_string(m) + " ctx " +
                                         std::to_string(ctx) + " batch " + std::to_string(batch);
                  DecodePlan p;
                  try {
                    p = plan_decode(caps, s, {.variant = Variant::tc});
                  } catch (const Error& e) {
                    ADD_FAILURE() << at << ": " << e.what();
                    continue;
                  }
                  ++planned;
                  const uint32_t rm = h.q / h.kv * m, subgroups = p.workgroup / 32;
                  ASSERT_EQ(p.variant, Variant::tc) << at;
                  EXPECT_EQ(p.workgroup % 32, 0u) << at;
                  EXPECT_TRUE(subgroups == 4 || subgroups == 6 || subgroups == 8) << at;
                  if (p.rows16) {
                    EXPECT_TRUE(caps.mma_b_native) << at;
                    EXPECT_NE(subgroups, 6u) << at;
                    if (subgroups == 8) {  // (or turbo4's 256-entry table beside rows: one an SM)
                      EXPECT_TRUE((traits(k).is_turbo && traits(v).is_turbo) || p.tab256) << at;
                    }
                  }
                  EXPECT_GE(p.rows, 1u) << at;
                  EXPECT_LE(p.rows, p.rows16 ? 16u : 8u) << at;
                  EXPECT_GE(p.rows * p.row_chunks, rm) << at;
                  EXPECT_LT(p.rows * (p.row_chunks - 1), rm) << at;  // no empty chunk
                  EXPECT_EQ(p.chunk % p.tokens_per_step(), 0u) << at;
                  EXPECT_GE(p.splits * p.chunk, ctx) << at;
                  EXPECT_GE(p.workgroups, h.kv * p.row_chunks * batch) << at;
                  EXPECT_EQ(p.shared_bytes, decode_shared_bytes(caps, s, p)) << at;
                  EXPECT_LE(p.shared_bytes, std::min(caps.max_shared_memory, 49152u)) << at;
                  // The fused call of the same step (no tails on the tensor cores): its splits
                  // in one wave of the workgroups an SM holds with the quantizer's arrays,
                  // unless one split a group, or splits as long as the page list allows, are
                  // already more.
                  DecodeShape appended = s;
                  appended.max_context += m;
                  const DecodeShape fs = fused_append_shape(appended, Variant::tc);
                  const auto f = plan_decode(caps, fs, {.variant = Variant::tc});
                  if (f.splits > 1 && f.reason.find("page list") == std::string::npos) {
                    EXPECT_LE(f.workgroups, fused_workgroups_per_sm(f) * caps.compute_units)
                        << at << " fused: " << f.describe();
                  }
                }
  EXPECT_GT(planned, 0u);
}

// turbo4's tc table holds both negative bits (256 entries of 16 copies, 32 KB: tab256) where it is
// the only table: one workgroup an SM, of eight subgroups (as many warps as two of four); not
// beside another turbo type's table, nor off the tensor cores, nor where its plan would leave
// idle SMs that the 64-entry table's fills (1K, 2K: its splits take twice the tokens).
TEST(Plan, Turbo4TableOf256WhereItIsTheOnlyTable) {
  const auto caps = h100_tensor_cores();
  PlanRequest tc;
  tc.variant = Variant::tc;
  auto shape = [](KvType k, KvType v, uint32_t ctx, uint32_t batch = 1) {
    DecodeShape s = llama8b(ctx, batch);
    s.k_type = k;
    s.v_type = v;
    for (uint32_t b = 0; batch > 1 && b < batch; ++b) s.lengths.push_back(ctx - ctx * b / (2 * (batch - 1)));
    return s;
  };
  for (uint32_t ctx : {8192u, 32768u, 131072u}) {
    const auto p = plan_decode(caps, shape(KvType::turbo4, KvType::turbo4, ctx), tc);
    EXPECT_TRUE(p.tab256) << ctx << ": " << p.describe();
    EXPECT_GE(p.shared_bytes, 8u * 16u * 256u);
    EXPECT_EQ(p.shared_bytes, decode_shared_bytes(caps, shape(KvType::turbo4, KvType::turbo4, ctx), p));
    EXPECT_EQ(p.per_unit, 1u) << p.describe();
    EXPECT_EQ(p.workgroup, 256u) << p.describe();
    EXPECT_TRUE(plan_decode(caps, shape(KvType::turbo4, KvType::f16, ctx), tc).tab256) << ctx;
    EXPECT_FALSE(plan_decode(caps, shape(KvType::turbo4, KvType::turbo3, ctx), tc).tab256) << ctx;
    EXPECT_FALSE(plan_decode(caps, shape(KvType::turbo3, KvType::turbo4, ctx), tc).tab256) << ctx;
    EXPECT_FALSE(plan_decode(caps, shape(KvType::turbo3, KvType::turbo3, ctx), tc).tab256) << ctx;
    EXPECT_FALSE(plan_decode(caps, shape(KvType::turbo4, KvType::turbo4, ctx)).tab256) << ctx;  // (not tc)
  }
  for (uint32_t ctx : {1024u, 2048u}) {
    const auto p = plan_decode(caps, shape(KvType::turbo4, KvType::turbo4, ctx), tc);
    EXPECT_FALSE(p.tab256) << ctx << ": " << p.describe();
    EXPECT_EQ(p.per_unit, 1u) << p.describe();  // (two-step splits fill fewer than the SMs)
  }
  const auto b16 = plan_decode(caps, shape(KvType::turbo4, KvType::turbo4, 8192, 16), tc);
  EXPECT_TRUE(b16.tab256) << b16.describe();
  EXPECT_EQ(b16.workgroup, 256u) << b16.describe();
  // Subgroups asked for are kept.
  PlanRequest four = tc;
  four.subgroups = 4;
  const auto p4 = plan_decode(caps, shape(KvType::turbo4, KvType::turbo4, 32768), four);
  EXPECT_TRUE(p4.tab256) << p4.describe();
  EXPECT_EQ(p4.workgroup, 128u) << p4.describe();
}

// q8_0 V in the tc kernel's one-row loop: V one tile ahead where a subgroup has more than two
// tiles of a split (session 51 run 3: off is faster with two, on from eight); asked for, as asked;
// elsewhere (other V types, more rows, a fused call) left set, so that no second pipeline is built.
TEST(Plan, QuantizedVAheadByTheSubgroupsTiles) {
  const auto caps = h100_tensor_cores();
  PlanRequest tc;
  tc.variant = Variant::tc;
  auto shape = [](KvType k, KvType v, uint32_t ctx, uint32_t m = 1) {
    DecodeShape s = llama8b(ctx);
    s.k_type = k;
    s.v_type = v;
    s.m = m;
    return s;
  };
  for (uint32_t ctx : {1024u, 4096u, 8192u, 16384u, 32768u, 131072u}) {
    const auto p = plan_decode(caps, shape(KvType::q8_0, KvType::q8_0, ctx), tc);
    ASSERT_EQ(p.variant, Variant::tc) << ctx;
    const uint32_t tiles = p.chunk / (16 * (p.workgroup / 32));
    EXPECT_EQ(p.v_ahead, tiles > 2) << ctx << ": " << p.describe();
    EXPECT_EQ(p.describe().find("V not ahead") != std::string::npos, !p.v_ahead) << p.describe();
    PlanRequest on = tc, off = tc;
    on.v_ahead = true;
    off.v_ahead = false;
    EXPECT_TRUE(plan_decode(caps, shape(KvType::q8_0, KvType::q8_0, ctx), on).v_ahead) << ctx;
    EXPECT_FALSE(plan_decode(caps, shape(KvType::q8_0, KvType::q8_0, ctx), off).v_ahead) << ctx;
    for (KvType v : {KvType::f16, KvType::turbo3})  // (not theirs to choose, whatever is asked)
      EXPECT_TRUE(plan_decode(caps, shape(KvType::q8_0, v, ctx), off).v_ahead) << ctx;
    for (uint32_t m : {2u, 3u}) {  // (the wide form, more than 4 rows, keeps its own; 4-row chunks do not)
      const auto p2 = plan_decode(caps, shape(KvType::q8_0, KvType::q8_0, ctx, m), off);
      EXPECT_EQ(p2.v_ahead, p2.rows > 4 || p2.rows16) << ctx << ": " << p2.describe();
    }
    DecodeShape appended = shape(KvType::q8_0, KvType::q8_0, ctx + 1);
    EXPECT_TRUE(plan_decode(caps, fused_append_shape(appended, Variant::tc), off).v_ahead) << ctx;
  }
  EXPECT_FALSE(plan_decode(caps, shape(KvType::q8_0, KvType::q8_0, 1024), tc).v_ahead);
  EXPECT_TRUE(plan_decode(caps, shape(KvType::q8_0, KvType::q8_0, 131072), tc).v_ahead);
}

// The tc kernel's splits take one step (64 tokens in four subgroups) only where two-step splits
// would leave SMs idle (session 52 runs 4-5: llama8b 1K, 64 workgroups against 128); where
// two-step splits fill the SMs (2K, batch 4, more query rows), they stay.
TEST(Plan, OneStepSplitsOnlyWhereTwoStepOnesLeaveSmsIdle) {
  const auto caps = h100_tensor_cores();
  PlanRequest tc;
  tc.variant = Variant::tc;
  for (KvType t : {KvType::f16, KvType::q8_0, KvType::turbo2, KvType::turbo3, KvType::turbo4}) {
    SCOPED_TRACE(std::string(type_name(t)));
    auto shape = [t](uint32_t ctx, uint32_t batch = 1, uint32_t m = 1) {
      DecodeShape s = llama8b(ctx, batch, m);
      s.k_type = s.v_type = t;
      return s;
    };
    const auto one = plan_decode(caps, shape(1024), tc);
    EXPECT_EQ(one.chunk, one.tokens_per_step()) << one.describe();
    EXPECT_EQ(one.workgroups, 128u) << one.describe();
    EXPECT_LE(one.workgroups, caps.compute_units);
    EXPECT_NE(one.describe().find("splits of one step"), std::string::npos) << one.describe();
    for (const DecodeShape& s : {shape(2048), shape(1024, 4), shape(1024, 1, 3), shape(4096)}) {
      const auto p = plan_decode(caps, s, tc);
      EXPECT_GE(p.chunk, 2 * p.tokens_per_step()) << s.max_context << " x " << s.batch << ", m " << s.m << ": " << p.describe();
      EXPECT_EQ(p.describe().find("splits of one step"), std::string::npos) << p.describe();
    }
    const auto scalar = plan_decode(caps, shape(1024));  // (the scalar kernels keep their own rule)
    EXPECT_NE(scalar.variant, Variant::tc);
    EXPECT_GE(scalar.chunk, 2 * scalar.tokens_per_step()) << scalar.describe();
  }
}

TEST(Plan, TensorCoresNameWhatIsMissing) {
  const auto caps = h100_tensor_cores();
  EXPECT_EQ(tc_error(caps, llama8b(4096)), "");
  EXPECT_NE(tc_error(lavapipe(), llama8b(4096)).find("VK_NV_cooperative_matrix"), std::string::npos);
  EXPECT_NE(tc_error(h100(), llama8b(4096)).find("VK_NV_cooperative_matrix"), std::string::npos);
  DeviceCaps no_layout = caps;
  no_layout.mma_fragment_layout = false;
  EXPECT_NE(tc_error(no_layout, llama8b(4096)).find("mma.m16n8k16"), std::string::npos);
  DeviceCaps no_shape = caps;
  no_shape.cooperative_matrix_shapes = {"16x8x16 f16*f16+f16 subgroup"};
  EXPECT_NE(tc_error(no_shape, llama8b(4096)).find("16x8x16 f16*f16+f32"), std::string::npos);
  DecodeShape s = llama8b(4096);
  s.head_dim = 256;
  EXPECT_NE(tc_error(caps, s).find("rotation groups"), std::string::npos);
  // f16 and q8_0 rows go straight into the fragments: head dims 64 and 128, alone or beside a
  // turbo side.
  for (uint32_t dim : {64u, 128u, 96u, 256u})
    for (KvType v : {KvType::f16, KvType::turbo3, KvType::q8_0}) {
      s = llama8b(4096);
      s.head_dim = dim;
      s.k_type = v == KvType::q8_0 ? KvType::q8_0 : KvType::f16;
      s.v_type = v;
      const std::string e = tc_error(caps, s);
      if (dim == 64 || dim == 128) {
        EXPECT_EQ(e, "") << dim;
        EXPECT_EQ(plan_decode(caps, s, PlanRequest{.variant = Variant::tc}).variant, Variant::tc);
      } else {
        EXPECT_NE(e, "") << dim;
      }
      if (dim == 96) {
        EXPECT_NE(e.find(" rows of head dim 96"), std::string::npos) << e;
      }
    }
  EXPECT_NE(tc_error(caps, llama8b(4096), ProfileMode::norm_only).find("profile modes 0 and 1"), std::string::npos);
  EXPECT_EQ(tc_error(caps, llama8b(4096), ProfileMode::zero), "");
}

// The scalar kernel's fused append tails: the planner leaves them room in the first wave, and the
// splits are planned as a decode call's are otherwise (at least as long as the same call's
// unfused: the tails take room).
TEST(Plan, FusedAppendTailsGetRoomInTheWave) {
  for (uint32_t ctx : {1025u, 4097u, 8193u, 32769u, 131073u}) {
    DecodeShape s = llama8b(ctx);
    const auto plain = plan_decode(h100(), s);
    s.reserved_per_group = 1;
    const auto fused = plan_decode(h100(), s);
    EXPECT_GE(fused.chunk, plain.chunk) << ctx;
    EXPECT_LE(fused.workgroups + s.kv_heads, 132u * 4) << ctx << ": " << fused.describe();
  }
}

// A fused dispatch's tc workgroups carry the quantizer's arrays in their region (the splits that
// hold new tokens quantize them there before the tables): its splits fit one wave of the
// workgroups an SM holds with it (~49 KB an SM, 1 KB more a workgroup). (When every workgroup
// carried a tail's arrays uncounted, m 1 at 128K put three 16.8 KB workgroups an SM and the wide
// form (m 2) two of 27.3 KB, where two and one fit: a second wave.)
TEST(Plan, FusedAppendWorkgroupsFitTheSmWithTheQuantizersSharedMemory) {
  const auto caps = h100_tensor_cores_khr();
  for (KvType t : {KvType::f16, KvType::q8_0, KvType::turbo2, KvType::turbo3, KvType::turbo4})
    for (uint32_t m : {1u, 2u, 3u, 8u})
      for (uint32_t ctx : {4096u, 32768u, 131072u}) {
        DecodeShape appended = llama8b(ctx + m, 1, m);
        appended.k_type = appended.v_type = t;
        const DecodeShape s = fused_append_shape(appended, Variant::tc);
        const auto p = plan_decode(caps, s, {.variant = Variant::tc});
        EXPECT_LE(p.workgroups, fused_workgroups_per_sm(p) * caps.compute_units)
            << type_name(t) << " m " << m << " ctx " << ctx << ": " << p.describe();
        EXPECT_LE(p.shared_bytes, 49152u) << type_name(t) << " m " << m;
      }
  // The scalar kernel's tail: a copy of 256 floats, 256 codes and 8 scales; 10 floats a row. The
  // tc kernel has none; its two copies of the quantizer's arrays (a row's values and codes, 8
  // scales) and the turbo sides' overlay (a tile's new bits, one tile or two) follow the tables in
  // its region, which grows where the outputs' room does not hold them: not at 32K (six
  // subgroups' or more rows' outputs, or no tables), where llama8b turbo3 m 1 at 4K in four
  // subgroups has 8 KB of tables and 8 KB of outputs.
  DecodePlan p;
  p.variant = Variant::tc;
  p.rows = 4;
  EXPECT_EQ(fused_tail_shared_bytes(p), 0u);
  p.variant = Variant::mag4;
  EXPECT_EQ(fused_tail_shared_bytes(p), 4u * 520 + 4 * 4 * 10);
  for (uint32_t m : {1u, 2u, 3u, 8u})
    for (KvType t : {KvType::turbo3, KvType::f16}) {
      DecodeShape plain = llama8b(32768, 1, m);
      plain.k_type = plain.v_type = t;
      const auto tc = plan_decode(caps, plain, {.variant = Variant::tc});
      DecodeShape fused = plain;
      fused.appends = true;
      EXPECT_EQ(decode_shared_bytes(caps, fused, tc), decode_shared_bytes(caps, plain, tc)) << type_name(t) << " m " << m;
    }
  {  // turbo3 m 1 at 4K, 4 subgroups: 8192 B of tables + 2112 of quantizer + the fresh words (a K
     // and a V row of 33 words) against 8320 of outputs and (m, l)
    DecodeShape plain = llama8b(4096);
    const auto tc = plan_decode(caps, plain, {.variant = Variant::tc});
    DecodeShape fused = plain;
    fused.appends = true;
    EXPECT_EQ(tc.workgroup, 128u) << tc.describe();
    EXPECT_EQ(decode_shared_bytes(caps, fused, tc),
              decode_shared_bytes(caps, plain, tc) + 8192 + 8 * ((2 * 264 + 66 + 1) / 2) - 8320);
  }
  DecodeShape narrow{KvType::f16, KvType::f16, 64, 8, 8, 1, 1, 32768, 64};  // no tables, 1 row
  const auto one_row = plan_decode(caps, narrow, {.variant = Variant::tc});
  DecodeShape narrow_fused = narrow;
  narrow_fused.appends = true;
  const uint32_t grown = decode_shared_bytes(caps, narrow_fused, one_row) - decode_shared_bytes(caps, narrow, one_row);
  EXPECT_EQ(grown, 1088u - 1056u) << one_row.describe();  // (2 copies of 136 words; outputs of 132 uvec2)
}

// A fused call's shape by kernel: the tc kernel's splits cover every token (those that hold the
// new ones store them first), so it plans as the decode call over the appended cache does: at
// 4096 old tokens and one new on an H100, 33 two-step splits in 264 slots (with a tail a group
// beside them, it had taken 22 three-step splits there). The scalar kernel's splits cover the old
// tokens (its tails attend to the new ones).
TEST(Plan, FusedAppendShapeByKernel) {
  PlanRequest tc;
  tc.variant = Variant::tc;
  for (uint32_t m : {1u, 2u, 8u})
    for (uint32_t old : {0u, 100u, 4096u, 8192u, 32768u}) {
      SCOPED_TRACE("m " + std::to_string(m) + ", " + std::to_string(old) + " old tokens");
      DecodeShape appended = llama8b(old + m, 1, m);
      appended.lengths = {old + m};
      const DecodeShape t = fused_append_shape(appended, Variant::tc);
      EXPECT_EQ(t.max_context, old + m);
      EXPECT_EQ(t.lengths, std::vector<uint32_t>{old + m});
      EXPECT_EQ(t.reserved_per_group, 0u);
      EXPECT_TRUE(t.appends);
      const auto fused = plan_decode(h100_tensor_cores(), t, tc);
      const auto plain = plan_decode(h100_tensor_cores(), appended, tc);
      EXPECT_EQ(fused.splits, plain.splits) << fused.describe();
      EXPECT_EQ(fused.chunk, plain.chunk) << fused.describe();
      EXPECT_EQ(fused.workgroup, plain.workgroup) << fused.describe();
      const DecodeShape s = fused_append_shape(appended, Variant::mag4);
      EXPECT_EQ(s.max_context, old);
      EXPECT_EQ(s.lengths, std::vector<uint32_t>{old});
      EXPECT_EQ(s.reserved_per_group, 1u);
      EXPECT_TRUE(s.appends);
      const auto scalar = plan_decode(h100(), s);
      if (old > 0) {
        EXPECT_GE(uint64_t(scalar.splits) * scalar.chunk, old) << scalar.describe();
        EXPECT_LT(uint64_t(scalar.splits - 1) * scalar.chunk, old) << scalar.describe();
      }
    }
  DecodeShape appended = llama8b(4097);
  appended.lengths = {4097};
  const auto fused = plan_decode(h100_tensor_cores(), fused_append_shape(appended, Variant::tc), tc);
  EXPECT_EQ(fused.splits, 33u) << fused.describe();
  EXPECT_EQ(fused.chunk, 128u);
  EXPECT_LE(fused.workgroups, 132u * 2);
}
