// Helpers for the KV-cache suites: random rows, the CPU reference bytes, and the comparison of
// GPU-quantized rows against the CPU codec with the tolerance of docs/architecture.md
// ("Correctness model"), stated once here so every suite applies the same rule.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvcache/codec.hpp"
#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/types.hpp"
#include "kvcache/vk/context.hpp"

namespace tkv::test {

// One context per suite; pipelines go to a private temp cache so runs never touch ~/.cache.
inline std::shared_ptr<vk::Context> make_test_context() {
  vk::ContextOptions o;
  o.cache_dir = (std::filesystem::temp_directory_path() / "tkv-test-pipelines").string();
  return vk::Context::create(o);
}

// Random rows [row][dim] of a Gaussian at a per-row scale between 1e-2 and 30 (log-uniform), with
// a few outlier channels (x20) shared by all rows, as real K/V activations have. Never all zeros.
inline std::vector<float> random_rows(std::mt19937& rng, size_t rows, uint32_t dim, uint32_t outliers = 3) {
  std::normal_distribution<float> nd;
  std::uniform_real_distribution<float> log_scale(std::log(1e-2f), std::log(30.0f));
  std::uniform_int_distribution<uint32_t> channel(0, dim - 1);
  std::vector<uint32_t> hot(outliers);
  for (auto& c : hot) c = channel(rng);
  std::vector<float> x(rows * dim);
  for (size_t r = 0; r < rows; ++r) {
    const float scale = std::exp(log_scale(rng));
    float* row = x.data() + r * dim;
    for (uint32_t d = 0; d < dim; ++d) row[d] = nd(rng) * scale;
    for (uint32_t c : hot) row[c] *= 20.0f;
    row[channel(rng)] += scale;  // a Gaussian row is never exactly zero, but make sure
  }
  return x;
}

inline std::vector<uint16_t> to_halves(std::span<const float> x) {
  std::vector<uint16_t> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = float_to_half(x[i]);
  return h;
}

// The floats an f16 input stands for: the CPU reference quantizes these.
inline std::vector<float> half_rounded(std::span<const float> x) {
  std::vector<float> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = half_to_float(float_to_half(x[i]));
  return r;
}

// Rows of one KV head out of [token][head][dim] data.
inline std::vector<float> head_rows(std::span<const float> x, uint32_t tokens, uint32_t heads, uint32_t dim,
                                    uint32_t head) {
  std::vector<float> out(size_t(tokens) * dim);
  for (uint32_t t = 0; t < tokens; ++t)
    std::copy_n(x.data() + (size_t(t) * heads + head) * dim, dim, out.data() + size_t(t) * dim);
  return out;
}

// CPU reference bytes of `rows` rows of head_dim floats.
inline std::vector<uint8_t> reference_bytes(KvType type, uint32_t head_dim, std::span<const float> x) {
  const size_t rb = row_bytes(type, head_dim), rows = x.size() / head_dim;
  std::vector<uint8_t> out(rows * rb);
  for (size_t r = 0; r < rows; ++r)
    quantize_row(type, head_dim, x.subspan(r * head_dim, head_dim), std::span(out).subspan(r * rb, rb));
  return out;
}

// Differences the tolerance let through, by kind.
struct Tolerated {
  uint64_t turbo_index = 0, turbo_norm = 0, q8_scale = 0, q8_value = 0;
  uint64_t total() const { return turbo_index + turbo_norm + q8_scale + q8_value; }
  void add(const Tolerated& o) {
    turbo_index += o.turbo_index;
    turbo_norm += o.turbo_norm;
    q8_scale += o.q8_scale;
    q8_value += o.q8_value;
  }
  std::string str() const {
    return "turbo index " + std::to_string(turbo_index) + ", turbo norm " + std::to_string(turbo_norm) + ", q8_0 d " +
           std::to_string(q8_scale) + ", q8_0 value " + std::to_string(q8_value);
  }
};

namespace detail {

inline uint16_t load_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }

// Index j of a turbo block, decoded from the spec's bit layout (kv-formats.md), not from the codec.
inline uint32_t turbo_index(KvType type, uint32_t g, const uint8_t* blk, uint32_t j) {
  switch (type) {
    case KvType::turbo2:
      return (blk[2 + j / 4] >> (2 * (j % 4))) & 3u;
    case KvType::turbo3:
      return ((blk[2 + j / 4] >> (2 * (j % 4))) & 3u) | (((blk[2 + g / 4 + j / 8] >> (j % 8)) & 1u) << 2);
    default:
      return (blk[4 + j / 2] >> (4 * (j % 2))) & 15u;
  }
}

// |a - b| in units of the last place of two non-negative halves (their bit patterns are ordered).
inline uint32_t half_ulps(uint16_t a, uint16_t b) { return a > b ? a - b : b - a; }

}  // namespace detail

