// The fused append of the scalar decode kernel (compiled with TKV_FUSED_APPEND: decode_append):
// one dispatch appends each sequence's M new tokens to the layer and decodes their M queries,
// what record_append followed by a decode call does in three dispatches. (The tc kernel has no
// tail: its splits that hold new tokens store them themselves, decode_tc.comp's split_append.)
//
// The call's length `len` counts the new tokens; they sit at [old, len), old = len - M. The
// regular splits cover [0, old) as a decode call over the old tokens would (x = 1 .. splits). One
// extra workgroup per (sequence, KV head, row chunk), the grid's first column (dispatched first;
// the plan leaves the tails room in the first wave), quantizes the new K and V rows with the
// append's own code (quantize_row.glsl) and, in row chunk 0, stores them; it attends its chunk's
// query rows to the new tokens from their codes in shared memory, writes that as split slot n - 1
// (after the n - 1 regular splits holding tokens), counts itself in, and merges when it is the
// group's last (split_merge.glsl). Nothing reads the new tokens back in this dispatch.
//
// The split that holds the last old tokens reads tile words (turbo) or scale words whose other
// bits the tail sets meanwhile: the tail only clears and sets the new tokens' bits (atomics on
// whole words, 16-bit stores of norms), so the old tokens' bits read the same whichever comes
// first, and the kernels mask tokens past their range (their values never reach a sum).
//
// Needs, before inclusion: codebooks.glsl, layout.glsl, numeric.glsl, rotation.glsl,
// split_merge.glsl, GL_KHR_shader_subgroup_arithmetic and _shuffle; the constants HEAD_DIM,
// KV_HEADS, GQA, M, RM, Q_HEADS, ROWS, PAGE_SIZE, K_TYPE, V_DIM; QR_COPIES (rows quantized at once, default 2)
// and QR_MIN_SUBGROUP (quantize_row.glsl); RowShape tail_shape(bool is_v) (after
// new_rows.glsl and quantize_row.glsl, which this includes); the rows R_GET / R_SET (ROWS x the larger stored dim,
// floats); load_q;
// merge_splits, finish_rows; the push constants pc.k_new, pc.v_new (elements to the new rows),
// pc.scale, pc.softcap, pc.window, pc.chunk; the constants K_NEW_F16, V_NEW_F16 and the
// bindings' names Pages `pages`.
#ifndef TKV_APPEND_TAIL_GLSL
#define TKV_APPEND_TAIL_GLSL

// The pools, written here: the K and V pools of bindings 0 and 1 bound a second time (10: K,
// 11: V), so that the splits' reads through 0 and 1 stay read-only to the driver. (Tried for the
// fused call's slower tiles at 4K on an H100, turbo3 tc 3.62 us against 2.75 unfused: no change,
// bench/results/2026-11-27-session18 run 3; kept as the cleaner contract.) The splits read no word
// the tail changes except those of the last old tokens' tiles and rows, whose other tokens' bits
// stay as they were: either value of such a word gives the same scores.
layout(std430, binding = 10) buffer KPoolRW { uint k_rw[]; };
layout(std430, binding = 10) buffer KPoolRW16 { uint16_t k_rw16[]; };
layout(std430, binding = 11) buffer VPoolRW { uint v_rw[]; };
layout(std430, binding = 11) buffer VPoolRW16 { uint16_t v_rw16[]; };

void qr_pool_and(bool is_v, uint word, uint bits) {
  if (is_v) atomicAnd(v_rw[word], bits);
  else atomicAnd(k_rw[word], bits);
}
void qr_pool_or(bool is_v, uint word, uint bits) {
  if (is_v) atomicOr(v_rw[word], bits);
  else atomicOr(k_rw[word], bits);
}
void qr_pool_store(bool is_v, uint word, uint value) {
  if (is_v) v_rw[word] = value;
  else k_rw[word] = value;
}
void qr_pool_store16(bool is_v, uint index, uint value) {
  if (is_v) v_rw16[index] = uint16_t(value);
  else k_rw16[index] = uint16_t(value);
}
#ifndef QR_COPIES
#define QR_COPIES 2  // two rows at once (the includer may keep one copy: one row after the other)
#endif
#include "new_rows.glsl"
RowShape tail_shape(bool is_v);  // the includer's

const uint TAIL_TOKENS = 8;                // the new tokens, M <= 8
shared float tail_p[ROWS * TAIL_TOKENS];  // per row and new token: score, then probability
shared float tail_ml[ROWS * 2];           // per row: m, l

