// The tensor-core variant (tc, shaders/decode_tc.comp) against the float64 reference over the
// reference-dequantized cache: the same 1e-4 bound per head as every other variant, over turbo,
// f16 and q8_0 type pairs, GQA ratios that need row chunks, several queries, ragged batches,
// forced split counts, softcap and windows. Skipped, with the reason, where the device offers no
// tc (lavapipe: no VK_NV_cooperative_matrix); the plan tests check those reasons without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>

#include "attention/plan.hpp"
#include "kvcache/error.hpp"
#include "kvcache/vk/coopmat_khr.hpp"
#include "kvcache/vk/shader_registry.hpp"
#include "decode_fixture.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

constexpr double kExactBound = 1e-4;

std::string problem(const DecodeCase& c, ProfileMode mode = ProfileMode::full) {
  return tensor_core_problem(shared_context()->caps(), decode_shape(c), mode);
}

double tc_error(const DecodeCase& c, uint32_t splits = 0) {
  auto f = fill_cache(c);
  const auto q = random_queries(c);
  DecodeOptions o = c.options;
  o.variant = Variant::tc;
  o.splits = splits;
  const auto out = run_decode(f, c, q, o);
  const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q, c.options);
  return max_head_error(out, ref, c.head_dim);
}

#define SKIP_WITHOUT_TC(c)                                           \
  if (const std::string why = problem(c); !why.empty()) GTEST_SKIP() << "no tc here: " << why

// Operands exact up to float rounding: a pair's error (ragged batch of two, the wide form at m 2
// through a forced split count, which the plan gives only to splits of 8 steps or more), printed
// for the record and held to tc's rounding bound (decode_fixture.hpp).
const double kRoundingBound = rounding_bound(Variant::tc);
void expect_rounding_only(KvType k, KvType v, uint32_t head_dim, uint32_t m) {
  DecodeCase c;
  c.k_type = k;
  c.v_type = v;
  c.head_dim = head_dim;
  c.m = m;
  c.lengths = {200, 45};
  const double err = tc_error(c, m == 1 ? 0 : 1);
  std::printf("tc %s / %s, head dim %u, m %u: max relative error per head %.3g\n", std::string(type_name(k)).c_str(),
              std::string(type_name(v)).c_str(), head_dim, m, err);
  EXPECT_LE(err, kRoundingBound) << type_name(k) << " / " << type_name(v) << " head dim " << head_dim << " m " << m;
}

}  // namespace

// Every operand is an f16 hi + lo pair (turbo2's centroids: one f16 value at their exact scale),
// so what is left is float rounding: well under the common bound, and under the ~1e-4 that plain
// f16 operands (11 significant bits) would give. Printed for the record. One query (4 rows: hi and
// lo columns side by side) and two (8 rows: the wide form, lo halves in matrices of their own; a
// forced split count keeps it, which the plan gives only to splits of 8 steps or more).
TEST(TensorCores, EveryTurboPairIsExact) {
  SKIP_WITHOUT_TC(DecodeCase{});
  for (uint32_t m : {1u, 2u})
    for (KvType k : {KvType::turbo2, KvType::turbo3, KvType::turbo4})
      for (KvType v : {KvType::turbo2, KvType::turbo3, KvType::turbo4}) expect_rounding_only(k, v, 128, m);
}

// Workgroups of 6 and 8 subgroups (a tuning request; the first four hold the query rows, every
// one streams tiles): turbo, f16 and q8_0, 4 rows and the wide form, the plan's and forced split
// counts, GQA 7 with softcap and several queries.
TEST(TensorCores, SixAndEightSubgroupsAreExact) {
  SKIP_WITHOUT_TC(DecodeCase{});
  for (uint32_t sgs : {6u, 8u})
    for (KvType t : {KvType::turbo3, KvType::f16, KvType::q8_0})
      for (uint32_t m : {1u, 2u})
        for (uint32_t splits : {0u, 1u, 3u}) {
          DecodeCase c;
          c.k_type = t;
          c.v_type = t == KvType::turbo3 ? KvType::turbo2 : t;
          c.m = m;
          c.lengths = {300, 77};
          c.options.subgroups = sgs;
          EXPECT_LE(tc_error(c, splits), kExactBound)
              << sgs << " subgroups, " << type_name(t) << " m " << m << " splits " << splits;
        }
  DecodeCase c;
  c.ratio = 7;
  c.m = 3;
  c.lengths = {500, 16};
  c.options.softcap = 25.0f;
  c.options.subgroups = 6;
  EXPECT_LE(tc_error(c), kExactBound);
}