// Compares one GPU-quantized reference row with the CPU codec's bytes for the same input x
// (head_dim floats). Returns "" when they agree within the tolerance, else what differs. The
// tolerance (the only legitimate source of difference is fp32 rounding of a different but valid
// evaluation order, e.g. the GPU's division or sqrt):
//   f16    exact.
//   q8_0   d (f16) by at most one ulp; an int8 value by 1 only where x * (1/d) lies within 1e-5
//          (relative) of a .5 rounding boundary.
//   turbo  an index by one step only where the rotated value y (x / ||x|| per group, then
//          rotate_group, both on the CPU) lies within 1e-5 of the midpoint between the two indices
//          (never in an all-zero group: its rotated values are exactly 0, which goes up);
//          the stored norm by at most one f16 ulp from the CPU's norm computed with the GPU's
//          indices (an index that legitimately moves also moves the norm correction r).
inline std::string compare_row(KvType type, uint32_t head_dim, std::span<const float> x, const uint8_t* gpu,
                               const uint8_t* cpu, Tolerated& tol) {
  const size_t rb = row_bytes(type, head_dim);
  if (std::memcmp(gpu, cpu, rb) == 0) return {};
  const TypeTraits& t = traits(type);
  const uint32_t padded = padded_head_dim(type, head_dim);
  const uint32_t nblocks = blocks_per_row(type, head_dim), bb = block_bytes(type, head_dim);
  const uint32_t be = padded / nblocks;
  std::vector<float> row(padded, 0.0f);
  std::copy(x.begin(), x.end(), row.begin());

  if (type == KvType::f16) {
    for (uint32_t i = 0; i < head_dim; ++i)
      if (detail::load_u16(gpu + 2 * i) != detail::load_u16(cpu + 2 * i))
        return "f16 element " + std::to_string(i) + ": gpu " + std::to_string(detail::load_u16(gpu + 2 * i)) + " cpu " +
               std::to_string(detail::load_u16(cpu + 2 * i));
    return {};
  }

  Tolerated local;
  for (uint32_t b = 0; b < nblocks; ++b) {
    const uint8_t* gb = gpu + size_t(b) * bb;
    const uint8_t* cb = cpu + size_t(b) * bb;
    const float* xb = row.data() + size_t(b) * be;
    const std::string where = "block " + std::to_string(b);
    if (type == KvType::q8_0) {
      const uint16_t dg = detail::load_u16(gb), dc = detail::load_u16(cb);
      if (dg != dc) {
        if (detail::half_ulps(dg, dc) > 1) return where + ": q8_0 d differs by more than one f16 ulp";
        ++local.q8_scale;
      }
      float amax = 0.0f;
      for (uint32_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
      const float d = amax / 127.0f;
      const float id = d != 0.0f ? 1.0f / d : 0.0f;
      for (uint32_t j = 0; j < 32; ++j) {
        const int qg = int8_t(gb[2 + j]), qc = int8_t(cb[2 + j]);
        if (qg == qc) continue;
        const double v = std::fabs(double(xb[j] * id));
        const double boundary = std::floor(v) + 0.5;
        if (std::abs(qg - qc) != 1 || std::fabs(v - boundary) > 1e-5 * boundary)
          return where + " element " + std::to_string(j) + ": q8_0 gpu " + std::to_string(qg) + " cpu " +
                 std::to_string(qc) + " at x/d = " + std::to_string(xb[j] * id);
        ++local.q8_value;
      }
      continue;
    }

    // Turbo: the rotated unit group, as the codec computes it.
    float sumsq = 0.0f;
    for (uint32_t j = 0; j < be; ++j) {
      const float sq = xb[j] * xb[j];
      sumsq += sq;
    }
    const float g = std::sqrt(sumsq);
    std::vector<float> xhat(be, 0.0f), y(be);
    if (g > 1e-10f)
      for (uint32_t j = 0; j < be; ++j) xhat[j] = xb[j] / g;
    rotate_group(xhat, y);
    bool moved = false;
    float rsq = 0.0f;
    for (uint32_t j = 0; j < be; ++j) {
      const uint32_t ig = detail::turbo_index(type, be, gb, j), ic = detail::turbo_index(type, be, cb, j);
      const float c = t.codebook[ig];
      const float sq = c * c;
      rsq += sq;
      if (ig == ic) continue;
      const uint32_t lo = std::min(ig, ic);
      // A zero group rotates to exact zeros on both sides, no rounding involved: the spec's "a
      // value on a midpoint goes up" then leaves nothing to tolerate.
      if (g <= 1e-10f || std::max(ig, ic) - lo != 1 || std::fabs(double(y[j]) - t.midpoints[lo]) > 1e-5)
        return where + " element " + std::to_string(j) + ": " + std::string(t.name) + " index gpu " +
               std::to_string(ig) + " cpu " + std::to_string(ic) + " at rotated value " + std::to_string(y[j]);
      ++local.turbo_index;
      moved = true;
    }
    const float r = std::sqrt(rsq);
    const uint16_t expected = moved ? float_to_half(r > 1e-10f ? g / r : g) : detail::load_u16(cb);
    const uint16_t ng = detail::load_u16(gb);
    if (detail::half_ulps(ng, expected) > 1)
      return where + ": norm gpu " + std::to_string(half_to_float(ng)) + " expected " +
             std::to_string(half_to_float(expected)) + " (more than one f16 ulp)";
    if (ng != detail::load_u16(cb)) ++local.turbo_norm;
    if (type == KvType::turbo4 && (gb[2] | gb[3]) != 0) return where + ": turbo4 reserved field is not 0";
  }
  tol.add(local);
  return {};
}

// Checks rows of one head: `bytes` (from export_rows) against the CPU codec on x (rows x head_dim).
// Adds a failure naming the first few rows that differ beyond the tolerance.
inline void expect_rows_match(KvType type, uint32_t head_dim, std::span<const float> x, std::span<const uint8_t> bytes,
                              Tolerated& tol, const std::string& what = {}) {
  const size_t rb = row_bytes(type, head_dim), rows = x.size() / head_dim;
  ASSERT_EQ(bytes.size(), rows * rb) << what;
  const auto cpu = reference_bytes(type, head_dim, x);
  int reported = 0;
  for (size_t r = 0; r < rows && reported < 5; ++r) {
    const std::string diff =
        compare_row(type, head_dim, x.subspan(r * head_dim, head_dim), bytes.data() + r * rb, cpu.data() + r * rb, tol);
    if (!diff.empty()) {
      ADD_FAILURE() << what << " " << type_name(type) << " head_dim " << head_dim << " row " << r << ": " << diff;
      ++reported;
    }
  }
}

// Runs fn, expects a tkv::Error with `code` whose message contains `needle`.
inline void expect_error(const std::function<void()>& fn, ErrorCode code, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no tkv::Error thrown (expected one mentioning '" << needle << "')";
  } catch (const Error& e) {
    EXPECT_EQ(int(e.code()), int(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << needle << "'";
  }
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace tkv::test
