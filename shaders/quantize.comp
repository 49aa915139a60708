#version 450
// Append: quantizes new K or V rows into the cache's pages (kvcache/layout.hpp). One workgroup
// per (token, KV head) row. Turbo: norm, rotation, nearest centroid, norm correction, then the
// bits go into the token's tile; q8_0 and f16 rows too. Every step follows the CPU reference
// (kvcache/codec.cpp) in the same order and rounding, so the bytes match it (tolerance:
// compare_row in tests/cache_test_util.hpp).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

#include "codebooks.glsl"
#include "layout.glsl"
#include "numeric.glsl"

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

const uint SCALE_ROW_BYTES = 2 * GROUPS;
const uint REGION_BYTES = PAGE_SIZE * (BITS_ROW_BYTES + SCALE_ROW_BYTES);
const uint PAGE_BYTES = REGION_BYTES * KV_HEADS;
const uint ROW_WORDS = BITS_ROW_BYTES / 4;
// Turbo tiles of 16 tokens (kvcache/layout.hpp).
const uint INDEX_BITS = TYPE == TYPE_TURBO2 ? 2 : TYPE == TYPE_TURBO3 ? 3 : 4;
const uint MAG_BITS = INDEX_BITS - 1;
const uint FIELD_BITS = 2 * INDEX_BITS, LANE_WORDS = STORED_DIM / 16 * INDEX_BITS / 4;
const uint TILE_BYTES = 16 * (BITS_ROW_BYTES + SCALE_ROW_BYTES);
const uint LANES = IS_V != 0 ? 8 : 4;  // the lanes whose words hold a token's bits

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

shared float xs[256];
shared uint code[256];      // per element: turbo index, q8_0 byte, f16 bits
shared float gnorm[8];      // turbo group norms / q8_0 inverse scales
shared uint scale_bits[8];  // f16 bits stored per group
shared uint tile_set[8 * 16], tile_mask[8 * 16];  // turbo: per touched (lane, word), bits and mask

float load_src(uint index) {
  if (SRC_F16 != 0) {
    const uint w = src[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(src[index]);
}

uint nearest(float y) {
  uint n = 0;
  if (TYPE == TYPE_TURBO2) { for (uint k = 0; k < 3; ++k) n += y >= M2[k] ? 1u : 0u; }
  else if (TYPE == TYPE_TURBO3) { for (uint k = 0; k < 7; ++k) n += y >= M3[k] ? 1u : 0u; }
  else { for (uint k = 0; k < 15; ++k) n += y >= M4[k] ? 1u : 0u; }
  return n;
}

float codebook_value(uint i) {
  if (TYPE == TYPE_TURBO2) return C2[i];
  if (TYPE == TYPE_TURBO3) return C3[i];
  return C4[i];
}

void quantize_turbo(uint tid) {
  // 1. Group norms: squares summed in element order, unfused, as the reference does.
  if (tid < GROUPS) {
    precise float s = 0.0;
    for (uint j = 0; j < GROUP_ELEMS; ++j) {
      precise float sq = xs[tid * GROUP_ELEMS + j] * xs[tid * GROUP_ELEMS + j];
      s += sq;
    }
    gnorm[tid] = sqrt(s);
  }
  barrier();
  // 2. Normalise and apply s1, then the Walsh-Hadamard butterfly, then / sqrt(G) and s2.
  for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x) {
    const float g = gnorm[e / GROUP_ELEMS];
    const float xh = g > 1e-10 ? div_rn(xs[e], g) : 0.0;
    xs[e] = sign1(e % GROUP_ELEMS) * xh;
  }
  barrier();
  for (uint h = 1; h < GROUP_ELEMS; h <<= 1) {
    for (uint p = tid; p < STORED_DIM / 2; p += gl_WorkGroupSize.x) {
      const uint base = (p / (GROUP_ELEMS / 2)) * GROUP_ELEMS;
      const uint q = p % (GROUP_ELEMS / 2);
      const uint i = base + (q / h) * 2 * h + (q % h);
      const float a = xs[i], b = xs[i + h];
      xs[i] = a + b;
      xs[i + h] = a - b;
    }
    barrier();
  }
  const float sqrt_g = GROUP_ELEMS == 128 ? uintBitsToFloat(0x413504f3u) : 8.0;
  for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x)
    code[e] = nearest(sign2(e % GROUP_ELEMS) * div_rn(xs[e], sqrt_g));
  barrier();
  // 3. Norm correction from the chosen centroids.
  if (tid < GROUPS) {
    precise float s = 0.0;
    for (uint j = 0; j < GROUP_ELEMS; ++j) {
      const float c = codebook_value(code[tid * GROUP_ELEMS + j]);
      precise float sq = c * c;
      s += sq;
    }
    const float r = sqrt(s);
    const float g = gnorm[tid];
    scale_bits[tid] = half_bits_rte(r > 1e-10 ? div_rn(g, r) : g);
  }
}

