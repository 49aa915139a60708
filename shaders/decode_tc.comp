#version 450
// Split-K flash decoding over turbo K and V on the tensor cores (VK_NV_cooperative_matrix), the
// "tc" variant of attention/decoder.hpp. Same bindings, push constants and partials as
// decode.comp; the reduce pass (decode_reduce.comp) always follows.
//
// A workgroup = 4 subgroups; each streams its own tiles of 16 consecutive tokens (a tile never
// straddles a page) with its own online-softmax state. Per tile:
//   scores  S[16 tokens x 8] = sum over 16-dim blocks of  C[16 tokens x 16 dims] . Qb[16 dims x 8]
//   output  O[16 dims x 8]  += C^T[16 dims x 16 tokens] . Pb[16 tokens x 8]      (per dim block)
// where C holds the tokens' centroids (the norms stay outside: score = norm_k x q.c, and the V
// norm is folded into p). Exactness (1e-4 per head against float64) rules out plain f16 operands,
// so every operand is split into f16 hi + lo halves: Qb's 8 columns are the rows' q_hi (0..3)
// and q_lo (4..7), Pb's the rows' w_hi and w_lo (w = p x norm_v), and C is multiplied as C_hi and
// C_lo (two MMAs into the same accumulator): column j + column j+4 of the accumulator is
// row j's value, with every cross term but lo x lo.
//
// The centroid fragments are built in registers (from the tile's bits, staged in shared memory),
// not loaded: each lane dequantizes exactly the elements it holds. That assumes the fragment layout of NVIDIA's mma.m16n8k16, in the element
// order its driver uses (A: lane 4g + c holds (g, 2c..2c+1), (g, 2c+8..2c+9), (g+8, 2c..2c+1),
// (g+8, 2c+8..2c+9); accumulator: (g, 2c..2c+1), (g+8, 2c..2c+1)), which the host checks once per
// device with shaders/coopmat_probe.comp before offering tc.
// Pair tables in shared memory turn two elements' bits into their f16 hi and lo pairs at once.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_control_flow_attributes : require

#include "codebooks.glsl"
#include "layout.glsl"
#include "dequant.glsl"
#include "rotation.glsl"

// Specialization constants: attention/decoder.cpp lists the same ids.
layout(constant_id = 0) const uint K_TYPE = 3;
layout(constant_id = 1) const uint V_TYPE = 3;
layout(constant_id = 2) const uint HEAD_DIM = 128;
layout(constant_id = 3) const uint DIM = 128;        // stored elements per row: one group (64 or 128)
layout(constant_id = 4) const uint K_BITS_ROW = 48;
layout(constant_id = 5) const uint V_BITS_ROW = 48;
layout(constant_id = 6) const uint PAGE_SIZE = 64;
layout(constant_id = 7) const uint KV_HEADS = 8;
layout(constant_id = 8) const uint GQA = 4;
layout(constant_id = 9) const uint M = 1;
layout(constant_id = 10) const uint ROWS = 4;        // query rows per workgroup, <= 4
layout(constant_id = 11) const uint Q_F16 = 0;
layout(constant_id = 12) const uint MODE = 0;        // 0 or 1 (reads nothing)

layout(local_size_x = 128) in;

const uint WG = 128, SUBGROUPS = 4, TILE = 16, STEP = SUBGROUPS * TILE;
const uint RM = GQA * M;
const uint Q_HEADS = KV_HEADS * GQA;
const uint BLOCKS = DIM / 16;
const uint K_REGION = PAGE_SIZE * (K_BITS_ROW + 2);
const uint V_REGION = PAGE_SIZE * (V_BITS_ROW + 2);
const uint K_NW = K_BITS_ROW / 4, V_NW = V_BITS_ROW / 4;  // words per row (even)
const bool READS = MODE == MODE_FULL;
const float NEG_INF = -1.0 / 0.0;

layout(std430, binding = 0) readonly buffer KPool { uvec4 k4[]; };
layout(std430, binding = 1) readonly buffer VPool { uvec4 v4[]; };
layout(std430, binding = 2) readonly buffer Pages { uint pages[]; };
layout(std430, binding = 3) readonly buffer Seqs { uvec4 seqs[]; };
layout(std430, binding = 4) readonly buffer Q { uint qw[]; };
layout(std430, binding = 5) writeonly buffer Out { float out32[]; };  // unused: the reduce writes
layout(std430, binding = 6) buffer Partials { float part[]; };

