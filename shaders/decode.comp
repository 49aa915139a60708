#version 450
// Split-K flash decoding over the paged, compressed cache (attention/decoder.hpp).
//
// A workgroup = one (split of a sequence, KV head, chunk of query rows, sequence). Its query rows
// are the GQA heads of the KV head times the M new tokens, so each K/V row is read once for all
// of them. Inside, a team of TEAM lanes works on one token at a time, each lane owning DPL
// consecutive dims of the rows: the query rows' dims live in the lane's registers, K and V are
// read once per lane as whole words, the score is summed across the team with subgroup shuffles,
// and each team keeps its own online softmax (m, l, o) in f32 over UNROLL tokens per step, with no
// workgroup barrier in the loop. At the end the teams merge (shuffles, then shared memory).
// With one split the workgroup finishes the output (normalise, inverse rotation, store); otherwise
// it writes partials (m, l, o) for decode_reduce.comp.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require

#include "codebooks.glsl"
#include "layout.glsl"
#include "dequant.glsl"
#include "rotation.glsl"

// Specialization constants: attention/decode_constants.hpp lists the same ids.
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
layout(constant_id = 16) const uint WG = 128;        // invocations
layout(constant_id = 17) const uint DPL = 16;        // dims per lane
layout(constant_id = 18) const uint TEAM = 8;        // lanes per token (power of two, <= subgroup)
layout(constant_id = 19) const uint UNROLL = 4;      // tokens per team per step
layout(constant_id = 20) const uint DIRECT = 1;      // one split: write the final output
layout(constant_id = 21) const uint Q_F16 = 0;
layout(constant_id = 22) const uint OUT_F16 = 0;
layout(constant_id = 23) const uint VARIANT = 0;
layout(constant_id = 24) const uint MODE = 0;
layout(constant_id = 25) const uint MIN_SUBGROUP = 32;

layout(local_size_x_id = 16) in;

const uint RM = GQA * M;
const uint Q_HEADS = KV_HEADS * GQA;
const uint K_REGION = PAGE_SIZE * (K_BITS_ROW + 2 * K_GROUPS);
const uint V_REGION = PAGE_SIZE * (V_BITS_ROW + 2 * V_GROUPS);
const uint QDIM = K_DIM > V_DIM ? K_DIM : V_DIM;
const uint NTEAMS = WG / TEAM;
const uint DPL4 = DPL / 4;  // vec4s per lane row: arrays of vec4 stay in registers
// Per-row state as vec4 over rows, for the same reason: float arrays indexed in loops were left in
// local memory (H200 statistics).
const uint ROWS4 = (ROWS + 3) / 4;
#define SC(u, j) s[(u) * ROWS4 + (j) / 4][(j) % 4]
#define MR(j) m_run[(j) / 4][(j) % 4]
#define LR(j) l_run[(j) / 4][(j) % 4]
#define HI(j) hi_pos[(j) / 4][(j) % 4]
#define LO(j) lo_pos[(j) / 4][(j) % 4]
// A step: STEP consecutive tokens of one page, staged in shared memory as raw rows (bits, then
// scales) by coalesced 16-byte loads of the whole workgroup, fetched one step ahead.
const uint STEP = NTEAMS * UNROLL;
const uint K_STAGE_BYTES = STEP * (K_BITS_ROW + 2 * K_GROUPS), V_STAGE_BYTES = STEP * (V_BITS_ROW + 2 * V_GROUPS);
const uint K_VECS = K_STAGE_BYTES / 16, V_VECS = V_STAGE_BYTES / 16;
const uint K_BITS_VECS = STEP * K_BITS_ROW / 16, V_BITS_VECS = STEP * V_BITS_ROW / 16;
const uint PRE_K = (K_VECS + WG - 1) / WG, PRE_V = (V_VECS + WG - 1) / WG;
const uint MAX_SUBGROUPS = WG / MIN_SUBGROUP;
const uint V_VARIANT = VARIANT == VARIANT_QLUT ? VARIANT_LUT8 : VARIANT;
const uint NC = K_TYPE == TYPE_TURBO2 ? 4 : K_TYPE == TYPE_TURBO3 ? 8 : 16;
const bool INDEXED_MODE = MODE != MODE_ZERO && MODE != MODE_NORM;  // modes whose loads return indices
const bool USE_QLUT = VARIANT == VARIANT_QLUT && K_TYPE >= TYPE_TURBO2 && INDEXED_MODE;
const bool K_REGLUT = VARIANT == VARIANT_REGLUT && K_TYPE >= TYPE_TURBO2 && INDEXED_MODE;
const bool V_REGLUT = VARIANT == VARIANT_REGLUT && V_TYPE >= TYPE_TURBO2 && INDEXED_MODE;
const uint V_NC = V_TYPE == TYPE_TURBO2 ? 4 : V_TYPE == TYPE_TURBO3 ? 8 : 16;
const bool USE_SMEM = VARIANT == VARIANT_SMEM;
const uint TSIZE = USE_QLUT ? ROWS * K_DIM * NC : 1;
const uint SSIZE = USE_SMEM ? WG / TEAM * QDIM : 1;
const float NEG_INF = -1.0 / 0.0;