// Up to 56 rows: 1 to 8 rows a chunk, partly filled, and row chunks. The plan's split count (short
// splits: chunks of up to 4 rows) and a forced one (wide chunks of up to 8 rows).
TEST(TensorCores, RowChunksQueriesSoftcapAndWindow) {
  for (uint32_t splits : {0u, 3u})
    for (uint32_t ratio : {1u, 2u, 4u, 7u})
      for (uint32_t m : {1u, 3u, 8u}) {
        DecodeCase c;
        c.ratio = ratio;
        c.m = m;
        c.lengths = {300, 77, 16};
        c.options.softcap = ratio == 7 ? 25.0f : 0.0f;
        c.options.window = m == 3 ? 100 : 0;
        SKIP_WITHOUT_TC(c);
        EXPECT_LE(tc_error(c, splits), kExactBound) << "GQA " << ratio << " m " << m << " splits " << splits;
      }
}

// The query rows on the MMAs' 16-row side (rows16: queries as A, the tile's centroids as B, P
// straight from the scores' accumulators), on request and where the plan takes it (more than 8
// rows): every turbo pair at 16 rows to rounding, head dims 128 and 64, and the rows types (f16,
// q8_0: their fragment slots, q8_0's scales per score column and per P); 4 live rows of 16, 12, 14
// (GQA 7 x 2) and 21 rows (two chunks of 11) with softcap, window, ragged lengths and split counts;
// scores far apart. Skipped, with the reason, where B fragments are not in mma's order (NV matrices).
TEST(TensorCores, RowsOnTheMmasSixteenRowSideAreExact) {
  SKIP_WITHOUT_TC(DecodeCase{});
  DecodeCase probe;
  probe.m = 4;
  PlanRequest asked;
  asked.rows16 = true;
  if (const std::string why = rows16_problem(shared_context()->caps(), decode_shape(probe), asked); !why.empty())
    GTEST_SKIP() << "no rows16 here: " << why;
  auto check16 = [](KvType k, KvType v, uint32_t hd) {  // 16 rows (m 4)
    DecodeCase c;
    c.k_type = k;
    c.v_type = v;
    c.head_dim = hd;
    c.m = 4;
    c.lengths = {200, 45};
    c.options.rows16 = true;
    const double err = tc_error(c);
    std::printf("tc rows16 %s / %s, head dim %u, 16 rows: max relative error per head %.3g\n",
                std::string(type_name(k)).c_str(), std::string(type_name(v)).c_str(), hd, err);
    EXPECT_LE(err, kRoundingBound) << type_name(k) << " / " << type_name(v) << " head dim " << hd;
  };
  for (uint32_t hd : {128u, 64u})
    for (KvType k : {KvType::turbo2, KvType::turbo3, KvType::turbo4})
      for (KvType v : {KvType::turbo2, KvType::turbo3, KvType::turbo4})
        if (hd == 128 || k == v) check16(k, v, hd);
  const std::pair<KvType, KvType> rows_pairs[] = {{KvType::f16, KvType::f16},     {KvType::q8_0, KvType::q8_0},
                                                  {KvType::q8_0, KvType::f16},    {KvType::turbo3, KvType::q8_0},
                                                  {KvType::f16, KvType::turbo3},  {KvType::q8_0, KvType::turbo4}};
  for (uint32_t hd : {128u, 64u})
    for (const auto& [k, v] : rows_pairs) check16(k, v, hd);
  struct Shape {
    uint32_t ratio, m;
  };
  for (const Shape sh : {Shape{4, 1}, Shape{4, 3}, Shape{7, 2}, Shape{7, 3}})
    for (uint32_t splits : {0u, 1u, 3u}) {
      DecodeCase c;
      c.ratio = sh.ratio;
      c.m = sh.m;
      c.lengths = {300, 77, 16};
      c.options.softcap = sh.ratio == 7 ? 25.0f : 0.0f;
      c.options.window = sh.m == 3 ? 100 : 0;
      c.options.rows16 = true;
      EXPECT_LE(tc_error(c, splits), kExactBound) << "GQA " << sh.ratio << " m " << sh.m << " splits " << splits;
    }
  DecodeCase c;
  c.k_outlier = 200.0f;
  c.m = 3;
  c.lengths = {700};
  c.options.rows16 = true;
  EXPECT_LE(tc_error(c), kExactBound) << "outliers x200";
  // 8 subgroups (the plan's for turbo pairs, here asked for): the first 4 hold the query rows,
  // every 8 fold into 4.
  for (auto [k, v] : {std::pair{KvType::turbo3, KvType::turbo3}, std::pair{KvType::q8_0, KvType::turbo4}})
    for (uint32_t splits : {0u, 3u}) {
      DecodeCase e;
      e.k_type = k;
      e.v_type = v;
      e.m = 4;
      e.lengths = {900, 130};
      e.options.rows16 = true;
      e.options.subgroups = 8;
      EXPECT_LE(tc_error(e, splits), kExactBound) << "8 subgroups, " << type_name(k) << " / " << type_name(v);
    }
}