layout(push_constant) uniform Push {
  float scale;
  float softcap;
  uint window;
  uint chunk;
  uint splits;
  uint q_offset;
  uint out_offset;
  uint zero;
  uint seq_len;
  uint seq_table;
} pc;

// Lo halves must not be f16 subnormals (which may flush to zero): the centroids are scaled by CS
// and the query rows by a power of two qs that puts their largest value in [2^11, 2^12), both
// exact, and divided out of the scores and outputs.
const float CS = 1024.0;
shared uint qmax_bits;

// x as f16 hi + lo with hi + lo = x to ~2^-21 relative: hi keeps x's top 10 mantissa bits (exact
// in f16), lo = x - hi is exact in f32. (Written with integer bits: the driver folded
// float(float16_t(x)) back to x, which made every lo half 0 and the error that of plain f16.)
f16vec2 split_hilo(float x) {
  const float hi = uintBitsToFloat(floatBitsToUint(x) & 0xffffe000u);
  return f16vec2(float16_t(hi), float16_t(x - hi));
}

// Pair tables: entry e (two elements' bits, as decode.comp's smem variant) -> (f16 hi pair, f16 lo pair).
const uint K_PAIRS = K_TYPE == TYPE_TURBO4 ? 256 : K_TYPE == TYPE_TURBO3 ? 64 : 16;
const uint V_PAIRS = V_TYPE == TYPE_TURBO4 ? 256 : V_TYPE == TYPE_TURBO3 ? 64 : 16;
shared uvec2 kpair[K_PAIRS];
shared uvec2 vpair[V_PAIRS];
shared float qsh[ROWS * DIM];                  // the rotated query rows
shared float16_t qb[DIM * 8];                  // Qb: [dim][q_hi of rows 0..3, q_lo of rows 0..3]
shared float16_t pb[SUBGROUPS * TILE * 8];     // per subgroup Pb: [token][w_hi 0..3, w_lo 0..3]
shared float osh[SUBGROUPS * ROWS * DIM];      // per subgroup output rows, then merged
shared float msh[SUBGROUPS * ROWS * 2];        // per subgroup (m, l) of each row
const uint MAX_SPLIT_PAGES = 512;
shared uint split_pages[MAX_SPLIT_PAGES];

uvec2 pair_entry(uint type, uint e) {
  const uvec2 i = pair_indices(type, e);
  const float ca = CS * turbo_centroid(type, VARIANT_LUT8, i.x), cb = CS * turbo_centroid(type, VARIANT_LUT8, i.y);
  const f16vec2 a2 = split_hilo(ca), b2 = split_hilo(cb);
  return uvec2(packFloat2x16(f16vec2(a2.x, b2.x)), packFloat2x16(f16vec2(a2.y, b2.y)));
}

// Staging: each subgroup copies its next tile (16 tokens' K and V bits rows, contiguous in a page,
// then their norms) with 16-byte loads into registers while it computes the current tile, and
// stores them into its slice of shared memory between tiles; the lanes then read the words of
// their fragment elements from there. (Loading each lane's rows straight into registers left the
// loads' latency exposed: mode 0 took ~130 us more than mode 1 at 128K.)
const uint NKU = K_BITS_ROW, NVU = V_BITS_ROW;  // 16-byte units of 16 tokens' rows
const uint NU = NKU + NVU + 4;                  // + 2 units of K norms, 2 of V norms
const uint NPRE = (NU + 31) / 32;
// Row strides in shared memory: rows of a multiple of 8 words get 4 more, so that the 8 rows the
// lanes read at once (K: g = 0..7; V: 2c for c = 0..3) fall in different banks.
const uint KS = K_NW % 8 == 0 ? K_NW + 4 : K_NW, VS = V_NW % 8 == 0 ? V_NW + 4 : V_NW;
const uint KOFF = 16 * KS, NOFF = KOFF + 16 * VS, SWORDS = NOFF + 16;  // V rows, norms, total
shared uint stage_w[SUBGROUPS * SWORDS];
#define SW(i) stage_w[i]

