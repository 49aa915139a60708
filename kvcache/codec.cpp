// CPU reference codec of kv-formats.md. Clarity over speed: every step is written in the order the
// spec describes, in fp32, because the golden blocks (and the llama.cpp turbo fork) depend on the
// exact rounding of that order.
#include "kvcache/codec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"

namespace tkv {
namespace {

constexpr uint32_t kMaxGroup = 128;

void check_group_spans(size_t in, size_t out, const char* what) {
  if (in != 64 && in != 128)
    fail(ErrorCode::invalid_argument, std::string(what) + ": group size " + std::to_string(in) +
                                          " is not 64 or 128");
  if (out != in)
    fail(ErrorCode::invalid_argument, std::string(what) + ": output span has " +
                                          std::to_string(out) + " elements, input has " +
                                          std::to_string(in));
}

void check_size(const char* what, const char* span_name, size_t got, size_t want) {
  if (got != want)
    fail(ErrorCode::invalid_argument, std::string(what) + ": " + span_name + " has " +
                                          std::to_string(got) + " elements, expected " +
                                          std::to_string(want));
}

// Rejects NaN/Inf: they would poison the norm (turbo) or the scale (q8_0) of a whole block.
void check_finite(const char* what, std::span<const float> x) {
  for (size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      fail(ErrorCode::numeric, std::string(what) + ": element " + std::to_string(i) +
                                   " is not finite (" + std::to_string(x[i]) + ")");
}

// Unnormalised in-place Walsh-Hadamard butterfly: for h = 1, 2, 4, ..., n/2, (a, b) <- (a+b, a-b)
// on pairs (i, i+h).
void fwht(float* v, uint32_t n) {
  for (uint32_t h = 1; h < n; h <<= 1)
    for (uint32_t i = 0; i < n; i += 2 * h)
      for (uint32_t j = i; j < i + h; ++j) {
        const float a = v[j];
        const float b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
}

// y = post ⊙ H(pre ⊙ x) / sqrt(G); the forward and inverse rotations differ only in which sign
// vector goes first. x and y may alias (the work happens in a local buffer).
void signed_hadamard(std::span<const float> x, std::span<float> y, std::span<const float> pre,
                     std::span<const float> post) {
  const auto n = static_cast<uint32_t>(x.size());
  std::array<float, kMaxGroup> buf{};
  for (uint32_t i = 0; i < n; ++i) buf[i] = pre[i] * x[i];
  fwht(buf.data(), n);
  const float scale = std::sqrt(static_cast<float>(n));
  for (uint32_t i = 0; i < n; ++i) y[i] = post[i] * (buf[i] / scale);
}


void quantize_turbo_group(KvType type, const float* x, uint32_t g, uint32_t bytes, uint8_t* blk) {
  const TypeTraits& t = traits(type);

  // 1. L2 norm: squares summed in fp32 in element order 0..G-1, as the spec describes (the GPU
  //    shader should do the same to stay byte-identical). The product sits in its own statement so
  //    a compiler that contracts within expressions (clang's default) cannot fuse it into an FMA.
  float sumsq = 0.0f;
  for (uint32_t j = 0; j < g; ++j) {
    const float sq = x[j] * x[j];
    sumsq += sq;
  }
  const float norm = std::sqrt(sumsq);

  std::array<float, kMaxGroup> xhat{};
  if (norm > 1e-10f)
    for (uint32_t j = 0; j < g; ++j) xhat[j] = x[j] / norm;

  // 2. Rotate.
  std::array<float, kMaxGroup> y{};
  rotate_group(std::span<const float>(xhat.data(), g), std::span<float>(y.data(), g));

  // 3. Nearest centroid via the midpoints; 4. norm correction from the chosen centroids.
  std::array<uint8_t, kMaxGroup> idx{};
  float rsq = 0.0f;
  for (uint32_t j = 0; j < g; ++j) {
    idx[j] = static_cast<uint8_t>(nearest_index(type, y[j]));
    const float c = t.codebook[idx[j]];
    const float sq = c * c;
    rsq += sq;
  }
  const float r = std::sqrt(rsq);
  const uint16_t stored = float_to_half(r > 1e-10f ? norm / r : norm);
  pack_turbo(type, g, bytes, stored, idx.data(), blk);
}

void quantize_q8_0_block(const float* x, uint8_t* blk) {
  // ggml's quantize_row_q8_0_ref: d = amax/127 in f32, qs = roundf(x * (1/d)), stored f16(d).
  float amax = 0.0f;
  for (uint32_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  const uint16_t dh = float_to_half(d);
  blk[0] = static_cast<uint8_t>(dh & 0xff);
  blk[1] = static_cast<uint8_t>(dh >> 8);
  for (uint32_t j = 0; j < 32; ++j) {
    const float q = std::round(x[j] * id);  // half away from zero, like roundf
    blk[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
  }
}

uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

}  // namespace

// Bit packing of one turbo block (G = 64 or 128). Layout: f16 norm, [turbo4: f16 reserved = 0],
// then the index arrays of kv-formats.md, halved for G = 64.
void pack_turbo(KvType type, uint32_t g, uint32_t bytes, uint16_t norm, const uint8_t* idx,
                uint8_t* blk) {
  std::memset(blk, 0, bytes);  // indices are OR-ed in; turbo4's reserved field stays 0
  blk[0] = static_cast<uint8_t>(norm & 0xff);
  blk[1] = static_cast<uint8_t>(norm >> 8);
  switch (type) {
    case KvType::turbo2: {
      uint8_t* qs = blk + 2;
      for (uint32_t j = 0; j < g; ++j) qs[j / 4] |= static_cast<uint8_t>(idx[j] << (2 * (j % 4)));
      break;
    }
    case KvType::turbo3: {
      uint8_t* qs = blk + 2;
      uint8_t* signs = qs + g / 4;
      for (uint32_t j = 0; j < g; ++j) {
        qs[j / 4] |= static_cast<uint8_t>((idx[j] & 3u) << (2 * (j % 4)));
        signs[j / 8] |= static_cast<uint8_t>((idx[j] >> 2) << (j % 8));
      }
      break;
    }
    case KvType::turbo4: {
      uint8_t* qs = blk + 4;  // after norm and the reserved f16 (left 0)
      for (uint32_t j = 0; j < g; ++j) qs[j / 2] |= static_cast<uint8_t>(idx[j] << (4 * (j % 2)));
      break;
    }
    default:
      break;
  }
}

uint32_t unpack_index(KvType type, uint32_t g, const uint8_t* blk, uint32_t j) {
  switch (type) {
    case KvType::turbo2:
      return (blk[2 + j / 4] >> (2 * (j % 4))) & 3u;
    case KvType::turbo3: {
      const uint32_t low2 = (blk[2 + j / 4] >> (2 * (j % 4))) & 3u;
      const uint32_t hi = (blk[2 + g / 4 + j / 8] >> (j % 8)) & 1u;
      return low2 | (hi << 2);
    }
    case KvType::turbo4:
      return (blk[4 + j / 2] >> (4 * (j % 2))) & 15u;
    default:
      return 0;
  }
}

void rotate_group(std::span<const float> x, std::span<float> y) {
  check_group_spans(x.size(), y.size(), "rotate_group");
  signed_hadamard(x, y, rotation_signs1().first(x.size()), rotation_signs2().first(x.size()));
}

void inverse_rotate_group(std::span<const float> y, std::span<float> x) {
  check_group_spans(y.size(), x.size(), "inverse_rotate_group");
  signed_hadamard(y, x, rotation_signs2().first(y.size()), rotation_signs1().first(y.size()));
}

void rotate_row(uint32_t head_dim, std::span<const float> x, std::span<float> y_padded) {
  // The rotation only exists for turbo types; all of them share one padding rule.
  const uint32_t g = turbo_group_size(head_dim);
  const uint32_t padded = padded_head_dim(KvType::turbo3, head_dim);
  if (x.size() != head_dim && x.size() != padded)
    fail(ErrorCode::invalid_argument,
         "rotate_row: input has " + std::to_string(x.size()) + " elements, expected head_dim " +
             std::to_string(head_dim) + " or padded " + std::to_string(padded));
  check_size("rotate_row", "output", y_padded.size(), padded);
  std::array<float, kMaxGroup> grp{};
  for (uint32_t base = 0; base < padded; base += g) {
    for (uint32_t j = 0; j < g; ++j) grp[j] = base + j < x.size() ? x[base + j] : 0.0f;
    rotate_group(std::span<const float>(grp.data(), g), y_padded.subspan(base, g));
  }
}

void inverse_rotate_row(uint32_t head_dim, std::span<const float> y_padded,
                        std::span<float> x_padded) {
  const uint32_t g = turbo_group_size(head_dim);
  const uint32_t padded = padded_head_dim(KvType::turbo3, head_dim);
  check_size("inverse_rotate_row", "input", y_padded.size(), padded);
  check_size("inverse_rotate_row", "output", x_padded.size(), padded);
  for (uint32_t base = 0; base < padded; base += g)
    inverse_rotate_group(y_padded.subspan(base, g), x_padded.subspan(base, g));
}

void quantize_row(KvType type, uint32_t head_dim, std::span<const float> x,
                  std::span<uint8_t> out) {
  const TypeTraits& t = traits(type);
  const uint32_t padded = padded_head_dim(type, head_dim);
  // Accept the row as head_dim floats, or already padded (the tail is then used as given).
  if (x.size() != head_dim && x.size() != padded)
    fail(ErrorCode::invalid_argument,
         "quantize_row(" + std::string(t.name) + "): input has " + std::to_string(x.size()) +
             " elements, expected head_dim " + std::to_string(head_dim));
  check_size("quantize_row", "output bytes", out.size(), row_bytes(type, head_dim));
  check_finite("quantize_row", x);

  // Zero-padded copy so every block sees a full group.
  std::array<float, 256> row{};
  std::copy(x.begin(), x.end(), row.begin());

  const uint32_t nblocks = blocks_per_row(type, head_dim);
  const uint32_t bbytes = block_bytes(type, head_dim);
  const uint32_t belems = padded / nblocks;
  for (uint32_t b = 0; b < nblocks; ++b) {
    const float* src = row.data() + b * belems;
    uint8_t* blk = out.data() + static_cast<size_t>(b) * bbytes;
    switch (type) {
      case KvType::f16: {
        const uint16_t h = float_to_half(src[0]);
        blk[0] = static_cast<uint8_t>(h & 0xff);
        blk[1] = static_cast<uint8_t>(h >> 8);
        break;
      }
      case KvType::q8_0:
        quantize_q8_0_block(src, blk);
        break;
      default:
        quantize_turbo_group(type, src, belems, bbytes, blk);
        break;
    }
  }
}

void dequantize_row(KvType type, uint32_t head_dim, std::span<const uint8_t> in,
                    std::span<float> out) {
  const TypeTraits& t = traits(type);
  const uint32_t padded = padded_head_dim(type, head_dim);
  check_size("dequantize_row", "input bytes", in.size(), row_bytes(type, head_dim));
  check_size("dequantize_row", "output", out.size(), padded);

  const uint32_t nblocks = blocks_per_row(type, head_dim);
  const uint32_t bbytes = block_bytes(type, head_dim);
  const uint32_t belems = padded / nblocks;
  for (uint32_t b = 0; b < nblocks; ++b) {
    const uint8_t* blk = in.data() + static_cast<size_t>(b) * bbytes;
    float* dst = out.data() + b * belems;
    switch (type) {
      case KvType::f16:
        dst[0] = half_to_float(load_u16(blk));
        break;
      case KvType::q8_0: {
        const float d = half_to_float(load_u16(blk));
        for (uint32_t j = 0; j < 32; ++j)
          dst[j] = d * static_cast<float>(static_cast<int8_t>(blk[2 + j]));
        break;
      }
      default: {
        // Stays in the rotated basis: no inverse rotation (spec step 5).
        const float norm = half_to_float(load_u16(blk));
        for (uint32_t j = 0; j < belems; ++j)
          dst[j] = t.codebook[unpack_index(type, belems, blk, j)] * norm;
        break;
      }
    }
  }
}

uint32_t nearest_index(KvType type, float y) {
  const TypeTraits& t = traits(type);
  if (!t.is_turbo)
    fail(ErrorCode::invalid_argument,
         "nearest_index: " + std::string(t.name) + " has no codebook (turbo types only)");
  uint32_t idx = 0;
  for (const float m : t.midpoints)
    if (y >= m) ++idx;  // a value exactly on a midpoint goes up
  return idx;
}

}  // namespace tkv
