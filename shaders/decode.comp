#version 450
// Split-K flash decoding over the paged, compressed cache (attention/decoder.hpp).
// One workgroup = one (split of the sequence, KV head, chunk of query rows, sequence). Its query
// rows are the GQA heads of the KV head times the M new tokens, so each K/V row is read once per
// group. Score phase: one token per invocation. Online softmax in f32. P·V phase: invocations own
// VD output dims of every row, over a slice of the tile's tokens. With one split the workgroup
// finishes the output itself (normalise, inverse rotation, store); otherwise it writes partials
// (m, l, o) that decode_reduce.comp merges.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

#include "codebooks.glsl"
#include "layout.glsl"
#include "dequant.glsl"
#include "rotation.glsl"

layout(constant_id = 0) const uint K_TYPE = 3;
layout(constant_id = 1) const uint V_TYPE = 3;
layout(constant_id = 2) const uint HEAD_DIM = 128;
layout(constant_id = 3) const uint K_DIM = 128;      // stored (padded) elements per K row
layout(constant_id = 4) const uint K_GROUPS = 1;
layout(constant_id = 5) const uint K_GROUP = 128;
layout(constant_id = 6) const uint K_BITS_ROW = 48;
layout(constant_id = 7) const uint V_DIM = 128;
layout(constant_id = 8) const uint V_GROUPS = 1;
layout(constant_id = 9) const uint V_GROUP = 128;
layout(constant_id = 10) const uint V_BITS_ROW = 48;
layout(constant_id = 11) const uint PAGE_SIZE = 64;
layout(constant_id = 12) const uint KV_HEADS = 8;
layout(constant_id = 13) const uint GQA = 4;
layout(constant_id = 14) const uint M = 1;
layout(constant_id = 15) const uint ROWS = 4;        // query rows per workgroup
layout(constant_id = 16) const uint TILE = 128;      // tokens per tile = invocations
layout(constant_id = 17) const uint VD = 4;          // output dims per invocation in P·V
layout(constant_id = 18) const uint DIRECT = 1;      // one split: write the final output
layout(constant_id = 19) const uint Q_F16 = 0;
layout(constant_id = 20) const uint OUT_F16 = 0;

layout(local_size_x_id = 16) in;

const uint RM = GQA * M;                 // query rows of one KV head
const uint Q_HEADS = KV_HEADS * GQA;
const uint K_REGION = PAGE_SIZE * (K_BITS_ROW + 2 * K_GROUPS);
const uint V_REGION = PAGE_SIZE * (V_BITS_ROW + 2 * V_GROUPS);
const uint QDIM = K_DIM > V_DIM ? K_DIM : V_DIM;
const uint NDG = (V_DIM + VD - 1) / VD;  // dim groups in P·V
const uint SLICES = TILE / NDG;          // token slices in P·V
const uint PSIZE = TILE * ROWS > SLICES * V_DIM ? TILE * ROWS : SLICES * V_DIM;
const uint MAX_SUBGROUPS = TILE / 4;
const uint K_SCALED = K_GROUPS > 0 ? K_GROUPS : 1;
const uint K_CHUNK = K_GROUPS > 0 ? K_GROUP : K_DIM;
const float NEG_INF = -1.0 / 0.0;

layout(std430, binding = 0) readonly buffer KPool { uint kp[]; };
layout(std430, binding = 1) readonly buffer VPool { uint vp[]; };
layout(std430, binding = 2) readonly buffer Pages { uint pages[]; };
layout(std430, binding = 3) readonly buffer Seqs { uvec4 seqs[]; };  // (length, page table offset, -, -)
layout(std430, binding = 4) readonly buffer Q { uint qw[]; };
layout(std430, binding = 5) writeonly buffer Out { float out32[]; };
layout(std430, binding = 5) writeonly buffer Out16 { uint16_t out16[]; };
layout(std430, binding = 6) buffer Partials { float part[]; };

layout(push_constant) uniform Push {
  float scale;      // softmax scale
  float softcap;    // 0: off
  uint window;      // 0: off
  uint chunk;       // tokens per split
  uint splits;      // splits per sequence (the grid's x)
  uint q_offset;    // elements
  uint out_offset;  // elements
} pc;

shared float qsh[ROWS * QDIM];     // query rows [d][j]; after the loop the output rows [j][d]
shared float psh[PSIZE];           // probabilities [token][j]; after the loop the slice combine
shared float red[MAX_SUBGROUPS * ROWS];
shared float m_sh[ROWS];
shared float l_sh[ROWS];
shared float alpha_sh[ROWS];
shared uint tok_page[TILE];

TKV_DEFINE_DEQUANT(kq, kp, K_TYPE, K_GROUP, K_GROUPS, K_BITS_ROW)
TKV_DEFINE_DEQUANT(vq, vp, V_TYPE, V_GROUP, V_GROUPS, V_BITS_ROW)

