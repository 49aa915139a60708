#version 450
// Merges the split partials (m, l, o) of decode.comp into each query row's output: rescales each
// split by exp(m_s - max m), normalises by the merged l, undoes the V rotation (turbo V), stores.
// One workgroup per (query row of a KV head, KV head, sequence).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

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
} pc;

shared float row[V_DIM];

#define R_INDEX(j, d) (d)
TKV_DEFINE_HADAMARD(hadamard_row, row, R_INDEX)

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint gr = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
  const uint len = seqs[b].x;
  const uint n = (len + pc.chunk - 1) / pc.chunk;  // splits that held tokens
  const uint stride = V_DIM + 2;
  const uint base = ((b * KV_HEADS + kvh) * RM + gr) * pc.splits * stride;

  float m_max = NEG_INF;
  for (uint s = 0; s < n; ++s) m_max = max(m_max, part[base + s * stride]);
  float l = 0.0;
  for (uint s = 0; s < n; ++s) {
    const float m = part[base + s * stride];
    if (m != NEG_INF) l += exp(m - m_max) * part[base + s * stride + 1];
  }
  for (uint d = tid; d < V_DIM; d += gl_WorkGroupSize.x) {
    float acc = 0.0;
    for (uint s = 0; s < n; ++s) {
      const float m = part[base + s * stride];
      if (m != NEG_INF) acc += exp(m - m_max) * part[base + s * stride + 2 + d];
    }
    acc /= l;
    row[d] = V_TYPE >= TYPE_TURBO2 ? acc * sign2(d % V_GROUP) : acc;
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
