// The fused append of the decode kernels (compiled with TKV_FUSED_APPEND: decode_append,
// decode_tc_append): one dispatch appends each sequence's M new tokens to the layer and decodes
// their M queries, what record_append followed by a decode call does in three dispatches.
//
// The call's length `len` counts the new tokens; they sit at [len - M, len). The tokens before
// `base` (len - M rounded down to a tile of 16) are the regular splits' (the kernels cover
// [0, base) instead of [0, len)); the tail [base, len), at most 15 old and 8 new tokens, belongs
// to one extra workgroup per (sequence, KV head), the grid's first column (the splits are
// x = 1 .. splits, so that the tails start first; the plan leaves them room in the first wave).
// It alone reads or writes the words of those tiles, so nothing in the dispatch reads what it
// writes: it quantizes and stores the new K and V rows (quantize_row.glsl, the append's code),
// then reads the tail back from the pool and, for every row chunk of the KV head, writes the
// tail's partials (m, l, o) as split slot n_reg (the regular splits holding tokens), counts itself
// in, and merges when it is the group's last (split_merge.glsl).
//
// Cost (H100, bench/results/2026-11-25-h100-session9): the tail's chain is ~20 us from the
// dispatch's start, about half quantizing turbo rows and half reading back and attending; calls
// whose splits take longer hide it (turbo from ~12K tokens, f16 and q8_0 from 4K), shorter ones
// wait for it (Decoder::record_append_decode then appends separately).
//
// Needs, before inclusion: codebooks.glsl, layout.glsl, numeric.glsl, rotation.glsl,
// split_merge.glsl, GL_KHR_shader_subgroup_arithmetic and _shuffle; the constants HEAD_DIM,
// KV_HEADS, GQA, M, RM, Q_HEADS, ROWS, PAGE_SIZE, K_TYPE, V_DIM, TAIL_DIM (the larger stored
// dim); QR_COPIES (1 or 2, default 2); TAIL_SUBGROUP_TASKS (true: the tail's rows are shared
// out to its subgroups, each synchronised by subgroup barriers only; false: the whole workgroup
// does one row at a time, for drivers that may make a subgroup barrier a workgroup one, where
// one subgroup's barrier in a branch would wait for the others: llvmpipe's NIR backend emits a
// workgroup barrier for any execution scope, and lavapipe once timed out here under load);
// RowShape tail_shape(bool is_v) (after
// quantize_row.glsl, which this includes); the rows R_GET / R_SET (ROWS x TAIL_DIM floats) and
// hadamard_rows on them; load_q; merge_splits, finish_rows; the push constants pc.k_new, pc.v_new
// (elements to the new rows), pc.scale, pc.softcap, pc.window, pc.chunk; the constants
// K_NEW_F16, V_NEW_F16 and the bindings' names Pages `pages`.
#ifndef TKV_APPEND_TAIL_GLSL
#define TKV_APPEND_TAIL_GLSL

// The pools, written here (binding 0: K, 1: V). `coherent`: the tail reads back what its own
// invocations wrote, after a barrier.
layout(std430, binding = 0) coherent buffer KPoolRW { uint k_rw[]; };
layout(std430, binding = 0) coherent buffer KPoolRW16 { uint16_t k_rw16[]; };
layout(std430, binding = 1) coherent buffer VPoolRW { uint v_rw[]; };
layout(std430, binding = 1) coherent buffer VPoolRW16 { uint16_t v_rw16[]; };
// The new rows: [batch][M][KV_HEADS][HEAD_DIM] each, f32 or f16.
layout(std430, binding = 8) readonly buffer NewK { uint new_k[]; };
layout(std430, binding = 9) readonly buffer NewV { uint new_v[]; };

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
#define QR_COPIES 2  // the K and V rows at once (the includer may keep one copy: one after the other)
#endif
#include "quantize_row.glsl"
RowShape tail_shape(bool is_v);  // the includer's

const uint TAIL_TOKENS = 24;  // at most 15 old and 8 new
const uint TAIL_BATCH = 8;    // tokens staged at a time
const uint TAIL_STRIDE = TAIL_DIM + 1;  // (rows of the stage one bank apart)
shared float tail_kv[TAIL_BATCH * TAIL_STRIDE];  // staged K or V values of a batch of tail tokens
shared float tail_p[ROWS * TAIL_TOKENS];         // per row and tail token: score, then probability
shared float tail_ml[ROWS * 2];                  // per row: m, l