// Element e of the row quantized in `copy`: the value the kernels compute with once it is stored
// (qr_quantize leaves it in qr_x).
float qr_value(uint copy, uint e) { return QR_X_GET(copy * 256u + e); }

// Element d of query row gr, scaled, with the rotation's first signs (turbo K; groups of G).
float tail_q(uint b, uint kvh, uint gr, uint d, uint G) {
  float v = 0.0;
  if (gr < RM && d < HEAD_DIM)
    v = load_q(pc.q_offset + ((b * M + gr / GQA) * Q_HEADS + kvh * GQA + gr % GQA) * HEAD_DIM + d) * pc.scale;
  return K_TYPE >= TYPE_TURBO2 ? v * sign1(d % G) : v;
}

// Query row j of the chunk at row0 (scaled), rotated as the cache's K rows were, into R row j,
// by the calling subgroup in registers (quantize_row.glsl's layout: dim lane + QR_W i; no barrier).
void tail_query_row(uint b, uint kvh, uint row0, uint j) {
  const RowShape ks = tail_shape(false);
  const uint gr = row0 + j, G = ks.group_elems;
  const uint S = QR_W, lane = gl_SubgroupInvocationID, n = (ks.stored_dim + S - 1u) / S;
  float x[QR_REGS];
  [[unroll]] for (uint i = 0; i < QR_REGS; ++i) x[i] = i < n ? tail_q(b, kvh, gr, lane + S * i, G) : 0.0;
  if (K_TYPE >= TYPE_TURBO2) {
    TKV_HADAMARD_REGISTERS(x, QR_REGS, n, G, lane, S)
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) x[i] *= sign2((lane + S * i) % G) * inv_sqrt_group(G);
  }
  [[unroll]] for (uint i = 0; i < QR_REGS; ++i)
    if (lane < S && i < n && lane + S * i < ks.stored_dim) R_SET(j, lane + S * i, x[i]);
}

