#version 450
// Append: quantizes new K or V rows into the cache's pages (kvcache/layout.hpp). A workgroup per
// 4 tokens of one KV head, a subgroup per row, running quantize_row.glsl (the decode kernels'
// fused append runs the same code).
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

layout(local_size_x_id = 11) in;  // 4 x MIN_SUBGROUP: a subgroup per row

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
  uint n_tokens;          // rows of this dispatch
} pc;

void qr_pool_and(bool is_v, uint word, uint bits) { atomicAnd(dst[word], bits); }
void qr_pool_or(bool is_v, uint word, uint bits) { atomicOr(dst[word], bits); }
void qr_pool_store(bool is_v, uint word, uint value) { dst[word] = value; }
void qr_pool_store16(bool is_v, uint index, uint value) { dst16[index] = uint16_t(value); }
#define QR_MIN_SUBGROUP MIN_SUBGROUP
#define QR_COPIES 4  // a copy per row of the workgroup
#include "quantize_row.glsl"

float load_src(uint index) {
  if (SRC_F16 != 0) {
    const uint w = src[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(src[index]);
}

// Rows (tokens) per workgroup: a subgroup's each (kvcache/kv_cache.cpp dispatches ceil(n / 4)).
const uint TOKENS_PER_WORKGROUP = 4;

void main() {
  // (The subgroup's index through a reduction: uniform to the driver, see append_tail.glsl.)
  const uint sg = subgroupMin(gl_SubgroupID), nsg = gl_NumSubgroups, lane = gl_SubgroupInvocationID;
  const uint head = gl_WorkGroupID.y;
  const RowShape s = RowShape(TYPE, STORED_DIM, GROUPS, GROUP_ELEMS, BITS_ROW_BYTES, PAGE_SIZE, KV_HEADS, IS_V != 0u);
  // Each subgroup quantizes its rows (lanes load the elements they quantize), then, once every
  // row's codes are visible, stores them.
  for (uint k = sg; k < TOKENS_PER_WORKGROUP; k += nsg) {
    const uint token = gl_WorkGroupID.x * TOKENS_PER_WORKGROUP + k;
    if (token >= pc.n_tokens) break;
    const uint src_base = pc.src_offset + token * pc.src_token_stride + head * pc.src_head_stride;
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      const uint e = lane + QR_W * i;
      if (lane < QR_W && e < STORED_DIM) QR_X_SET(k * 256u + e, e < HEAD_DIM ? load_src(src_base + e) : 0.0);
    }
    qr_quantize(s, QrWork(k, lane, gl_SubgroupSize));
  }
  barrier();
  for (uint k = sg; k < TOKENS_PER_WORKGROUP; k += nsg) {
    const uint token = gl_WorkGroupID.x * TOKENS_PER_WORKGROUP + k, pos = pc.first_pos + token;
    if (token >= pc.n_tokens) break;
    qr_store(s, QrWork(k, lane, gl_SubgroupSize), pages[pc.table_offset + pos / PAGE_SIZE], head, pos % PAGE_SIZE);
  }
}
