// Type table, head-dimension rules, fp16 conversion and rotation sign vectors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/types.hpp"

namespace {

using tkv::KvType;

TEST(Types, BlockSizesAndBitsPerElement) {
  struct Row {
    KvType type;
    const char* name;
    uint32_t elems, bytes, index_bits;
    double bits_per_elem;
    bool turbo;
    size_t centroids;
  };
  // Straight from the "Types at a glance" table of kv-formats.md.
  const Row rows[] = {
      {KvType::f16, "f16", 1, 2, 16, 16.0, false, 0},
      {KvType::q8_0, "q8_0", 32, 34, 8, 8.5, false, 0},
      {KvType::turbo4, "turbo4", 128, 68, 4, 4.25, true, 16},
      {KvType::turbo3, "turbo3", 128, 50, 3, 3.125, true, 8},
      {KvType::turbo2, "turbo2", 128, 34, 2, 2.125, true, 4},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    const tkv::TypeTraits& t = tkv::traits(r.type);
    EXPECT_EQ(t.type, r.type);
    EXPECT_EQ(t.name, r.name);
    EXPECT_EQ(tkv::type_name(r.type), r.name);
    EXPECT_EQ(t.block_elems, r.elems);
    EXPECT_EQ(t.block_bytes, r.bytes);
    EXPECT_EQ(t.index_bits, r.index_bits);
    EXPECT_EQ(t.is_turbo, r.turbo);
    EXPECT_DOUBLE_EQ(8.0 * t.block_bytes / t.block_elems, r.bits_per_elem);
    EXPECT_EQ(t.codebook.size(), r.centroids);
    EXPECT_EQ(t.midpoints.size(), r.turbo ? r.centroids - 1 : 0);
    if (r.turbo) {
      EXPECT_EQ(t.codebook.size(), size_t{1} << t.index_bits);
    }
  }
}

TEST(Types, CodebooksAscendingSymmetricWithMidpointsBetween) {
  for (KvType type : {KvType::turbo2, KvType::turbo3, KvType::turbo4}) {
    SCOPED_TRACE(std::string(tkv::type_name(type)));
    const auto c = tkv::traits(type).codebook;
    const auto m = tkv::traits(type).midpoints;
    for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(c[i], -c[c.size() - 1 - i]);
    for (size_t i = 0; i < m.size(); ++i) {
      EXPECT_LT(c[i], m[i]);
      EXPECT_LT(m[i], c[i + 1]);
      // The listed midpoints are the halfway points to the 6 decimals the spec prints.
      EXPECT_NEAR(m[i], 0.5f * (c[i] + c[i + 1]), 6e-7f);
    }
    EXPECT_EQ(m[m.size() / 2], 0.0f);
  }
}

TEST(Types, HeadDimRules) {
  struct Row {
    uint32_t head_dim, group, turbo_padded, q8_padded;
  };
  // Turbo: multiple of 128 -> 128-groups; otherwise 64-groups, zero-padded to a multiple of 64.
  const Row rows[] = {{32, 64, 64, 32},    {64, 64, 64, 64},    {80, 64, 128, 96},
                      {96, 64, 128, 96},   {100, 64, 128, 128}, {128, 128, 128, 128},
                      {192, 64, 192, 192}, {256, 128, 256, 256}};
  for (const Row& r : rows) {
    SCOPED_TRACE("head_dim " + std::to_string(r.head_dim));
    EXPECT_NO_THROW(tkv::check_head_dim(r.head_dim));
    EXPECT_EQ(tkv::turbo_group_size(r.head_dim), r.group);

    EXPECT_EQ(tkv::padded_head_dim(KvType::f16, r.head_dim), r.head_dim);
    EXPECT_EQ(tkv::blocks_per_row(KvType::f16, r.head_dim), r.head_dim);
    EXPECT_EQ(tkv::block_bytes(KvType::f16, r.head_dim), 2u);
    EXPECT_EQ(tkv::row_bytes(KvType::f16, r.head_dim), 2u * r.head_dim);

    EXPECT_EQ(tkv::padded_head_dim(KvType::q8_0, r.head_dim), r.q8_padded);
    EXPECT_EQ(tkv::blocks_per_row(KvType::q8_0, r.head_dim), r.q8_padded / 32);
    EXPECT_EQ(tkv::block_bytes(KvType::q8_0, r.head_dim), 34u);
    EXPECT_EQ(tkv::row_bytes(KvType::q8_0, r.head_dim), 34u * (r.q8_padded / 32));

    // Block bytes of a group: G=128 -> 34/50/68, G=64 -> 18/26/36 (turbo4 keeps its reserved f16).
    const bool big = r.group == 128;
    const struct {
      KvType type;
      uint32_t bytes;
    } turbo[] = {{KvType::turbo2, big ? 34u : 18u},
                 {KvType::turbo3, big ? 50u : 26u},
                 {KvType::turbo4, big ? 68u : 36u}};
    for (const auto& t : turbo) {
      SCOPED_TRACE(std::string(tkv::type_name(t.type)));
      const uint32_t blocks = r.turbo_padded / r.group;
      EXPECT_EQ(tkv::padded_head_dim(t.type, r.head_dim), r.turbo_padded);
      EXPECT_EQ(tkv::blocks_per_row(t.type, r.head_dim), blocks);
      EXPECT_EQ(tkv::block_bytes(t.type, r.head_dim), t.bytes);
      EXPECT_EQ(tkv::row_bytes(t.type, r.head_dim), size_t{blocks} * t.bytes);
    }
  }
}

TEST(Types, HeadDimOutOfRangeThrows) {
  for (uint32_t bad : {0u, 257u, 512u}) {
    SCOPED_TRACE(bad);
    try {
      tkv::check_head_dim(bad);
      ADD_FAILURE() << "no throw";
    } catch (const tkv::Error& e) {
      EXPECT_EQ(e.code(), tkv::ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("head_dim"), std::string::npos) << e.what();
    }
    EXPECT_THROW(tkv::turbo_group_size(bad), tkv::Error);
    EXPECT_THROW(tkv::padded_head_dim(KvType::turbo3, bad), tkv::Error);
    EXPECT_THROW(tkv::row_bytes(KvType::q8_0, bad), tkv::Error);
  }
  EXPECT_NO_THROW(tkv::check_head_dim(1));
  EXPECT_NO_THROW(tkv::check_head_dim(256));
}

TEST(Types, ParseType) {
  for (KvType t : tkv::kAllTypes) EXPECT_EQ(tkv::parse_type(tkv::type_name(t)), t);
  for (const char* bad : {"turbo5", "", "Turbo3", "q8", "f32"}) {
    SCOPED_TRACE(bad);
    try {
      tkv::parse_type(bad);
      ADD_FAILURE() << "no throw";
    } catch (const tkv::Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(e.code(), tkv::ErrorCode::invalid_argument);
      EXPECT_NE(msg.find("'" + std::string(bad) + "'"), std::string::npos) << msg;
      for (const char* ok : {"f16", "q8_0", "turbo2", "turbo3", "turbo4"})
        EXPECT_NE(msg.find(ok), std::string::npos) << msg;
    }
  }
}

// The sign strings in the code must equal the spec's 128-bit masks (bit i set where sign is -1).
// The masks are written here independently of the code, as (high 64 bits, low 64 bits).
TEST(Types, RotationSignsMatchMasks) {
  struct Mask {
    uint64_t hi, lo;
  };
  const Mask s1{0x49f250a9a4c63bbbull, 0x42f85949e46a0359ull};
  const Mask s2{0xbea56562b7a5357aull, 0x3f628fdc16acee90ull};
  const auto check = [](std::span<const float> signs, Mask m) {
    ASSERT_EQ(signs.size(), 128u);
    for (uint32_t i = 0; i < 128; ++i) {
      const uint64_t word = i < 64 ? m.lo : m.hi;
      const bool negative = (word >> (i % 64)) & 1u;
      EXPECT_EQ(signs[i], negative ? -1.0f : 1.0f) << "index " << i;
    }
  };
  check(tkv::rotation_signs1(), s1);
  check(tkv::rotation_signs2(), s2);
}

// --- fp16 -------------------------------------------------------------------------------------

// Value of a half computed from its fields with ldexp, independent of the code under test.
double half_value(uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0x1f) return mant ? std::numeric_limits<double>::quiet_NaN()
                               : sign * std::numeric_limits<double>::infinity();
  if (exp == 0) return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(Fp16, HalfToFloatAllValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = tkv::half_to_float(static_cast<uint16_t>(h));
    const double want = half_value(static_cast<uint16_t>(h));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << std::hex << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
      // Every half survives the round trip.
      EXPECT_EQ(tkv::float_to_half(f), h) << std::hex << h;
    }
  }
}