// K pair (dims 16 kb + 2c + 8h, +1) of a token's row words: the pair-table entry.
#define K_ENTRY(w, kb, h)                                                                          \
  (K_TYPE == TYPE_TURBO4 ? (SW((w) + 2 * (kb) + (h)) >> (8u * c)) & 255u                             \
   : K_TYPE == TYPE_TURBO2 ? (SW((w) + (kb)) >> (4u * c + 16u * (h))) & 15u                          \
   : ((SW((w) + (kb)) >> (4u * c + 16u * (h))) & 15u) |                                              \
     (((SW((w) + DIM / 16 + (kb) / 2) >> (16u * ((kb) % 2) + 2u * c + 8u * (h))) & 3u) << 4))

// V entry of two tokens' rows (a, b) at dim 16 db + g + 8h.
#define V_BITS(w, db, h)                                                                          \
  (V_TYPE == TYPE_TURBO4 ? (SW((w) + 2 * (db) + (h)) >> (4u * g)) & 15u                              \
   : ((SW((w) + (db)) >> (2u * g + 16u * (h))) & 3u))
#define V_SIGN(w, db, h) ((SW((w) + DIM / 16 + (db) / 2) >> (16u * ((db) % 2) + g + 8u * (h))) & 1u)
#define V_ENTRY(wa, wb, db, h)                                                                    \
  (V_TYPE == TYPE_TURBO4 ? V_BITS(wa, db, h) | (V_BITS(wb, db, h) << 4)                           \
   : V_TYPE == TYPE_TURBO2 ? V_BITS(wa, db, h) | (V_BITS(wb, db, h) << 2)                         \
   : V_BITS(wa, db, h) | (V_BITS(wb, db, h) << 2) | (V_SIGN(wa, db, h) << 4) | (V_SIGN(wb, db, h) << 5))

// The 16-byte units of tile tb this lane stages (zeros in profile mode 1).
void fetch_tile(uint tb, uint lane, uint kvh, uint first_page, out uvec4 pre[NPRE]) {
  const uint page = split_pages[tb / PAGE_SIZE - first_page], slot = tb % PAGE_SIZE;
  const uint kreg = page * (K_REGION * KV_HEADS) + kvh * K_REGION;
  const uint vreg = page * (V_REGION * KV_HEADS) + kvh * V_REGION;
  [[unroll]] for (uint i = 0; i < NPRE; ++i) {
    const uint u = lane + 32u * i;
    uvec4 x = uvec4(0u);
    if (READS) {
      if (u < NKU) x = k4[(kreg + slot * K_BITS_ROW) / 16u + u];
      else if (u < NKU + NVU) x = v4[(vreg + slot * V_BITS_ROW) / 16u + u - NKU];
      else if (u < NKU + NVU + 2u) x = k4[(kreg + PAGE_SIZE * K_BITS_ROW + 2u * slot) / 16u + u - NKU - NVU];
      else if (u < NU) x = v4[(vreg + PAGE_SIZE * V_BITS_ROW + 2u * slot) / 16u + u - NKU - NVU - 2u];
    }
    pre[i] = x;
  }
}

#define R_INDEX(j, d) ((j) * DIM + (d))
TKV_DEFINE_HADAMARD(hadamard_rows, qsh, R_INDEX)