// f16 and q8_0 rows (exact operands, read straight into the fragments with their dims in the
// fragments' own order; q8_0's block scales applied to per-block scores and per-block P): alone,
// together and beside a turbo side, head dims 128 and 64, one query and the wide form; then row
// chunks, several queries, softcap and a window.
TEST(TensorCores, RowTypesAreExact) {
  SKIP_WITHOUT_TC(DecodeCase{});
  const std::pair<KvType, KvType> pairs[] = {
      {KvType::f16, KvType::f16},    {KvType::f16, KvType::turbo3}, {KvType::turbo3, KvType::f16},
      {KvType::q8_0, KvType::q8_0},  {KvType::q8_0, KvType::f16},   {KvType::turbo3, KvType::q8_0}};
  for (uint32_t hd : {128u, 64u})
    for (uint32_t m : {1u, 2u})
      for (const auto& [k, v] : pairs) expect_rounding_only(k, v, hd, m);
  for (KvType t : {KvType::f16, KvType::q8_0})
    for (uint32_t splits : {0u, 3u}) {
      DecodeCase c;
      c.k_type = c.v_type = t;
      c.ratio = 7;
      c.m = 3;
      c.lengths = {300, 77, 16};
      c.options.softcap = 25.0f;
      c.options.window = 100;
      EXPECT_LE(tc_error(c, splits), kExactBound) << type_name(t) << " splits " << splits;
    }
}

TEST(TensorCores, SmallHeadDims) {
  for (uint32_t hd : {64u, 40u}) {
    DecodeCase c;
    c.head_dim = hd;
    c.k_type = KvType::turbo4;
    c.lengths = {150};
    SKIP_WITHOUT_TC(c);
    EXPECT_LE(tc_error(c), kExactBound) << "head dim " << hd;
  }
}

TEST(TensorCores, AnySplitCountIsExact) {
  DecodeCase c;
  c.lengths = {3000};
  c.seed = 5;
  SKIP_WITHOUT_TC(c);
  for (uint32_t splits : {0u, 1u, 3u, 7u, 40u}) EXPECT_LE(tc_error(c, splits), kExactBound) << "splits " << splits;
}

TEST(TensorCores, LargeScoresAndNorms) {
  // Outlier K channels x200 push scores far apart: the running maximum moves often and most
  // probabilities underflow to 0 in f16 lo halves.
  DecodeCase c;
  c.k_outlier = 200.0f;
  c.lengths = {700};
  SKIP_WITHOUT_TC(c);
  EXPECT_LE(tc_error(c), kExactBound);
}