float tail_new(bool is_v, uint index) {
  if (is_v ? V_NEW_F16 != 0u : K_NEW_F16 != 0u) {
    const uint w = is_v ? new_v[index >> 1] : new_k[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(is_v ? new_v[index] : new_k[index]);
}

uint tail_word(bool is_v, uint word) { return is_v ? v_rw[word] : k_rw[word]; }
float tail_half(bool is_v, uint index) { return half_to_float(uint(is_v ? v_rw16[index] : k_rw16[index])); }

// `n` bits from bit `bit` of a tile lane's word sequence (word i at lane_word + 32 i).
uint tail_bits(bool is_v, uint lane_word, uint bit, uint n) {
  const uint w = bit / 32u, b = bit % 32u;
  uint x = tail_word(is_v, lane_word + 32u * w) >> b;
  if (b + n > 32u) x |= tail_word(is_v, lane_word + 32u * (w + 1u)) << (32u - b);
  return x & ((1u << n) - 1u);
}

// Element e of token `slot` of `page`, head `head`, as the kernels compute with it: turbo in the
// rotated domain (norm x centroid), q8_0 d x q, f16 itself.
float tail_value(RowShape s, uint page, uint head, uint slot, uint e) {
  const uint region = qr_region(s, page, head);
  if (s.type >= TYPE_TURBO2) {
    const uint bits = qr_index_bits(s.type), mb = bits - 1u, fb = 2u * bits, t = slot % 16u;
    const uint tile = qr_tile(s, region, slot);
    const uvec3 ts = tile_slot(!s.is_v, t, e);
    const uint mag = tail_bits(s.is_v, tile / 4u + ts.x, fb * ts.y + mb * ts.z, mb);
    const uint neg = tail_bits(s.is_v, tile / 4u + ts.x, fb * ts.y + 2u * mb + ts.z, 1u);
    const float norm =
        tail_half(s.is_v, (tile + 16u * s.bits_row + 32u * (e / s.group_elems) + 4u * (t % 8u) + 2u * (t / 8u)) / 2u);
    return norm * qr_codebook(s.type, index_of(mag, neg, bits));
  }
  if (s.type == TYPE_F16) return tail_half(s.is_v, (region + slot * s.bits_row) / 2u + e);
  const uint byte_at = region + slot * s.bits_row + e;
  const int q = int(tail_word(s.is_v, byte_at / 4u) << (24u - 8u * (byte_at % 4u))) >> 24;
  return float(q) * tail_half(s.is_v, (region + s.page_size * s.bits_row + slot * 2u * s.groups) / 2u + e / 32u);
}

// New token i's row of one side, quantized and stored by the group `w`.
void tail_append_row(RowShape s, QrWork w, uint b, uint kvh, uint i, uint pos, uint table) {
  const uint src = (s.is_v ? pc.v_new : pc.k_new) + ((b * M + i) * KV_HEADS + kvh) * HEAD_DIM;
  for (uint e = w.tid; e < s.stored_dim; e += w.nthreads)
    qr_x[w.copy * 256u + e] = e < HEAD_DIM ? tail_new(s.is_v, src + e) : 0.0;
  qr_sync(w);
  qr_quantize(s, w);
  qr_store(s, w, pages[table + pos / PAGE_SIZE], kvh, pos % PAGE_SIZE);
}

// Tail tokens t0 .. t0 + TAIL_BATCH - 1 (those below n) of one side into tail_kv. An invocation
// takes an element of every token, so that its loads are in flight together.
void tail_stage(RowShape s, uint kvh, uint table, uint base, uint t0, uint n, uint tid, uint nthreads) {
  for (uint e = tid; e < s.stored_dim; e += nthreads) {
    float x[TAIL_BATCH];
    [[unroll]] for (uint u = 0; u < TAIL_BATCH; ++u) {
      const uint pos = base + t0 + u;
      x[u] = t0 + u < n ? tail_value(s, pages[table + pos / PAGE_SIZE], kvh, pos % PAGE_SIZE, e) : 0.0;
    }
    [[unroll]] for (uint u = 0; u < TAIL_BATCH; ++u) tail_kv[u * TAIL_STRIDE + e] = x[u];
  }
  barrier();
}

// Element d of query row gr, scaled, with the rotation's first signs (turbo K; groups of G).
float tail_q(uint b, uint kvh, uint gr, uint d, uint G) {
  float v = 0.0;
  if (gr < RM && d < HEAD_DIM)
    v = load_q(pc.q_offset + ((b * M + gr / GQA) * Q_HEADS + kvh * GQA + gr % GQA) * HEAD_DIM + d) * pc.scale;
  return K_TYPE >= TYPE_TURBO2 ? v * sign1(d % G) : v;
}

// Query row j of the chunk at row0 (scaled), rotated as the cache's K rows were, into R row j,
// by one subgroup (lane of n).
void tail_query_row(uint b, uint kvh, uint row0, uint j, uint lane, uint n) {
  const RowShape ks = tail_shape(false);
  const uint gr = row0 + j, G = ks.group_elems;
  for (uint d = lane; d < ks.stored_dim; d += n) R_SET(j, d, tail_q(b, kvh, gr, d, G));
  if (K_TYPE < TYPE_TURBO2) return;
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  for (uint h = 1; h < G; h <<= 1) {
    for (uint p = lane; p < ks.stored_dim / 2u; p += n) {
      const uint i = (p / (G / 2u)) * G + ((p % (G / 2u)) / h) * 2u * h + (p % (G / 2u)) % h;
      const float a = R_GET(j, i), c = R_GET(j, i + h);
      R_SET(j, i, a + c);
      R_SET(j, i + h, a - c);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  }
  for (uint d = lane; d < ks.stored_dim; d += n) R_SET(j, d, R_GET(j, d) * sign2(d % G) * inv_sqrt_group(G));
}

// The chunk's query rows as tail_query_row makes them, by the whole workgroup (ends with a barrier).
void tail_query_rows(uint b, uint kvh, uint row0, uint tid, uint nthreads) {
  const RowShape ks = tail_shape(false);
  const uint G = ks.group_elems;
  for (uint e = tid; e < ROWS * ks.stored_dim; e += nthreads) {
    const uint j = e / ks.stored_dim, d = e % ks.stored_dim;
    R_SET(j, d, tail_q(b, kvh, row0 + j, d, G));
  }
  barrier();
  if (K_TYPE < TYPE_TURBO2) return;
  hadamard_rows(ROWS, ks.stored_dim, G, tid, nthreads);
  for (uint e = tid; e < ROWS * ks.stored_dim; e += nthreads) {
    const uint j = e / ks.stored_dim, d = e % ks.stored_dim;
    R_SET(j, d, R_GET(j, d) * sign2(d % G) * inv_sqrt_group(G));
  }
  barrier();
}

// The workgroup x = 0 of row chunk 0, for sequence b (length len, page table at `table`) and
// KV head kvh. Its subgroups share out tasks, each done by one subgroup (subgroup barriers
// only): the new tokens' K and V rows (at once in two copies of the quantizer's arrays, or in
// turn in one) and the first chunk's query rows.
void append_tail(uint b, uint kvh, uint len, uint table, uint tid, uint nthreads) {
  const RowShape ks = tail_shape(false), vs = tail_shape(true);
  const uint old = len - M, base = old - old % 16u, n_tail = len - base;
  const uint sgs = min(gl_SubgroupSize, nthreads);  // (a workgroup smaller than a subgroup is one)
  const uint nsg = nthreads / sgs, sg = tid / sgs, lane = tid % sgs;
  if (TAIL_SUBGROUP_TASKS) {
    // Each round's tasks go to the subgroups: the K and V rows (with one copy of the quantizer's
    // arrays, K in a round and V in the next), and once the first chunk's query rows.
    const uint rounds = QR_COPIES >= 2 ? 1u : 2u, kv = QR_COPIES >= 2 ? 2u : 1u;
    for (uint i = 0; i < M; ++i)
      for (uint round = 0; round < rounds; ++round) {
        const uint rows = i == 0u && round == 0u ? ROWS : 0u;
        for (uint task = sg; task < kv + rows; task += nsg) {
          if (task >= kv) tail_query_row(b, kvh, 0u, task - kv, lane, sgs);
          else if (QR_COPIES >= 2 ? task == 1u : round == 1u)
            tail_append_row(vs, QrWork(QR_COPIES - 1u, lane, sgs, true), b, kvh, i, old + i, table);
          else
            tail_append_row(ks, QrWork(0u, lane, sgs, true), b, kvh, i, old + i, table);
        }
        barrier();  // (the arrays are reused by the next round)
      }
  } else {
    // The whole workgroup on each row in turn (workgroup barriers only).
    for (uint i = 0; i < M; ++i) {
      tail_append_row(ks, QrWork(0u, tid, nthreads, false), b, kvh, i, old + i, table);
      barrier();
      tail_append_row(vs, QrWork(0u, tid, nthreads, false), b, kvh, i, old + i, table);
      barrier();
    }
    tail_query_rows(b, kvh, 0u, tid, nthreads);
  }
  // The new rows' stores are visible to this workgroup's loads from here.
  memoryBarrierBuffer();
  barrier();

  const uint n = splits_with_tokens(base, pc.chunk) + 1u;  // the regular splits holding tokens, and this
  for (uint row0 = 0; row0 < RM; row0 += ROWS) {
    if (row0 > 0u) {
      if (TAIL_SUBGROUP_TASKS) {
        for (uint j = sg; j < ROWS; j += nsg) tail_query_row(b, kvh, row0, j, lane, sgs);
        barrier();
      } else {
        tail_query_rows(b, kvh, row0, tid, nthreads);
      }
    }
    // Scores: soft-cap, then each row's causal and window mask.
    for (uint t0 = 0; t0 < n_tail; t0 += TAIL_BATCH) {
      tail_stage(ks, kvh, table, base, t0, n_tail, tid, nthreads);
      // A quad of invocations per (row, token): each sums every fourth dim, then the quad's sum.
      for (uint i = tid; i < 4u * ROWS * TAIL_BATCH; i += nthreads) {
        const uint quad = i % 4u, j = (i / 4u) / TAIL_BATCH, u = (i / 4u) % TAIL_BATCH, t = t0 + u, gr = row0 + j;
        float a0 = 0.0, a1 = 0.0;
        for (uint d = quad; d < ks.stored_dim; d += 8u) {
          a0 += R_GET(j, d) * tail_kv[u * TAIL_STRIDE + d];
          a1 += R_GET(j, d + 4u) * tail_kv[u * TAIL_STRIDE + d + 4u];
        }
        float acc = a0 + a1;
        acc += subgroupShuffleXor(acc, 1u);
        acc += subgroupShuffleXor(acc, 2u);
        if (quad != 0u || t >= n_tail) continue;
        if (pc.softcap > 0.0) acc = pc.softcap * tanh(acc / pc.softcap);
        const uint pos = base + t, hi = len - M + gr / GQA;
        const uint lo = (pc.window > 0u && hi + 1u > pc.window) ? hi + 1u - pc.window : 0u;
        tail_p[j * TAIL_TOKENS + t] = gr < RM && pos >= lo && pos <= hi ? acc : -1.0 / 0.0;
      }
      barrier();
    }
    // Probabilities, a subgroup per row (every live row holds its own position, so its maximum
    // is finite).
    for (uint j = sg; j < ROWS; j += nsg) {
      if (row0 + j >= RM) continue;
      float mx = -1.0 / 0.0;
      for (uint t = lane; t < n_tail; t += sgs) mx = max(mx, tail_p[j * TAIL_TOKENS + t]);
      mx = subgroupMax(mx);
      float l = 0.0;
      for (uint t = lane; t < n_tail; t += sgs) {
        const float sc = tail_p[j * TAIL_TOKENS + t];
        const float p = sc == -1.0 / 0.0 ? 0.0 : exp(sc - mx);
        tail_p[j * TAIL_TOKENS + t] = p;
        l += p;
      }
      l = subgroupAdd(l);
      if (lane == 0u) {
        tail_ml[2u * j] = mx;
        tail_ml[2u * j + 1u] = l;
      }
    }
    for (uint e = tid; e < ROWS * V_DIM; e += nthreads) R_SET(e / V_DIM, e % V_DIM, 0.0);
    barrier();
    // o = P.V over the tail.
    for (uint t0 = 0; t0 < n_tail; t0 += TAIL_BATCH) {
      tail_stage(vs, kvh, table, base, t0, n_tail, tid, nthreads);
      for (uint e = tid; e < ROWS * V_DIM; e += nthreads) {
        const uint j = e / V_DIM, d = e % V_DIM;
        if (row0 + j >= RM) continue;
        float o = R_GET(j, d);
        for (uint u = 0; u < TAIL_BATCH && t0 + u < n_tail; ++u) o += tail_p[j * TAIL_TOKENS + t0 + u] * tail_kv[u * TAIL_STRIDE + d];
        R_SET(j, d, o);
      }
      barrier();
    }
    // The tail's partials, then the group's merge where this is its last arrival.
    for (uint e = tid; e < ROWS * (V_DIM + 2u); e += nthreads) {
      const uint j = e / (V_DIM + 2u), k = e % (V_DIM + 2u), gr = row0 + j;
      if (gr >= RM) continue;
      part[partial_index(b, kvh, gr, n - 1u, k)] = k < 2u ? tail_ml[2u * j + k] : R_GET(j, k - 2u);
    }
    if (arrive_last(b * gl_NumWorkGroups.y + (row0 / ROWS) * KV_HEADS + kvh, n)) {
      merge_splits(b, kvh, row0, n, tid, nthreads);
      finish_rows(b, kvh, row0, tid, nthreads);
    }
    barrier();
  }
}

#endif
