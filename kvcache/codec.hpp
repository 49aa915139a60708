// CPU reference codec: quantize and dequantize one head row to / from the reference block bytes
// of kv-formats.md, and the turbo rotation. This is the independent reference the GPU shaders are
// tested against; it favours clarity over speed.
#pragma once

#include <cstdint>
#include <span>

#include "kvcache/types.hpp"

namespace tkv {

// Rotation of one group of G elements (G = 64 or 128): y = s2 * H(s1 * x) / sqrt(G).
void rotate_group(std::span<const float> x, std::span<float> y);
// Its inverse: x = s1 * H(s2 * y) / sqrt(G).
void inverse_rotate_group(std::span<const float> y, std::span<float> x);
// Rotate / inverse-rotate a whole head row of padded_head_dim(type, head_dim) elements, group by
// group (the input of rotate_row may be head_dim long; it is zero-padded).
void rotate_row(uint32_t head_dim, std::span<const float> x, std::span<float> y_padded);
void inverse_rotate_row(uint32_t head_dim, std::span<const float> y_padded, std::span<float> x_padded);

// Quantizes one head row of head_dim floats into row_bytes(type, head_dim) reference bytes.
void quantize_row(KvType type, uint32_t head_dim, std::span<const float> x, std::span<uint8_t> out);
// Dequantizes one head row into padded_head_dim(type, head_dim) floats. Turbo types stay in the
// rotated basis (no inverse rotation), as the spec says.
void dequantize_row(KvType type, uint32_t head_dim, std::span<const uint8_t> in, std::span<float> out);

// One turbo block of G = 64 or 128 elements (kv-formats.md: f16 norm, [turbo4: f16 reserved = 0],
// then the index arrays): packed from its G indices and norm bits (`bytes` = block_bytes), and
// index j read back.
void pack_turbo(KvType type, uint32_t g, uint32_t bytes, uint16_t norm, const uint8_t* idx, uint8_t* blk);
uint32_t unpack_index(KvType type, uint32_t g, const uint8_t* blk, uint32_t j);

// Rotated-basis helpers used by tests and references.
// Index of the nearest centroid of a rotated value (count of midpoints m with y >= m).
uint32_t nearest_index(KvType type, float y);

}  // namespace tkv