// The workgroup x = 0 of row chunk `row_chunk`, for sequence b (length len, page table at
// `table`) and KV head kvh. The 2M new rows (K_0 .. K_M-1, then V_0 .. V_M-1) go through the
// quantizer C at a time, a subgroup per row (C = QR_COPIES, at most the subgroups and 2M; the chunk's
// query rows meanwhile on the other subgroups); after each round's barrier, the subgroups that
// quantized store their rows (row chunk 0's tail), the K rows' scores come from their values, the
// softmax follows the last K row, and the V rows add to the output rows (R, free once the scores
// are done). No subgroup barrier: each subgroup's tasks read only what its own lanes wrote until
// the workgroup's barriers (a subgroup barrier in a branch waits for the whole workgroup on
// llvmpipe, whose NIR backend makes any execution-scope barrier a workgroup one).
void append_tail(uint b, uint kvh, uint row_chunk, uint len, uint table, uint tid, uint nthreads) {
  const RowShape ks = tail_shape(false), vs = tail_shape(true);
  const uint old = len - M, row0 = row_chunk * ROWS;
  const bool store = row_chunk == 0u;  // (every chunk's tail quantizes the same rows; one stores them)
  const uint sgs = min(gl_SubgroupSize, nthreads);  // (a workgroup smaller than a subgroup is one)
  // (sg through a subgroup reduction: the driver then knows the branches on it uniform in each
  // subgroup and issues the shuffles under them plainly; otherwise NVIDIA's wraps each shuffle in
  // a convergence check, ~8 instructions with MATCH.ANY, H200 SASS.)
  const uint nsg = nthreads / sgs, sg = subgroupMin(tid / sgs), lane = tid % sgs;
  const uint C = min(min(QR_COPIES, nsg), 2u * M);  // (beyond the rows, the subgroups take query rows)
  for (uint r0 = 0; r0 < 2u * M; r0 += C) {
    // The rows on subgroups 0 .. C - 1; in the first round the query rows on the others (on every
    // subgroup, after its row, where there are no others).
    const uint r = r0 + sg;
    const bool quantizes = sg < C && r < 2u * M;
    const RowShape rs = r >= M ? vs : ks;
    const QrWork w = QrWork(sg, lane, sgs);
    if (quantizes) quantize_new_row(rs, w, b, kvh, r % M);
    const uint first = nsg > C ? C : 0u;
    if (r0 == 0u && sg >= first)
      for (uint j = sg - first; j < ROWS; j += nsg - first) tail_query_row(b, kvh, row0, j);
    barrier();
    if (r0 == 0u) TL_STAMP(1u);
    if (quantizes && store) {
      const uint pos = old + r % M;
      qr_store(rs, w, pages[table + pos / PAGE_SIZE], kvh, pos % PAGE_SIZE);
    }
    // Scores of the round's K rows: a subgroup per (row, K row), each lane summing its dims (dim
    // lane + QR_W i, as the quantizer holds them), then the subgroup's sum; soft-cap, then each
    // row's causal and window mask. (Loops of one length in every lane: no shuffle under a
    // lane-dependent loop.)
    if (r0 < M) {
      for (uint p = sg; p < ROWS * C; p += nsg) {
        const uint j = p % ROWS, copy = p / ROWS, r = r0 + copy, gr = row0 + j;
        if (r >= M) continue;
        float acc = 0.0;
        [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
          const uint d = lane + QR_W * i;
          if (lane < QR_W && d < ks.stored_dim) acc += R_GET(j, d) * qr_value(copy, d);
        }
        acc = subgroupAdd(acc);
        if (pc.softcap > 0.0) acc = pc.softcap * tanh(acc / pc.softcap);
        const uint pos = old + r, hi = old + gr / GQA;
        const uint lo = (pc.window > 0u && hi + 1u > pc.window) ? hi + 1u - pc.window : 0u;
        if (lane == 0u) tail_p[j * TAIL_TOKENS + r] = gr < RM && pos >= lo && pos <= hi ? acc : -1.0 / 0.0;
      }
      barrier();
    }
    // After the last K row: probabilities, a subgroup per row (every live row holds its own
    // position, so its maximum is finite), and the output rows zeroed.
    if (r0 < M && r0 + C >= M) {
      for (uint j = sg; j < ROWS; j += nsg) {
        if (row0 + j >= RM) continue;
        float mx = -1.0 / 0.0;
        [[unroll]] for (uint t0 = 0; t0 < TAIL_TOKENS; t0 += QR_W) {
          const uint t = t0 + lane;
          if (lane < QR_W && t < M) mx = max(mx, tail_p[j * TAIL_TOKENS + t]);
        }
        mx = subgroupMax(mx);
        float l = 0.0;
        [[unroll]] for (uint t0 = 0; t0 < TAIL_TOKENS; t0 += QR_W) {
          const uint t = t0 + lane;
          if (lane < QR_W && t < M) {
            const float sc = tail_p[j * TAIL_TOKENS + t];
            const float p = sc == -1.0 / 0.0 ? 0.0 : exp(sc - mx);
            tail_p[j * TAIL_TOKENS + t] = p;
            l += p;
          }
        }
        l = subgroupAdd(l);
        if (lane == 0u) {
          tail_ml[2u * j] = mx;
          tail_ml[2u * j + 1u] = l;
        }
      }
      for (uint e = tid; e < ROWS * V_DIM; e += nthreads) R_SET(e / V_DIM, e % V_DIM, 0.0);
      barrier();
    }
    // o += p x v for the round's V rows.
    if (r0 + C > M) {
      for (uint e = tid; e < ROWS * V_DIM; e += nthreads) {
        const uint j = e / V_DIM, d = e % V_DIM;
        if (row0 + j >= RM) continue;
        float o = R_GET(j, d);
        for (uint copy = 0; copy < C; ++copy) {
          const uint r = r0 + copy;
          if (r >= M && r < 2u * M) o += tail_p[j * TAIL_TOKENS + r - M] * qr_value(copy, d);
        }
        R_SET(j, d, o);
      }
      barrier();
    }
  }
  // The tail's partials (slot n - 1 after the regular splits holding tokens), then the group's
  // merge where this is its last arrival.
  TL_STAMP(2u);
  const uint n = splits_with_tokens(old, pc.chunk) + 1u;
  for (uint e = tid; e < ROWS * PSTRIDE4; e += nthreads) {
    const uint j = e / PSTRIDE4, k4 = e % PSTRIDE4, gr = row0 + j, d = partial_dim4(k4);
    if (gr >= RM) continue;
    part4[partial_index4(b, kvh, gr, n - 1u, k4)] =
        k4 == 0u ? vec4(tail_ml[2u * j], tail_ml[2u * j + 1u], 0.0, 0.0)
                 : vec4(R_GET(j, d), R_GET(j, d + 1u), R_GET(j, d + 2u), R_GET(j, d + 3u));
  }
  const bool last = arrive_last(group_of(b, kvh, row_chunk), n);
  TL_STAMP(3u);
  if (last) {
    merge_splits(b, kvh, row0, n, tid, nthreads);
    TL_STAMP(4u);
    finish_rows(b, kvh, row0, tid, nthreads);
    TL_STAMP(5u);
  }
  TL_TAIL_END(last);
}

#endif
