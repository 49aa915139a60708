// The tensor-core variant (tc, shaders/decode_tc.comp) against the float64 reference over the
// reference-dequantized cache: the same 1e-4 bound per head as every other variant, over turbo
// type pairs, GQA ratios that need row chunks, several queries, ragged batches, forced split
// counts, softcap and windows. Skipped, with the reason, where the device offers no tc (lavapipe:
// no VK_NV_cooperative_matrix); the plan tests check those reasons without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "attention/plan.hpp"
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

}  // namespace

// Every operand is an f16 hi + lo pair (turbo2's centroids: one f16 value at their exact scale),
// so what is left is float rounding: well under the common bound, and under the ~1e-4 that plain
// f16 operands (11 significant bits) would give. Printed for the record.
TEST(TensorCores, EveryTurboPairIsExact) {
  constexpr double kRoundingBound = 2e-5;
  for (KvType k : {KvType::turbo2, KvType::turbo3, KvType::turbo4})
    for (KvType v : {KvType::turbo2, KvType::turbo3, KvType::turbo4}) {
      DecodeCase c;
      c.k_type = k;
      c.v_type = v;
      c.lengths = {200, 45};
      SKIP_WITHOUT_TC(c);
      const double err = tc_error(c);
      std::printf("tc %s / %s: max relative error per head %.3g\n", std::string(type_name(k)).c_str(),
                  std::string(type_name(v)).c_str(), err);
      EXPECT_LE(err, kRoundingBound) << type_name(k) << " / " << type_name(v);
    }
}

TEST(TensorCores, RowChunksQueriesSoftcapAndWindow) {
  for (uint32_t ratio : {1u, 2u, 4u, 7u})
    for (uint32_t m : {1u, 3u, 8u}) {  // (up to 56 rows: column tiles, partly filled, and row chunks)
      DecodeCase c;
      c.ratio = ratio;
      c.m = m;
      c.lengths = {300, 77, 16};
      c.options.softcap = ratio == 7 ? 25.0f : 0.0f;
      c.options.window = m == 3 ? 100 : 0;
      SKIP_WITHOUT_TC(c);
      EXPECT_LE(tc_error(c), kExactBound) << "GQA " << ratio << " m " << m;
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