layout(std430, binding = 0) readonly buffer KPool { uvec4 kp4[]; };
layout(std430, binding = 1) readonly buffer VPool { uvec4 vp4[]; };
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
  uint zero;        // always 0: keeps profile mode 4's loads alive
} pc;

shared float qsh[ROWS * QDIM];          // query rows [j][d]; after the loop, the merged output rows
shared float msh[MAX_SUBGROUPS * ROWS * 2];
shared float tsh[TSIZE];                // qlut: T[j][d][c] = q[j][d] * C[c]
shared float ssh[SSIZE];                // smem: one dequantized row per team
// The split's page numbers, read once: a page-table load in the step loop put a second global
// load latency in series with every step's fetch. The plan keeps a split within this many pages.
const uint MAX_SPLIT_PAGES = 512;
shared uint split_pages[MAX_SPLIT_PAGES];
shared uvec4 kst[K_VECS];              // the step's K rows: bits of STEP rows, then their scales
shared uvec4 vst[V_VECS];

TKV_DEFINE_DEQUANT(kq, kst, K_TYPE, K_GROUP, K_GROUPS, K_BITS_ROW, STEP, DPL, VARIANT, MODE, pc.zero)
TKV_DEFINE_DEQUANT(vq, vst, V_TYPE, V_GROUP, V_GROUPS, V_BITS_ROW, STEP, DPL, V_VARIANT, MODE, pc.zero)
TKV_DEFINE_RAW(kraw, kst, K_TYPE, K_GROUP)
TKV_DEFINE_RAW(vraw, vst, V_TYPE, V_GROUP)

// Whether the 16 bytes at `vec` of a staged step are read in this profile mode: mode 1 reads
// nothing, mode 2 only the scales, mode 3 skips turbo3's sign bytes (whole 16-byte runs of them).
bool fetched(uint vec, uint bits_vecs, uint type, uint group, uint bits_row) {
  if (MODE == MODE_ZERO) return false;
  if (vec >= bits_vecs) return true;
  if (MODE == MODE_NORM) return false;
  if (MODE == MODE_NOSIGN && type == TYPE_TURBO3) {
    const uint at = (vec * 16u) % bits_row, body = 3u * group / 8u;
    const uint in_group = at % body;
    return !(in_group >= group / 4u && in_group + 16u <= body);
  }
  return true;
}

// The j-th 16 bytes of the step starting at `slot0` of `page`: first the rows' bits, then scales.
uvec4 fetch_k(uint page, uint kvh, uint slot0, uint j) {
  const uint region = page * (K_REGION * KV_HEADS) + kvh * K_REGION;
  if (!fetched(j, K_BITS_VECS, K_TYPE, K_GROUP, K_BITS_ROW)) return uvec4(0);
  return j < K_BITS_VECS ? kp4[(region + slot0 * K_BITS_ROW) / 16 + j]
                         : kp4[(region + PAGE_SIZE * K_BITS_ROW + slot0 * 2 * K_GROUPS) / 16 + j - K_BITS_VECS];
}
uvec4 fetch_v(uint page, uint kvh, uint slot0, uint j) {
  const uint region = page * (V_REGION * KV_HEADS) + kvh * V_REGION;
  if (!fetched(j, V_BITS_VECS, V_TYPE, V_GROUP, V_BITS_ROW)) return uvec4(0);
  return j < V_BITS_VECS ? vp4[(region + slot0 * V_BITS_ROW) / 16 + j]
                         : vp4[(region + PAGE_SIZE * V_BITS_ROW + slot0 * 2 * V_GROUPS) / 16 + j - V_BITS_VECS];
}

