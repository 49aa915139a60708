#version 450
// Append: quantizes new K or V rows into the cache's pages (kvcache/layout.hpp). One workgroup
// per (token, KV head) row, running quantize_row.glsl (the decode kernels' fused append runs the
// same code).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "codebooks.glsl"
#include "layout.glsl"
#include "numeric.glsl"
#include "rotation.glsl"

layout(local_size_x = 128) in;

layout(constant_id = 0) const uint TYPE = 3;
layout(constant_id = 1) const uint HEAD_DIM = 128;
layout(constant_id = 2) const uint STORED_DIM = 128;
layout(constant_id = 3) const uint GROUPS = 1;
layout(constant_id = 4) const uint GROUP_ELEMS = 128;
layout(constant_id = 5) const uint BITS_ROW_BYTES = 48;
layout(constant_id = 6) const uint PAGE_SIZE = 64;
layout(constant_id = 7) const uint KV_HEADS = 1;
layout(constant_id = 8) const uint SRC_F16 = 0;
layout(constant_id = 9) const uint IS_V = 0;  // turbo tiles: V's pairs are two tokens' elements
layout(constant_id = 10) const uint MIN_SUBGROUP = 4;  // the device's smallest subgroup size

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) buffer Dst { uint dst[]; };  // (atomics: tile words are shared by tokens)
layout(std430, binding = 1) buffer Dst16 { uint16_t dst16[]; };
layout(std430, binding = 2) readonly buffer Pages { uint pages[]; };

layout(push_constant) uniform Push {
  uint src_offset;        // elements (f32 or f16) to the first row
  uint src_token_stride;  // elements between tokens
  uint src_head_stride;   // elements between heads
  uint table_offset;      // index in pages[] of the sequence's first page
  uint first_pos;         // position of the first new token
} pc;

void qr_pool_and(bool is_v, uint word, uint bits) { atomicAnd(dst[word], bits); }
void qr_pool_or(bool is_v, uint word, uint bits) { atomicOr(dst[word], bits); }
void qr_pool_store(bool is_v, uint word, uint value) { dst[word] = value; }
void qr_pool_store16(bool is_v, uint index, uint value) { dst16[index] = uint16_t(value); }
#define QR_MIN_SUBGROUP MIN_SUBGROUP
#include "quantize_row.glsl"

float load_src(uint index) {
  if (SRC_F16 != 0) {
    const uint w = src[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(src[index]);
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint token = gl_WorkGroupID.x, head = gl_WorkGroupID.y;
  const uint pos = pc.first_pos + token;
  const RowShape s = RowShape(TYPE, STORED_DIM, GROUPS, GROUP_ELEMS, BITS_ROW_BYTES, PAGE_SIZE, KV_HEADS, IS_V != 0u);

  const uint src_base = pc.src_offset + token * pc.src_token_stride + head * pc.src_head_stride;
  const QrWork w = QrWork(0u, tid, gl_WorkGroupSize.x, false);
  for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x) qr_x[e] = e < HEAD_DIM ? load_src(src_base + e) : 0.0;
  barrier();
  qr_quantize(s, w);
  qr_store(s, w, pages[pc.table_offset + pos / PAGE_SIZE], head, pos % PAGE_SIZE);
}