#include "query.glsl"

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint sg = tid / 32u, lane = tid % 32u;  // the plan requires subgroups of 32
  const uint g = lane >> 2, c = lane & 3u;
  const uint split = gl_WorkGroupID.x;
  const uint kvh = gl_WorkGroupID.y % KV_HEADS, row_chunk = gl_WorkGroupID.y / KV_HEADS;
  const uint b = gl_WorkGroupID.z;
  const uvec4 info = pc.seq_len != 0u ? uvec4(pc.seq_len, pc.seq_table, 0u, 0u) : seqs[b];
  const uint len = info.x, table = info.y;
  const uint start = split * pc.chunk;
  if (start >= len) return;
  const uint end = min(len, start + pc.chunk);

  const uint first_page = start / PAGE_SIZE;
  for (uint p = tid; p <= (end - 1) / PAGE_SIZE - first_page; p += WG) split_pages[p] = pages[table + first_page + p];
  for (uint i = tid; i < K_PAIRS; i += WG) kpair[i] = pair_entry(K_TYPE, i);
  for (uint i = tid; i < V_PAIRS; i += WG) vpair[i] = pair_entry(V_TYPE, i);

  // Query rows (scaled), rotated as the cache's K rows were.
  for (uint e = tid; e < ROWS * DIM; e += WG) {
    const uint j = e / DIM, d = e % DIM, gr = row_chunk * ROWS + j;
    float v = 0.0;
    if (gr < RM && d < HEAD_DIM) {
      const uint m = gr / GQA, qh = kvh * GQA + gr % GQA;
      v = load_q(pc.q_offset + ((b * M + m) * Q_HEADS + qh) * HEAD_DIM + d) * pc.scale;
    }
    qsh[e] = v * sign1(d);
  }
  if (tid == 0u) qmax_bits = 0u;
  barrier();
  hadamard_rows(ROWS, DIM, DIM, tid, WG);
  for (uint e = tid; e < ROWS * DIM; e += WG) {
    const float v = qsh[e] * sign2(e % DIM) * inv_sqrt_group(DIM);
    qsh[e] = v;
    atomicMax(qmax_bits, floatBitsToUint(abs(v)));
  }
  barrier();
  int qexp;
  frexp(uintBitsToFloat(qmax_bits), qexp);  // max |q| < 2^qexp
  const float qs = qmax_bits == 0u ? 1.0 : exp2(float(12 - clamp(qexp, -100, 100)));
  for (uint e = tid; e < DIM * 8; e += WG) {
    const uint d = e / 8, col = e % 8, j = col % 4;
    const float v = j < ROWS ? qsh[j * DIM + d] * qs : 0.0;
    const f16vec2 h = split_hilo(v);
    qb[e] = col < 4 ? h.x : h.y;
  }
  barrier();
  const float unscale = 1.0 / (CS * qs);  // a power of two

  fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> acc[BLOCKS];
  [[unroll]] for (uint db = 0; db < BLOCKS; ++db) acc[db] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);

  // The lane's rows r0, r0 + 1 (its accumulator columns 2c, 2c+1 are rows (2c % 4) + 0/1, hi for
  // c < 2, lo for c >= 2); its tokens g and g + 8 of each tile.
  const uint r0 = 2u * (c & 1u);
  float m_run[2] = float[](NEG_INF, NEG_INF), l_run[2] = float[](0.0, 0.0);
  uint hi_tok[2], lo_tok[2];
  bool row_live[2];
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    const uint gr = row_chunk * ROWS + r0 + k;
    row_live[k] = r0 + k < ROWS && gr < RM;
    hi_tok[k] = len - M + (row_live[k] ? gr / GQA : 0u);
    lo_tok[k] = (pc.window > 0 && hi_tok[k] + 1 > pc.window) ? hi_tok[k] + 1 - pc.window : 0u;
  }
  const uint pbase = sg * TILE * 8;
  const uint sbase = sg * SWORDS;
  uvec4 pre[NPRE];
  if (start + sg * TILE < end) fetch_tile(start + sg * TILE, lane, kvh, first_page, pre);

  for (uint tb = start + sg * TILE; tb < end; tb += STEP) {
    // This tile's staged rows into shared memory, then the next tile's loads (in flight meanwhile).
    subgroupBarrier();  // the previous tile's words are read
    [[unroll]] for (uint i = 0; i < NPRE; ++i)
      if (lane + 32u * i < NU) {
        const uint u = lane + 32u * i;
        const uint at = sbase + (u < NKU ? (KS == K_NW ? 4u * u : (u / (K_NW / 4)) * KS + 4u * (u % (K_NW / 4)))
                                 : u < NKU + NVU ? KOFF + (VS == V_NW ? 4u * (u - NKU) : ((u - NKU) / (V_NW / 4)) * VS + 4u * ((u - NKU) % (V_NW / 4)))
                                 : NOFF + 4u * (u - NKU - NVU));
        stage_w[at] = pre[i].x; stage_w[at + 1u] = pre[i].y; stage_w[at + 2u] = pre[i].z; stage_w[at + 3u] = pre[i].w;
      }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    if (tb + STEP < end) fetch_tile(tb + STEP, lane, kvh, first_page, pre);
    // Word offsets of the lane's rows: K of tokens g, g + 8; V of tokens 2c, 2c + 1, 2c + 8, 2c + 9.
    const uint kw0 = sbase + g * KS, kw1 = kw0 + 8u * KS;
    const uint va0 = sbase + KOFF + 2u * c * VS, vb0 = va0 + VS, va1 = va0 + 8u * VS, vb1 = va1 + VS;
    const uint kn_at = sbase + NOFF, vn_at = kn_at + 8u;
    const float kn[2] = float[](READS ? half_at(SW(kn_at + g / 2u), 2u * g) : 1.0, READS ? half_at(SW(kn_at + 4u + g / 2u), 2u * g) : 1.0);
    const float vn[2] = float[](READS ? half_at(SW(vn_at + g / 2u), 2u * g) : 1.0, READS ? half_at(SW(vn_at + 4u + g / 2u), 2u * g) : 1.0);

    // Scores: the centroid fragments of each 16-dim block, hi then lo, times Qb.
    // Four accumulators (block parity x hi/lo): chains of BLOCKS / 2 dependent MMAs, not 2 BLOCKS.
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> s[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) s[i] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);
    [[unroll]] for (uint kb = 0; kb < BLOCKS; ++kb) {
      const uvec2 e0 = kpair[K_ENTRY(kw0, kb, 0u)], e1 = kpair[K_ENTRY(kw1, kb, 0u)];
      const uvec2 e2 = kpair[K_ENTRY(kw0, kb, 1u)], e3 = kpair[K_ENTRY(kw1, kb, 1u)];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ah, al;
      f16vec2 x;
      x = unpackFloat2x16(e0.x); ah[0] = x.x; ah[1] = x.y;
      x = unpackFloat2x16(e2.x); ah[2] = x.x; ah[3] = x.y;
      x = unpackFloat2x16(e1.x); ah[4] = x.x; ah[5] = x.y;
      x = unpackFloat2x16(e3.x); ah[6] = x.x; ah[7] = x.y;
      x = unpackFloat2x16(e0.y); al[0] = x.x; al[1] = x.y;
      x = unpackFloat2x16(e2.y); al[2] = x.x; al[3] = x.y;
      x = unpackFloat2x16(e1.y); al[4] = x.x; al[5] = x.y;
      x = unpackFloat2x16(e3.y); al[6] = x.x; al[7] = x.y;
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> qf;  // from shared memory each time: 16 registers fewer
      coopMatLoadNV(qf, qb, kb * 128, 8, false);
      s[2 * (kb % 2)] = coopMatMulAddNV(ah, qf, s[2 * (kb % 2)]);
      s[2 * (kb % 2) + 1] = coopMatMulAddNV(al, qf, s[2 * (kb % 2) + 1]);
    }

    // The lane's scores: token g (elements 0, 1) and g + 8 (2, 3) of rows r0, r0 + 1; the hi and
    // lo columns of a row sit in lanes c and c ^ 2.
    float sc[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint k = i & 1u, t = tb + g + 8u * (i >> 1);
      const float si = (s[0][i] + s[1][i]) + (s[2][i] + s[3][i]);
      float v = (si + subgroupShuffleXor(si, 2u)) * (kn[i >> 1] * unscale);
      if (pc.softcap > 0.0) v = pc.softcap * tanh(v / pc.softcap);
      sc[i] = row_live[k] && t < end && t >= lo_tok[k] && t <= hi_tok[k] ? v : NEG_INF;
    }
    float alpha[2];
    [[unroll]] for (uint k = 0; k < 2; ++k) {
      float mx = max(sc[k], sc[k + 2]);
      mx = max(mx, subgroupShuffleXor(mx, 4u));
      mx = max(mx, subgroupShuffleXor(mx, 8u));
      mx = max(mx, subgroupShuffleXor(mx, 16u));
      const float m_new = max(m_run[k], mx);
      alpha[k] = m_new == m_run[k] || m_run[k] == NEG_INF ? 1.0 : exp(m_run[k] - m_new);
      m_run[k] = m_new;
      l_run[k] *= alpha[k];
    }
    if (subgroupAny(alpha[0] != 1.0 || alpha[1] != 1.0)) {
      [[unroll]] for (uint db = 0; db < BLOCKS; ++db)
        [[unroll]] for (uint i = 0; i < 4; ++i) acc[db][i] *= alpha[i & 1u];
    }
    // Probabilities: l sums p; Pb holds w = p x norm_v (hi in lanes c < 2, lo in c >= 2).
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint k = i & 1u, t8 = 8u * (i >> 1);
      const float p = sc[i] == NEG_INF ? 0.0 : exp(sc[i] - m_run[k]);
      l_run[k] += p;
      const float w = p == 0.0 ? 0.0 : p * vn[i >> 1];
      const f16vec2 h = split_hilo(w);
      pb[pbase + (g + t8) * 8u + 2u * c + k] = c < 2u ? h.x : h.y;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> pf;
    coopMatLoadNV(pf, pb, pbase, 8, false);
    subgroupBarrier();  // pb is read before the next tile overwrites it

    // Output: per 16-dim block, the V centroids (dims x tokens), hi then lo, times Pb.
    [[unroll]] for (uint db = 0; db < BLOCKS; ++db) {
      const uvec2 e0 = vpair[V_ENTRY(va0, vb0, db, 0u)], e1 = vpair[V_ENTRY(va0, vb0, db, 1u)];
      const uvec2 e2 = vpair[V_ENTRY(va1, vb1, db, 0u)], e3 = vpair[V_ENTRY(va1, vb1, db, 1u)];
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ah, al;
      f16vec2 x;
      x = unpackFloat2x16(e0.x); ah[0] = x.x; ah[1] = x.y;
      x = unpackFloat2x16(e2.x); ah[2] = x.x; ah[3] = x.y;
      x = unpackFloat2x16(e1.x); ah[4] = x.x; ah[5] = x.y;
      x = unpackFloat2x16(e3.x); ah[6] = x.x; ah[7] = x.y;
      x = unpackFloat2x16(e0.y); al[0] = x.x; al[1] = x.y;
      x = unpackFloat2x16(e2.y); al[2] = x.x; al[3] = x.y;
      x = unpackFloat2x16(e1.y); al[4] = x.x; al[5] = x.y;
      x = unpackFloat2x16(e3.y); al[6] = x.x; al[7] = x.y;
      acc[db] = coopMatMulAddNV(ah, pf, acc[db]);
      acc[db] = coopMatMulAddNV(al, pf, acc[db]);
    }
  }

  // The subgroup's state: l summed over its tokens (lanes with the same c), o = hi + lo columns.
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    l_run[k] += subgroupShuffleXor(l_run[k], 4u);
    l_run[k] += subgroupShuffleXor(l_run[k], 8u);
    l_run[k] += subgroupShuffleXor(l_run[k], 16u);
  }
  [[unroll]] for (uint db = 0; db < BLOCKS; ++db)
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const float o = (acc[db][i] + subgroupShuffleXor(acc[db][i], 2u)) * (1.0 / CS);
      const uint j = r0 + (i & 1u), d = 16u * db + g + 8u * (i >> 1);
      if (c < 2u && j < ROWS) osh[(sg * ROWS + j) * DIM + d] = o;
    }
  if (g == 0u && c < 2u)
    [[unroll]] for (uint k = 0; k < 2; ++k)
      if (r0 + k < ROWS) {
        msh[(sg * ROWS + r0 + k) * 2] = m_run[k];
        msh[(sg * ROWS + r0 + k) * 2 + 1] = l_run[k];
      }
  barrier();

  // Merge the subgroups and write the split's partials (m, l, o) for decode_reduce.comp.
  for (uint e = tid; e < ROWS * (DIM + 2); e += WG) {
    const uint j = e / (DIM + 2), k = e % (DIM + 2), gr = row_chunk * ROWS + j;
    if (gr >= RM) continue;
    float mx = NEG_INF;
    [[unroll]] for (uint q = 0; q < SUBGROUPS; ++q) mx = max(mx, msh[(q * ROWS + j) * 2]);
    float v = 0.0;
    [[unroll]] for (uint q = 0; q < SUBGROUPS; ++q) {
      const float mq = msh[(q * ROWS + j) * 2];
      const float a = mq == NEG_INF ? 0.0 : exp(mq - mx);
      v += a * (k == 1u ? msh[(q * ROWS + j) * 2 + 1] : k >= 2u ? osh[(q * ROWS + j) * DIM + k - 2u] : 0.0);
    }
    const uint base = (((b * KV_HEADS + kvh) * RM + gr) * pc.splits + split) * (DIM + 2);
    part[base + k] = k == 0u ? mx : v;
  }
}