TEST(Fp16, KnownValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(tkv::float_to_half(0.0f), 0x0000);
  EXPECT_EQ(tkv::float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(tkv::float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(tkv::float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(tkv::float_to_half(65504.0f), 0x7bff);     // max half
  EXPECT_EQ(tkv::float_to_half(65519.0f), 0x7bff);     // below the halfway point to 65536
  EXPECT_EQ(tkv::float_to_half(65520.0f), 0x7c00);     // halfway: ties to even = inf
  EXPECT_EQ(tkv::float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(tkv::float_to_half(inf), 0x7c00);
  EXPECT_EQ(tkv::float_to_half(-inf), 0xfc00);
  const uint16_t qnan = tkv::float_to_half(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(qnan & 0x7c00, 0x7c00);
  EXPECT_NE(qnan & 0x03ff, 0);
  // A signalling NaN whose payload lives only in the low bits must not turn into inf.
  const uint16_t snan = tkv::float_to_half(std::bit_cast<float>(0x7f800001u));
  EXPECT_NE(snan & 0x03ff, 0);
  EXPECT_EQ(tkv::float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(tkv::float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(tkv::float_to_half(std::ldexp(1.0f, -25)), 0x0000);  // tie -> even (0)
  EXPECT_EQ(tkv::float_to_half(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(tkv::float_to_half(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 ulp: tie -> even (2)
  EXPECT_EQ(tkv::float_to_half(std::ldexp(1023.5f, -24)), 0x0400);  // rounds up into normal
  EXPECT_EQ(tkv::float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);        // tie -> even
  EXPECT_EQ(tkv::float_to_half(1.0f + 3.0f * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even
  EXPECT_EQ(tkv::float_to_half(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(tkv::float_to_half(-std::ldexp(1.0f, -30)), 0x8000);
}

// Random floats against a reference nearest-even search over all finite halves.
TEST(Fp16, RandomFloatsRoundToNearestEven) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> expo(-27.0f, 17.0f);
  for (int n = 0; n < 200000; ++n) {
    // Mix arbitrary bit patterns with values spread over the half range (incl. subnormals).
    float f = std::bit_cast<float>(bits(rng));
    if (n % 2) f = std::copysign(std::exp2(expo(rng)), f);
    if (std::isnan(f)) continue;
    const uint16_t got = tkv::float_to_half(f);
    const double a = std::fabs(static_cast<double>(f));
    uint16_t want;
    if (a >= 65520.0) {
      want = 0x7c00;
    } else {
      // Positive halves 0..0x7bff are monotonic in value: find the neighbours by binary search.
      uint32_t lo = 0, hi = 0x7bff;
      while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (half_value(static_cast<uint16_t>(mid)) <= a) lo = mid; else hi = mid - 1;
      }
      want = static_cast<uint16_t>(lo);
      if (lo < 0x7bff) {
        const double dl = a - half_value(static_cast<uint16_t>(lo));
        const double du = half_value(static_cast<uint16_t>(lo + 1)) - a;
        if (du < dl || (du == dl && (lo & 1))) want = static_cast<uint16_t>(lo + 1);
      }
    }
    if (std::signbit(f)) want |= 0x8000;
    ASSERT_EQ(got, want) << "f = " << f << " bits " << std::hex << std::bit_cast<uint32_t>(f);
  }
}

}  // namespace
