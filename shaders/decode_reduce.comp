#version 450
// Merges the split partials (m, l, o) of decode.comp into each query row's output: rescales each
// split by exp(m_s - max m), normalises by the merged l, undoes the V rotation (turbo V), stores.
// One workgroup per (query row of a KV head, KV head, sequence).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require

#include "codebooks.glsl"
#include "layout.glsl"
#include "rotation.glsl"

layout(local_size_x = 128) in;

layout(constant_id = 0) const uint V_TYPE = 3;
layout(constant_id = 1) const uint HEAD_DIM = 128;
layout(constant_id = 2) const uint V_DIM = 128;
layout(constant_id = 3) const uint V_GROUP = 128;
layout(constant_id = 4) const uint KV_HEADS = 8;
layout(constant_id = 5) const uint GQA = 4;
layout(constant_id = 6) const uint M = 1;
layout(constant_id = 7) const uint OUT_F16 = 0;

const uint RM = GQA * M;
const uint Q_HEADS = KV_HEADS * GQA;
const float NEG_INF = -1.0 / 0.0;

layout(std430, binding = 0) readonly buffer Seqs { uvec4 seqs[]; };
layout(std430, binding = 1) readonly buffer Partials { float part[]; };
layout(std430, binding = 2) writeonly buffer Out { float out32[]; };
layout(std430, binding = 2) writeonly buffer Out16 { uint16_t out16[]; };

layout(push_constant) uniform Push {
  uint chunk;
  uint splits;
  uint out_offset;
  uint seq_len;     // batch 1: the sequence's length (0: read seqs[] instead)
} pc;

shared float row[V_DIM];
shared float red[128];
const uint CHUNK = 256;       // splits weighed per pass through shared memory
shared float w_sh[CHUNK];     // exp(m_s - max m) of each split of the chunk
shared float lw_sh[CHUNK];    // that times l_s

#define R_GET(j, d) row[d]
#define R_SET(j, d, v) row[d] = (v)
TKV_DEFINE_HADAMARD(hadamard_row, R_GET, R_SET)

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint gr = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint len = pc.seq_len != 0u ? pc.seq_len : seqs[b].x;
  const uint n = (len + pc.chunk - 1) / pc.chunk;  // splits that held tokens
  const uint stride = V_DIM + 2;
  const uint base = ((b * KV_HEADS + kvh) * RM + gr) * pc.splits * stride;

  // The largest m over the splits: the invocations read the splits' m in parallel (a serial loop
  // here was a chain of dependent global loads, ~40 us per call on an H200).
  float m_max = NEG_INF;
  for (uint s = tid; s < n; s += gl_WorkGroupSize.x) m_max = max(m_max, part[base + s * stride]);
  red[tid] = m_max;
  barrier();
  for (uint h = gl_WorkGroupSize.x / 2; h > 0; h >>= 1) {
    if (tid < h) red[tid] = max(red[tid], red[tid + h]);
    barrier();
  }
  m_max = red[0];

  float l = 0.0;
  float acc[2] = float[](0.0, 0.0);  // dims tid and tid + 128 (V_DIM <= 256)
  for (uint c0 = 0; c0 < n; c0 += CHUNK) {
    const uint cn = min(CHUNK, n - c0);
    barrier();  // the previous chunk's weights are no longer read
    for (uint s = tid; s < cn; s += gl_WorkGroupSize.x) {
      const float m = part[base + (c0 + s) * stride];
      const float w = m == NEG_INF ? 0.0 : exp(m - m_max);
      w_sh[s] = w;
      lw_sh[s] = w * part[base + (c0 + s) * stride + 1];
    }
    barrier();
    for (uint s = 0; s < cn; ++s) l += lw_sh[s];
    [[unroll]] for (uint k = 0; k < 2; ++k) {
      const uint d = tid + k * gl_WorkGroupSize.x;
      if (d >= V_DIM) continue;
      // Four independent partial sums keep several loads in flight.
      float a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
      uint s = 0;
      for (; s + 4 <= cn; s += 4) {
        const uint at = base + (c0 + s) * stride + 2 + d;
        a0 += w_sh[s] * part[at];
        a1 += w_sh[s + 1] * part[at + stride];
        a2 += w_sh[s + 2] * part[at + 2 * stride];
        a3 += w_sh[s + 3] * part[at + 3 * stride];
      }
      for (; s < cn; ++s) a0 += w_sh[s] * part[base + (c0 + s) * stride + 2 + d];
      acc[k] += (a0 + a1) + (a2 + a3);
    }
  }
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    const uint d = tid + k * gl_WorkGroupSize.x;
    if (d < V_DIM) row[d] = V_TYPE >= TYPE_TURBO2 ? (acc[k] / l) * sign2(d % V_GROUP) : acc[k] / l;
  }
  barrier();
  if (V_TYPE >= TYPE_TURBO2) hadamard_row(1, V_DIM, V_GROUP, tid, gl_WorkGroupSize.x);

  const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
  for (uint d = tid; d < HEAD_DIM; d += gl_WorkGroupSize.x) {
    float v = row[d];
    if (V_TYPE >= TYPE_TURBO2) v *= sign1(d % V_GROUP) * inv_sqrt_group(V_GROUP);
    const uint index = pc.out_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d;
    if (OUT_F16 != 0) out16[index] = uint16_t(packHalf2x16(vec2(v, 0.0)) & 0xffffu);
    else out32[index] = v;
  }
}