#define Q_INDEX(j, d) ((d) * ROWS + (j))
#define O_INDEX(j, d) ((j) * V_DIM + (d))
TKV_DEFINE_HADAMARD(hadamard_q, qsh, Q_INDEX)
TKV_DEFINE_HADAMARD(hadamard_o, qsh, O_INDEX)

float load_q(uint index) {
  if (Q_F16 != 0) {
    const uint w = qw[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(qw[index]);
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint split = gl_WorkGroupID.x;
  const uint kvh = gl_WorkGroupID.y % KV_HEADS, row_chunk = gl_WorkGroupID.y / KV_HEADS;
  const uint b = gl_WorkGroupID.z;
  const uvec4 info = seqs[b];
  const uint len = info.x, table = info.y;
  const uint start = split * pc.chunk;
  if (start >= len) return;  // uniform: the whole workgroup leaves
  const uint end = min(len, start + pc.chunk);

  // Query rows: row j is (token m, GQA head hh) = global row gr = row_chunk * ROWS + j.
  for (uint e = tid; e < ROWS * K_DIM; e += TILE) {
    const uint j = e / K_DIM, d = e % K_DIM, gr = row_chunk * ROWS + j;
    float v = 0.0;
    if (gr < RM && d < HEAD_DIM) {
      const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
      v = load_q(pc.q_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d) * pc.scale;
    }
    if (K_TYPE >= TYPE_TURBO2) v *= sign1(d % K_GROUP);
    qsh[Q_INDEX(j, d)] = v;
  }
  if (tid < ROWS) {
    m_sh[tid] = NEG_INF;
    l_sh[tid] = 0.0;
  }
  barrier();
  if (K_TYPE >= TYPE_TURBO2) {  // the rotation of the cache, once per query row
    hadamard_q(ROWS, K_DIM, K_GROUP, tid, TILE);
    for (uint e = tid; e < ROWS * K_DIM; e += TILE) {
      const uint j = e / K_DIM, d = e % K_DIM;
      qsh[Q_INDEX(j, d)] *= sign2(d % K_GROUP) * inv_sqrt_group(K_GROUP);
    }
    barrier();
  }

  // The positions each row may see: causal among the new tokens, then the window.
  uint hi_pos[ROWS], lo_pos[ROWS];
  for (uint j = 0; j < ROWS; ++j) {
    const uint gr = row_chunk * ROWS + j;
    const uint m = gr / GQA;
    hi_pos[j] = gr < RM ? len - M + m : 0u;
    lo_pos[j] = gr < RM ? ((pc.window > 0 && hi_pos[j] + 1 > pc.window) ? hi_pos[j] + 1 - pc.window : 0u) : 1u;
  }

  const uint dg = tid % NDG, slice = tid / NDG;
  float o[ROWS * VD];
  for (uint i = 0; i < ROWS * VD; ++i) o[i] = 0.0;

  for (uint t0 = start; t0 < end; t0 += TILE) {
    const uint count = min(TILE, end - t0);
    // --- scores: one token per invocation
    float s[ROWS];
    for (uint j = 0; j < ROWS; ++j) s[j] = NEG_INF;
    const uint pos = t0 + tid;
    if (tid < count) {
      const uint page = pages[table + pos / PAGE_SIZE];
      const uint slot = pos % PAGE_SIZE;
      tok_page[tid] = page;
      const uint region = page * (K_REGION * KV_HEADS) + kvh * K_REGION;
      const uint row = region + slot * K_BITS_ROW;
      float acc[ROWS];
      for (uint j = 0; j < ROWS; ++j) acc[j] = 0.0;
      for (uint g = 0; g < K_SCALED; ++g) {
        float part_dot[ROWS];
        for (uint j = 0; j < ROWS; ++j) part_dot[j] = 0.0;
        for (uint d = g * K_CHUNK; d < (g + 1) * K_CHUNK; ++d) {
          const float kv = kq_raw(row, d);
          for (uint j = 0; j < ROWS; ++j) part_dot[j] += qsh[Q_INDEX(j, d)] * kv;
        }
        const float sc = kq_scale(region, PAGE_SIZE, slot, g);
        for (uint j = 0; j < ROWS; ++j) acc[j] += sc * part_dot[j];
      }
      for (uint j = 0; j < ROWS; ++j) {
        float v = acc[j];
        if (pc.softcap > 0.0) v = pc.softcap * tanh(v / pc.softcap);
        s[j] = (pos >= lo_pos[j] && pos <= hi_pos[j]) ? v : NEG_INF;
      }
    }
    // --- online softmax: tile maxima, new running maxima, probabilities, row sums
    for (uint j = 0; j < ROWS; ++j) {
      const float mx = subgroupMax(s[j]);
      if (subgroupElect()) red[gl_SubgroupID * ROWS + j] = mx;
    }
    barrier();
    if (tid < ROWS) {
      float mx = NEG_INF;
      for (uint sg = 0; sg < gl_NumSubgroups; ++sg) mx = max(mx, red[sg * ROWS + tid]);
      const float m_old = m_sh[tid], m_new = max(m_old, mx);
      alpha_sh[tid] = m_new == NEG_INF ? 1.0 : exp(m_old - m_new);
      m_sh[tid] = m_new;
    }
    barrier();
    for (uint j = 0; j < ROWS; ++j) {
      const float p = s[j] == NEG_INF ? 0.0 : exp(s[j] - m_sh[j]);
      psh[tid * ROWS + j] = p;
      const float sum = subgroupAdd(p);
      if (subgroupElect()) red[gl_SubgroupID * ROWS + j] = sum;
    }
    barrier();
    if (tid < ROWS) {
      float sum = 0.0;
      for (uint sg = 0; sg < gl_NumSubgroups; ++sg) sum += red[sg * ROWS + tid];
      l_sh[tid] = l_sh[tid] * alpha_sh[tid] + sum;
    }
    // --- P·V: VD dims of every row over this invocation's slice of the tile's tokens
    if (slice < SLICES) {
      for (uint j = 0; j < ROWS; ++j) {
        const float a = alpha_sh[j];
        for (uint v = 0; v < VD; ++v) o[j * VD + v] *= a;
      }
      for (uint i = slice; i < count; i += SLICES) {
        const uint p_pos = t0 + i;
        const uint slot = p_pos % PAGE_SIZE;
        const uint region = tok_page[i] * (V_REGION * KV_HEADS) + kvh * V_REGION;
        const uint row = region + slot * V_BITS_ROW;
        float vals[VD];
        for (uint v = 0; v < VD; ++v) {
          const uint d = dg * VD + v;
          vals[v] = d < V_DIM ? vq_raw(row, d) * vq_scale(region, PAGE_SIZE, slot, V_GROUPS > 0 ? d / V_GROUP : 0u)
                              : 0.0;
        }
        for (uint j = 0; j < ROWS; ++j) {
          const float p = psh[i * ROWS + j];
          for (uint v = 0; v < VD; ++v) o[j * VD + v] += p * vals[v];
        }
      }
    }
    barrier();
  }

  // Merge the token slices: row by row through shared memory into qsh[j][d].
  for (uint j = 0; j < ROWS; ++j) {
    if (slice < SLICES)
      for (uint v = 0; v < VD; ++v) {
        const uint d = dg * VD + v;
        if (d < V_DIM) psh[slice * V_DIM + d] = o[j * VD + v];
      }
    barrier();
    for (uint d = tid; d < V_DIM; d += TILE) {
      float acc = 0.0;
      for (uint sl = 0; sl < SLICES; ++sl) acc += psh[sl * V_DIM + d];
      qsh[O_INDEX(j, d)] = acc;
    }
    barrier();
  }

  if (DIRECT == 0) {
    for (uint e = tid; e < ROWS * (V_DIM + 2); e += TILE) {
      const uint j = e / (V_DIM + 2), k = e % (V_DIM + 2), gr = row_chunk * ROWS + j;
      if (gr >= RM) continue;
      const uint base = (((b * KV_HEADS + kvh) * RM + gr) * pc.splits + split) * (V_DIM + 2);
      part[base + k] = k == 0 ? m_sh[j] : k == 1 ? l_sh[j] : qsh[O_INDEX(j, k - 2)];
    }
    return;
  }

  // One split: normalise, undo the V rotation, store.
  if (V_TYPE >= TYPE_TURBO2) {
    for (uint e = tid; e < ROWS * V_DIM; e += TILE) {
      const uint j = e / V_DIM, d = e % V_DIM;
      qsh[O_INDEX(j, d)] *= sign2(d % V_GROUP);
    }
    barrier();
    hadamard_o(ROWS, V_DIM, V_GROUP, tid, TILE);
  }
  for (uint e = tid; e < ROWS * HEAD_DIM; e += TILE) {
    const uint j = e / HEAD_DIM, d = e % HEAD_DIM, gr = row_chunk * ROWS + j;
    if (gr >= RM) continue;
    float v = qsh[O_INDEX(j, d)] / l_sh[j];
    if (V_TYPE >= TYPE_TURBO2) v *= sign1(d % V_GROUP) * inv_sqrt_group(V_GROUP);
    const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
    const uint index = pc.out_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d;
    if (OUT_F16 != 0) out16[index] = uint16_t(packHalf2x16(vec2(v, 0.0)) & 0xffffu);
    else out32[index] = v;
  }
}