#define R_INDEX(j, d) ((j) * QDIM + (d))
TKV_DEFINE_HADAMARD(hadamard_rows, qsh, R_INDEX)

float load_q(uint index) {
  if (Q_F16 != 0) {
    const uint w = qw[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(qw[index]);
}

// smem variant: the team dequantizes a row into shared memory with a strided assignment (lane L
// takes dims L, L + TEAM, ...), then each lane reads back its own contiguous dims.
// Profile modes other than 0 produce through the contiguous loader (which applies the mode).
void smem_row(bool is_k, uint row, uint team, uint lane, out vec4 v[DPL4]) {
  const uint dims = is_k ? K_DIM : V_DIM;
  if (MODE == MODE_FULL) {
    [[unroll]] for (uint k = 0; k < DPL; ++k) {
      const uint d = lane + TEAM * k;
      if (d < dims) ssh[team * QDIM + d] = is_k ? kraw_raw(row, d) : vraw_raw(row, d);
    }
  } else if (lane * DPL < dims) {
    if (is_k) kq_load(row, lane * DPL, v);
    else vq_load(row, lane * DPL, v);
    [[unroll]] for (uint i = 0; i < DPL; ++i) ssh[team * QDIM + lane * DPL + i] = v[i >> 2][i & 3u];
  }
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  [[unroll]] for (uint i = 0; i < DPL; ++i) {
    const uint d = lane * DPL + i;
    v[i >> 2][i & 3u] = d < dims ? ssh[team * QDIM + d] : 0.0;
  }
  subgroupBarrier();
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane = tid % TEAM, team = tid / TEAM;
  const uint split = gl_WorkGroupID.x;
  const uint kvh = gl_WorkGroupID.y % KV_HEADS, row_chunk = gl_WorkGroupID.y / KV_HEADS;
  const uint b = gl_WorkGroupID.z;
  const uvec4 info = seqs[b];
  const uint len = info.x, table = info.y;
  const uint start = split * pc.chunk;
  if (start >= len) return;  // uniform: the whole workgroup leaves
  const uint end = min(len, start + pc.chunk);
  const uint d0 = lane * DPL;

  const uint first_page = start / PAGE_SIZE;
  for (uint p = tid; p <= (end - 1) / PAGE_SIZE - first_page; p += WG) split_pages[p] = pages[table + first_page + p];

  // Query rows (scaled), rotated by the cache's rotation when K is turbo.
  for (uint e = tid; e < ROWS * QDIM; e += WG) {
    const uint j = e / QDIM, d = e % QDIM, gr = row_chunk * ROWS + j;
    float v = 0.0;
    if (gr < RM && d < HEAD_DIM) {
      const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
      v = load_q(pc.q_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d) * pc.scale;
    }
    if (K_TYPE >= TYPE_TURBO2 && d < K_DIM) v *= sign1(d % K_GROUP);
    qsh[e] = v;
  }
  barrier();
  if (K_TYPE >= TYPE_TURBO2) {
    hadamard_rows(ROWS, K_DIM, K_GROUP, tid, WG);
    for (uint e = tid; e < ROWS * QDIM; e += WG) {
      const uint d = e % QDIM;
      if (d < K_DIM) qsh[e] *= sign2(d % K_GROUP) * inv_sqrt_group(K_GROUP);
    }
    barrier();
  }
  vec4 q[ROWS * DPL4];
  [[unroll]] for (uint j = 0; j < ROWS; ++j)
    [[unroll]] for (uint i = 0; i < DPL; ++i) q[j * DPL4 + i / 4][i % 4] = d0 + i < K_DIM ? qsh[j * QDIM + d0 + i] : 0.0;
  if (USE_QLUT) {
    for (uint e = tid; e < ROWS * K_DIM * NC; e += WG) {
      const uint c = e % NC, jd = e / NC, j = jd / K_DIM, d = jd % K_DIM;
      tsh[e] = qsh[j * QDIM + d] * turbo_centroid(K_TYPE, VARIANT_LUT8, c);
    }
  }
  barrier();  // qsh is reused after the loop

  // The positions each row may see: causal among the new tokens, then the window.
  uvec4 hi_pos[ROWS4], lo_pos[ROWS4];
  [[unroll]] for (uint j = 0; j < ROWS; ++j) {
    const uint gr = row_chunk * ROWS + j;
    HI(j) = gr < RM ? len - M + gr / GQA : 0u;
    LO(j) = gr < RM ? ((pc.window > 0 && HI(j) + 1 > pc.window) ? HI(j) + 1 - pc.window : 0u) : 1u;
  }

  vec4 m_run[ROWS4], l_run[ROWS4];
  vec4 o[ROWS * DPL4];
  [[unroll]] for (uint j = 0; j < ROWS; ++j) {
    MR(j) = NEG_INF;
    LR(j) = 0.0;
    [[unroll]] for (uint c = 0; c < DPL4; ++c) o[j * DPL4 + c] = vec4(0.0);
  }

  // Fetch a step ahead: the loads of step n+1 are in flight while step n is computed.
  uvec4 pre_k[PRE_K], pre_v[PRE_V];
  {
    const uint page0 = split_pages[0], slot0 = start % PAGE_SIZE;
    [[unroll]] for (uint r = 0; r < PRE_K; ++r) {
      const uint j = tid + r * WG;
      pre_k[r] = j < K_VECS ? fetch_k(page0, kvh, slot0, j) : uvec4(0);
    }
    [[unroll]] for (uint r = 0; r < PRE_V; ++r) {
      const uint j = tid + r * WG;
      pre_v[r] = j < V_VECS ? fetch_v(page0, kvh, slot0, j) : uvec4(0);
    }
  }

  for (uint base = start; base < end; base += STEP) {
    barrier();  // the previous step is no longer read from kst / vst
    [[unroll]] for (uint r = 0; r < PRE_K; ++r) {
      const uint j = tid + r * WG;
      if (j < K_VECS) kst[j] = pre_k[r];  // one 16-byte store: no bank conflicts
    }
    [[unroll]] for (uint r = 0; r < PRE_V; ++r) {
      const uint j = tid + r * WG;
      if (j < V_VECS) vst[j] = pre_v[r];
    }
    const uint next = base + STEP;
    if (next < end) {
      const uint page1 = split_pages[next / PAGE_SIZE - first_page], slot1 = next % PAGE_SIZE;
      [[unroll]] for (uint r = 0; r < PRE_K; ++r) {
        const uint j = tid + r * WG;
        if (j < K_VECS) pre_k[r] = fetch_k(page1, kvh, slot1, j);
      }
      [[unroll]] for (uint r = 0; r < PRE_V; ++r) {
        const uint j = tid + r * WG;
        if (j < V_VECS) pre_v[r] = fetch_v(page1, kvh, slot1, j);
      }
    }
    barrier();

    vec4 s[UNROLL * ROWS4];
    // Scores: each lane's partial dot products from the staged rows, then summed across the team.
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      const uint i = u * NTEAMS + team;  // the token's index in the step
      const bool valid = base + i < end;
      const uint row = i * K_BITS_ROW;
      vec4 kv[DPL4];
      if (USE_SMEM) smem_row(true, row, team, lane, kv);
      else if (d0 < K_DIM) kq_load(row, d0, kv);
      else [[unroll]] for (uint c = 0; c < DPL4; ++c) kv[c] = vec4(0.0);
      const float sc = d0 < K_DIM ? kq_scale(0u, i, K_GROUPS > 0 ? d0 / K_GROUP : 0u) : 0.0;
      float r[NC];  // reglut: centroid x scale of every entry, indexed by the loaded indices
      if (K_REGLUT)
        [[unroll]] for (uint c = 0; c < NC; ++c) r[c] = turbo_centroid(K_TYPE, VARIANT_LUT8, c) * sc;
      [[unroll]] for (uint j = 0; j < ROWS; ++j) {
        float acc = 0.0;
        if (USE_QLUT) {
          [[unroll]] for (uint k = 0; k < DPL; ++k)
            if (d0 + k < K_DIM) acc += tsh[(j * K_DIM + d0 + k) * NC + uint(kv[k / 4][k % 4])];
          acc *= sc;
        } else if (K_REGLUT) {
          [[unroll]] for (uint k = 0; k < DPL; ++k) acc += q[j * DPL4 + k / 4][k % 4] * r[uint(kv[k / 4][k % 4])];
        } else {
          [[unroll]] for (uint c = 0; c < DPL4; ++c) acc += dot(q[j * DPL4 + c], kv[c]);
          acc *= sc;
        }
        SC(u, j) = valid ? acc : 0.0;
      }
    }
    [[unroll]] for (uint off = 1; off < TEAM; off <<= 1)
      [[unroll]] for (uint u = 0; u < UNROLL; ++u)
        [[unroll]] for (uint j = 0; j < ROWS; ++j) SC(u, j) += subgroupShuffleXor(SC(u, j), off);

    // Online softmax over the step's tokens, per row.
    [[unroll]] for (uint j = 0; j < ROWS; ++j) {
      float mx = NEG_INF;
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
        const uint t = base + u * NTEAMS + team;
        float v = SC(u, j);
        if (pc.softcap > 0.0) v = pc.softcap * tanh(v / pc.softcap);
        v = (t < end && t >= LO(j) && t <= HI(j)) ? v : NEG_INF;
        SC(u, j) = v;
        mx = max(mx, v);
      }
      const float m_new = max(MR(j), mx);
      const float alpha = MR(j) == NEG_INF ? 0.0 : exp(MR(j) - m_new);
      MR(j) = m_new;
      LR(j) *= alpha;
      [[unroll]] for (uint c = 0; c < DPL4; ++c) o[j * DPL4 + c] *= alpha;
      [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
        const float p = SC(u, j) == NEG_INF ? 0.0 : exp(SC(u, j) - m_new);
        SC(u, j) = p;
        LR(j) += p;
      }
    }

    // P.V: the lane's dims of V, weighted by each row's probability.
    [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
      const uint i = u * NTEAMS + team;
      const bool valid = base + i < end;
      const uint row = i * V_BITS_ROW;
      vec4 vv[DPL4];
      if (USE_SMEM) {
        smem_row(false, row, team, lane, vv);
        if (!valid) [[unroll]] for (uint c = 0; c < DPL4; ++c) vv[c] = vec4(0.0);  // 0 * NaN would be NaN
      } else if (valid && d0 < V_DIM) {
        vq_load(row, d0, vv);
      } else {
        [[unroll]] for (uint c = 0; c < DPL4; ++c) vv[c] = vec4(0.0);
      }
      float sc = d0 < V_DIM ? vq_scale(0u, i, V_GROUPS > 0 ? d0 / V_GROUP : 0u) : 0.0;
      if (V_REGLUT) {
        float r[V_NC];
        [[unroll]] for (uint c = 0; c < V_NC; ++c) r[c] = turbo_centroid(V_TYPE, VARIANT_LUT8, c) * sc;
        [[unroll]] for (uint k = 0; k < DPL; ++k) vv[k / 4][k % 4] = r[uint(vv[k / 4][k % 4])];
        sc = 1.0;
      }
      [[unroll]] for (uint j = 0; j < ROWS; ++j) {
        const float p = SC(u, j) * sc;  // 0 for tail tokens and masked positions
        [[unroll]] for (uint c = 0; c < DPL4; ++c) o[j * DPL4 + c] += p * vv[c];
      }
    }
  }

  // Merge the teams of a subgroup (lanes with the same dims), then the subgroups. The loop bound
  // is a constant (the largest subgroup size) so that it unrolls: a runtime-bounded loop here made
  // the compiler keep `o` in local memory for the whole kernel (H200 statistics: 160-544 bytes
  // of local memory exactly when TEAM < 32, and mode 1 up to 19x slower).
  [[unroll]] for (uint off = TEAM; off < 128u; off <<= 1) {
    if (off < gl_SubgroupSize) {
      [[unroll]] for (uint j = 0; j < ROWS; ++j) {
        const float m2 = subgroupShuffleXor(MR(j), off), l2 = subgroupShuffleXor(LR(j), off);
        const float mx = max(MR(j), m2);
        const float a = MR(j) == NEG_INF ? 0.0 : exp(MR(j) - mx);
        const float c = m2 == NEG_INF ? 0.0 : exp(m2 - mx);
        MR(j) = mx;
        LR(j) = a * LR(j) + c * l2;
        [[unroll]] for (uint k = 0; k < DPL4; ++k)
          o[j * DPL4 + k] = a * o[j * DPL4 + k] + c * subgroupShuffleXor(o[j * DPL4 + k], off);
      }
    }
  }
  const uint sg = gl_SubgroupID;
  const bool leader = gl_SubgroupInvocationID < TEAM;  // the first team holds the subgroup's state
  if (leader && lane == 0)
    [[unroll]] for (uint j = 0; j < ROWS; ++j) {
      msh[(sg * ROWS + j) * 2] = MR(j);
      msh[(sg * ROWS + j) * 2 + 1] = LR(j);
    }
  barrier();
  float m_all[ROWS], l_all[ROWS];
  [[unroll]] for (uint j = 0; j < ROWS; ++j) {
    float mx = NEG_INF;
    for (uint g = 0; g < gl_NumSubgroups; ++g) mx = max(mx, msh[(g * ROWS + j) * 2]);
    float l = 0.0;
    for (uint g = 0; g < gl_NumSubgroups; ++g) {
      const float mg = msh[(g * ROWS + j) * 2];
      if (mg != NEG_INF) l += exp(mg - mx) * msh[(g * ROWS + j) * 2 + 1];
    }
    m_all[j] = mx;
    l_all[j] = l;
  }
  for (uint g = 0; g < gl_NumSubgroups; ++g) {
    if (sg == g && leader)
      [[unroll]] for (uint j = 0; j < ROWS; ++j) {
        const float a = MR(j) == NEG_INF ? 0.0 : exp(MR(j) - m_all[j]);
        [[unroll]] for (uint i = 0; i < DPL; ++i) {
          const uint d = d0 + i;
          if (d < V_DIM) qsh[j * QDIM + d] = (g == 0 ? 0.0 : qsh[j * QDIM + d]) + a * o[j * DPL4 + i / 4][i % 4];
        }
      }
    barrier();
  }

  if (DIRECT == 0) {
    for (uint e = tid; e < ROWS * (V_DIM + 2); e += WG) {
      const uint j = e / (V_DIM + 2), k = e % (V_DIM + 2), gr = row_chunk * ROWS + j;
      if (gr >= RM) continue;
      const uint base = (((b * KV_HEADS + kvh) * RM + gr) * pc.splits + split) * (V_DIM + 2);
      part[base + k] = k == 0 ? m_all[j] : k == 1 ? l_all[j] : qsh[j * QDIM + k - 2];
    }
    return;
  }

  // One split: normalise, undo the V rotation, store.
  if (V_TYPE >= TYPE_TURBO2) {
    for (uint e = tid; e < ROWS * QDIM; e += WG) {
      const uint d = e % QDIM;
      if (d < V_DIM) qsh[e] *= sign2(d % V_GROUP);
    }
    barrier();
    hadamard_rows(ROWS, V_DIM, V_GROUP, tid, WG);
  }
  for (uint e = tid; e < ROWS * HEAD_DIM; e += WG) {
    const uint j = e / HEAD_DIM, d = e % HEAD_DIM, gr = row_chunk * ROWS + j;
    if (gr >= RM) continue;
    float v = qsh[j * QDIM + d] / l_all[j];
    if (V_TYPE >= TYPE_TURBO2) v *= sign1(d % V_GROUP) * inv_sqrt_group(V_GROUP);
    const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
    const uint index = pc.out_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d;
    if (OUT_F16 != 0) out16[index] = uint16_t(packHalf2x16(vec2(v, 0.0)) & 0xffffu);
    else out32[index] = v;
  }
}