// The NV -> KHR cooperative-matrix rewrite (kvcache/vk/coopmat_khr.hpp, the default) on the
// embedded shaders, checked word by word without a GPU: no NV matrix instruction is left, every
// matrix type got the use its shape names, loads and stores keep their operands. (decode_tc's f16
// 16x8 is also the A of its 16x8x8 MMAs, so it gets an A twin and a pointer to it.)
TEST(TensorCores, KhrRewriteOfTheEmbeddedShaders) {
  for (const char* name : {"decode_tc", "decode_tc_append", "coopmat_probe"}) {
    const auto words = vk::find_shader(name);
    ASSERT_FALSE(words.empty()) << name;
    const auto out = vk::coopmat_nv_to_khr(words);
    ASSERT_GT(out.size(), words.size()) << name;
    const bool k8 = std::string(name) != "coopmat_probe";  // (16x8x8 MMAs: decode_tc's)
    EXPECT_EQ(out[3], words[3] + 3 + (k8 ? 2 : 0)) << name << ": the constants 0, 1, 2 (and the A twin, its pointer)";
    std::map<uint32_t, uint32_t> constant;
    size_t nv_types = 0, khr_types = 0, khr_muladds = 0, nv_muladds = 0, uses[3] = {};
    bool khr_capability = false;
    for (size_t i = 5; i < words.size(); i += words[i] >> 16) {
      const uint32_t op = words[i] & 0xffffu;
      nv_types += op == 5358;
      nv_muladds += op == 5361;
    }
    for (size_t i = 5; i < out.size(); i += out[i] >> 16) {
      const uint32_t op = out[i] & 0xffffu, n = out[i] >> 16;
      ASSERT_GT(n, 0u);
      EXPECT_TRUE(op < 5358 || op > 5362) << name << ": NV opcode " << op << " left";
      if (op == 43 && n == 4) constant[out[i + 2]] = out[i + 3];
      if (op == 17) {
        EXPECT_NE(out[i + 1], 5357u) << name;
        khr_capability = khr_capability || out[i + 1] == 6022;
      }
      if (op == 4456) {
        ++khr_types;
        ASSERT_EQ(n, 7u);
        ASSERT_TRUE(constant.count(out[i + 6])) << name << ": the use is a constant declared before the type";
        const uint32_t use = constant[out[i + 6]];
        ASSERT_LT(use, 3u);
        ++uses[use];
      }
      khr_muladds += op == 4459;
    }
    EXPECT_TRUE(khr_capability) << name;
    EXPECT_EQ(khr_types, nv_types + (k8 ? 1 : 0)) << name;
    EXPECT_EQ(khr_muladds, nv_muladds) << name;
    EXPECT_EQ(uses[0], k8 ? 2u : 1u) << name << ": A types (f16 16x16; k8: f16 16x8)";
    EXPECT_EQ(uses[1], k8 ? 2u : 1u) << name << ": B types (f16 16x8; k8: f16 8x8)";
    EXPECT_EQ(uses[2], 1u) << name << ": one accumulator type (f32 16x8)";
  }
  EXPECT_TRUE(vk::coopmat_nv_to_khr(vk::find_shader("stream_read")).empty()) << "no matrices, no rewrite";
}

// A module it cannot read is an error that says so, never a half-rewritten module.
TEST(TensorCores, KhrRewriteRefusesBrokenModules) {
  const auto words = vk::find_shader("decode_tc");
  ASSERT_FALSE(words.empty());
  // Cut at the first instruction past the middle, whose first word then claims more words than
  // are left.
  size_t at = 5;
  while (at < words.size() / 2 && (words[at] >> 16) != 0) at += words[at] >> 16;
  ASSERT_LT(at, words.size());
  std::vector<uint32_t> truncated(words.begin(), words.begin() + at + 1);
  truncated.back() = 0x7fff0000u | 5358u;
  EXPECT_THROW(vk::coopmat_nv_to_khr(truncated), Error);
  std::vector<uint32_t> not_spirv(words.begin(), words.end());
  not_spirv[0] = 0x12345678u;
  EXPECT_THROW(vk::coopmat_nv_to_khr(not_spirv), Error);
  std::vector<uint32_t> zero_length(words.begin(), words.end());
  zero_length[5] = 0;  // a zero word count would loop forever
  EXPECT_THROW(vk::coopmat_nv_to_khr(zero_length), Error);
}