void quantize_q8_0(uint tid) {
  // d = amax / 127 in f32; q = roundf(x * (1/d)) with the f32 d; the stored d is f16(d).
  if (tid < GROUPS) {
    float amax = 0.0;
    for (uint j = 0; j < 32; ++j) amax = max(amax, abs(xs[tid * 32 + j]));
    const float d = div_rn(amax, 127.0);
    scale_bits[tid] = half_bits_rte(d);
    gnorm[tid] = d != 0.0 ? div_rn(1.0, d) : 0.0;
  }
  barrier();
  for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x) {
    precise float v = xs[e] * gnorm[e / 32];
    code[e] = uint(int(round_away(v))) & 0xffu;
  }
}

// The 32-bit word `w` of an f16 or q8_0 row's bits, assembled from the per-element codes.
uint pack_word(uint w) {
  uint word = 0;
  if (TYPE == TYPE_F16) {
    word = code[2 * w] | (code[2 * w + 1] << 16);
  } else {
    for (uint k = 0; k < 4; ++k) word |= code[4 * w + k] << (8 * k);
  }
  return word;
}

// Sets `n` bits of lane li's word sequence (in shared memory) from bit `bit` on.
void put_bits(uint li, uint bit, uint n, uint value) {
  const uint w = bit / 32u, b = bit % 32u, m = (1u << n) - 1u;
  atomicOr(tile_set[li * 16u + w], (value & m) << b);
  atomicOr(tile_mask[li * 16u + w], m << b);
  if (b + n > 32u) {  // a field that straddles two words
    atomicOr(tile_set[li * 16u + w + 1u], (value & m) >> (32u - b));
    atomicOr(tile_mask[li * 16u + w + 1u], m >> (32u - b));
  }
}

// The token's bits and norms into its tile. Its words are shared with the tile's other tokens
// (possibly being appended by other workgroups of this dispatch): clear and set only its bits.
void store_tile(uint tid, uint region, uint slot) {
  const uint t = slot % 16u;
  const uint tile = region + (slot / 16u) * TILE_BYTES;
  for (uint i = tid; i < 8u * 16u; i += gl_WorkGroupSize.x) {
    tile_set[i] = 0u;
    tile_mask[i] = 0u;
  }
  barrier();
  for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x) {
    const uvec3 s = tile_slot(IS_V == 0u, t, e);
    const uvec2 ms = mag_sign(code[e], INDEX_BITS);
    const uint li = IS_V != 0u ? s.x / 4u : s.x % 4u;
    put_bits(li, FIELD_BITS * s.y + MAG_BITS * s.z, MAG_BITS, ms.x);
    put_bits(li, FIELD_BITS * s.y + 2u * MAG_BITS + s.z, 1u, ms.y);
  }
  barrier();
  for (uint i = tid; i < LANES * LANE_WORDS; i += gl_WorkGroupSize.x) {
    const uint li = i / LANE_WORDS, w = i % LANE_WORDS;
    const uint lane = IS_V != 0u ? 4u * li + (t % 8u) / 2u : 4u * (t % 8u) + li;
    const uint at = tile / 4u + 32u * w + lane;
    const uint mask = tile_mask[li * 16u + w];
    if (mask != 0u) {
      atomicAnd(dst[at], ~mask);
      atomicOr(dst[at], tile_set[li * 16u + w]);
    }
  }
  if (tid < GROUPS) dst16[(tile + 16u * BITS_ROW_BYTES + 32u * tid + 4u * (t % 8u) + 2u * (t / 8u)) / 2u] = uint16_t(scale_bits[tid]);
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint token = gl_WorkGroupID.x, head = gl_WorkGroupID.y;
  const uint pos = pc.first_pos + token;
  const uint page = pages[pc.table_offset + pos / PAGE_SIZE];
  const uint slot = pos % PAGE_SIZE;
  const uint region = page * PAGE_BYTES + head * REGION_BYTES;

  const uint src_base = pc.src_offset + token * pc.src_token_stride + head * pc.src_head_stride;
  for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x) xs[e] = e < HEAD_DIM ? load_src(src_base + e) : 0.0;
  barrier();

  if (TYPE == TYPE_F16) {
    for (uint e = tid; e < STORED_DIM; e += gl_WorkGroupSize.x) code[e] = half_bits_rte(xs[e]);
  } else if (TYPE == TYPE_Q8_0) {
    quantize_q8_0(tid);
  } else {
    quantize_turbo(tid);
  }
  barrier();

  if (TYPE >= TYPE_TURBO2) {
    store_tile(tid, region, slot);
    return;
  }
  const uint bits_word = (region + slot * BITS_ROW_BYTES) / 4;
  for (uint w = tid; w < ROW_WORDS; w += gl_WorkGroupSize.x) dst[bits_word + w] = pack_word(w);
  if (tid < GROUPS) {
    const uint scale_half = (region + PAGE_SIZE * BITS_ROW_BYTES + slot * SCALE_ROW_BYTES) / 2;
    dst16[scale_half + tid] = uint16_t(scale_bits[tid]);
  }
}
