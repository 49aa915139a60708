// Dequant variants and profile modes: every variant passes the exactness bound; mode 0 is exact;
// modes 1-3 read only the bytes they claim (outputs are unchanged when the bytes they must not
// read are poisoned).
#include <gtest/gtest.h>

#include <random>

#include "attention/plan.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

// Whether the device offers variant v for the case (tc needs tensor cores: test_decode_tc).
bool offered(const DecodeCase& c, Variant v) {
  if (v != Variant::tc) return true;
  return tensor_core_problem(shared_context()->caps(), decode_shape(c)).empty();
}

double run_with(const DecodeCase& c, Variant v, ProfileMode mode = ProfileMode::full) {
  auto f = fill_cache(c);
  const auto q = random_queries(c);
  DecodeOptions o = c.options;
  o.variant = v;
  o.profile_mode = mode;
  const auto out = run_decode(f, c, q, o);
  const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q, c.options);
  return max_head_error(out, ref, c.head_dim);
}

// What of one reference block (kv-formats.md) a mode must not read: everything, the index bits,
// or the signs. The device stores a turbo element as a magnitude and a sign bit
// (kvcache/layout.hpp), so the signs are poisoned by negating random elements' centroids
// (index i -> 2^bits - 1 - i), which flips their sign bits and nothing else.
enum class Poison { everything, indices, signs };

void poison_block(KvType t, uint32_t group, uint8_t* block, Poison what, std::mt19937& rng) {
  const uint32_t header = t == KvType::turbo4 ? 4 : 2;
  const uint32_t bytes = block_bytes(t, group == 64 ? 64 : 128);
  if (what == Poison::signs) {
    uint8_t* body = block + header;
    for (uint32_t j = 0; j < group; ++j) {
      if (rng() & 1u) continue;
      if (t == KvType::turbo4) body[j / 2] ^= uint8_t(15u << (4 * (j % 2)));
      else body[j / 4] ^= uint8_t(3u << (2 * (j % 4)));
      if (t == KvType::turbo3) body[group / 4 + j / 8] ^= uint8_t(1u << (j % 8));
    }
    return;
  }
  uint32_t from = header, to = bytes;
  if (what == Poison::everything) from = 0;
  for (uint32_t i = from; i < to; ++i) block[i] = uint8_t(rng());
  if (what == Poison::everything) block[1] &= 0x3f;  // keep the norm finite
}

// Decode output of `mode` over the cache, then over the same cache with `what` poisoned.
std::pair<std::vector<float>, std::vector<float>> before_after(KvType type, ProfileMode mode, Poison what) {
  DecodeCase c;
  c.k_type = c.v_type = type;
  c.lengths = {150, 70};
  c.m = 2;
  auto f = fill_cache(c);
  const auto q = random_queries(c);
  DecodeOptions o;
  o.profile_mode = mode;
  const auto before = run_decode(f, c, q, o);
  std::mt19937 rng(9);
  const uint32_t group = type == KvType::q8_0 ? 32 : turbo_group_size(c.head_dim);
  const uint32_t bb = block_bytes(type, c.head_dim);
  for (size_t b = 0; b < f.seqs.size(); ++b)
    for (Side side : {Side::k, Side::v})
      for (uint32_t h = 0; h < c.kv_heads; ++h) {
        auto bytes = f.cache->export_rows(f.seqs[b], 0, side, h, 0, c.lengths[b]);
        for (size_t off = 0; off < bytes.size(); off += bb) {
          if (type == KvType::q8_0) {
            if (what == Poison::everything) bytes[off + 1] &= 0x3f;
            for (uint32_t i = what == Poison::everything ? 0 : 2; i < bb; ++i)
              if (!(what == Poison::everything && i == 1)) bytes[off + i] = uint8_t(rng());
            if (what == Poison::everything) bytes[off + 1] &= 0x3f;
          } else {
            poison_block(type, group, bytes.data() + off, what, rng);
          }
        }
        f.cache->import_rows(f.seqs[b], 0, side, h, 0, bytes);
      }
  return {before, run_decode(f, c, q, o)};
}

}  // namespace

TEST(Variants, EveryVariantIsExactForEveryTurboType) {
  for (Variant v : kAllVariants)
    for (KvType t : {KvType::turbo2, KvType::turbo3, KvType::turbo4}) {
      DecodeCase c;
      c.k_type = t;
      c.v_type = t == KvType::turbo2 ? KvType::turbo4 : t;
      c.lengths = {200, 45};
      c.m = 3;
      c.options.softcap = 25.0f;
      if (!offered(c, v)) continue;
      EXPECT_LE(run_with(c, v), 1e-4) << variant_name(v) << " " << type_name(t);
    }
}

TEST(Variants, AtOtherHeadDimsAndGqa) {
  for (Variant v : kAllVariants)
    for (uint32_t hd : {64u, 96u, 256u}) {
      DecodeCase c;
      c.k_type = KvType::turbo3;
      c.v_type = KvType::turbo3;
      c.head_dim = hd;
      c.ratio = 7;
      c.lengths = {130};
      if (!offered(c, v)) continue;
      EXPECT_LE(run_with(c, v), 1e-4) << variant_name(v) << " hd " << hd;
    }
}

TEST(Modes, ModeZeroIsExact) {
  for (KvType t : kAllTypes) {
    DecodeCase c;
    c.k_type = c.v_type = t;
    c.lengths = {90};
    EXPECT_LE(run_with(c, Variant::automatic, ProfileMode::full), 1e-4) << type_name(t);
  }
}

TEST(Modes, ModeOneReadsNothing) {
  for (KvType t : kAllTypes) {
    const auto [before, after] = before_after(t, ProfileMode::zero, Poison::everything);
    EXPECT_EQ(before, after) << type_name(t);
  }
}

TEST(Modes, ModeTwoReadsOnlyTheNorms) {
  for (KvType t : {KvType::q8_0, KvType::turbo2, KvType::turbo3, KvType::turbo4}) {
    const auto [before, after] = before_after(t, ProfileMode::norm_only, Poison::indices);
    EXPECT_EQ(before, after) << type_name(t);
  }
}

TEST(Modes, ModeThreeSkipsTheSignBits) {
  const auto [before, after] = before_after(KvType::turbo3, ProfileMode::no_sign, Poison::signs);
  EXPECT_EQ(before, after);
  // (The poisoning is real: mode 0 sees it.)
  const auto [b0, a0] = before_after(KvType::turbo3, ProfileMode::full, Poison::signs);
  EXPECT_NE(b0, a0);
  // ... but it does read the index bits: poisoning those changes the output.
  const auto [b2, a2] = before_after(KvType::turbo3, ProfileMode::no_sign, Poison::indices);
  EXPECT_NE(b2, a2);
}

TEST(Modes, ModeThreeIsOnlyForTurboTypes) {
  DecodeCase c;
  c.k_type = c.v_type = KvType::q8_0;
  c.lengths = {20};
  EXPECT_THROW(run_with(c, Variant::automatic, ProfileMode::no_sign), Error);
}
