// Quantizing one K or V row and storing it in its page (kvcache/layout.hpp), by one subgroup: the
// append (quantize.comp, a subgroup per row) and the decode kernels' fused append
// (append_tail.glsl, decode_tc.comp) run this one code. Every step follows the CPU reference
// (kvcache/codec.cpp) in its rounding but for the sums' order and where the turbo norm divides
// (after the rotation, not before): fp32 rounding, the tolerance of compare_row in
// tests/cache_test_util.hpp. Turbo: norm, rotation, nearest centroid, norm correction, then the
// bits go into the token's tile; q8_0 and f16 rows too.
//
// Needs, before inclusion: codebooks.glsl, layout.glsl, numeric.glsl, rotation.glsl,
// GL_KHR_shader_subgroup_basic and _shuffle; QR_MIN_SUBGROUP (the smallest subgroup size);
// the row in registers (qr_quantize_regs) or in its copy of qr_x (declared here: the caller fills
// elements [0, stored_dim), zeros past head_dim, then syncs, see qr_quantize); and the
// includer's pool writes of one side: qr_pool_and / qr_pool_or (word index, bits; atomics: tile
// words are shared by tokens), qr_pool_store (word index, value), qr_pool_store16 (16-bit index,
// value).
#ifndef TKV_QUANTIZE_ROW_GLSL
#define TKV_QUANTIZE_ROW_GLSL

// One side's row layout: the quantize shader's specialization constants, or the decode kernel's.
struct RowShape {
  uint type;
  uint stored_dim;   // elements per row as stored (<= 256)
  uint groups;       // scale groups per row (<= 8)
  uint group_elems;
  uint bits_row;     // bytes of a row's bits
  uint page_size;
  uint kv_heads;
  bool is_v;         // turbo tiles: V's pairs are two tokens' elements
};

// A row is quantized by one subgroup, into its copy of the arrays below (QR_COPIES of them,
// defined by the includer, default 1: several rows go at once); tid / nthreads (its lane, its
// size) share out the loops that store the row.
struct QrWork {
  uint copy;      // which copy of the arrays
  uint tid;       // invocation index within the subgroup
  uint nthreads;  // the subgroup's size
};
#ifndef QR_COPIES
#define QR_COPIES 1
#endif
// The arrays: here, unless the includer keeps them in shared memory of its own (it then defines
// the accessors QR_X_GET / QR_X_SET, QR_CODE_GET / QR_CODE_SET, QR_SCALE_GET / QR_SCALE_SET;
// decode_tc.comp's fused tail does, in the region its split workgroups use).
#ifndef QR_X_GET
shared float qr_x[QR_COPIES * 256];
shared uint qr_code[QR_COPIES * 256];   // per element: turbo index, q8_0 byte, f16 bits
shared uint qr_scale[QR_COPIES * 8];    // f16 bits stored per group
#define QR_X_GET(i) qr_x[i]
#define QR_X_SET(i, v) qr_x[i] = (v)
#define QR_CODE_GET(i) qr_code[i]
#define QR_CODE_SET(i, v) qr_code[i] = (v)
#define QR_SCALE_GET(i) qr_scale[i]
#define QR_SCALE_SET(i, v) qr_scale[i] = (v)
#endif

uint qr_index_bits(uint type) { return type == TYPE_TURBO2 ? 2u : type == TYPE_TURBO3 ? 3u : 4u; }

// The nearest centroid's index and value (a value on a midpoint goes up), by compares and
// selects: no computed index into the constant arrays (see codebooks.glsl's signs).
uint qr_nearest_centroid(uint type, float y, out float c) {
  uint n = 0;
  if (type == TYPE_TURBO2) {
    c = C2[0];
    [[unroll]] for (uint k = 0; k < 3; ++k) if (y >= M2[k]) { n = k + 1u; c = C2[k + 1u]; }
  } else if (type == TYPE_TURBO3) {
    c = C3[0];
    [[unroll]] for (uint k = 0; k < 7; ++k) if (y >= M3[k]) { n = k + 1u; c = C3[k + 1u]; }
  } else {
    c = C4[0];
    [[unroll]] for (uint k = 0; k < 15; ++k) if (y >= M4[k]) { n = k + 1u; c = C4[k + 1u]; }
  }
  return n;
}

// A turbo row is quantized by one subgroup in registers, with no shared memory and no barrier:
// lane l < W holds elements l + W i (i < stored_dim / W), the layout of TKV_HADAMARD_REGISTERS,
// W = QR_MIN_SUBGROUP (the includer's: the device's smallest subgroup size, a specialization
// constant, so that every loop below has a known length; a larger subgroup's other lanes compute
// along and write nothing). QR_REGS registers hold any stored row (<= 256 elements).
#ifndef QR_MIN_SUBGROUP
#define QR_MIN_SUBGROUP 4u
#endif
const uint QR_W = QR_MIN_SUBGROUP;
const uint QR_REGS = 256u / QR_W;

// Each register's value replaced by the sum (or with take_max, the maximum) over its group
// (groups of G elements), in a fixed order: a lane's registers of the group in order (RB = G / S
// of them), then the lanes by xor butterflies 1, 2, 4 ... (< min(S, G)), which leave the same bits
// in every lane (a + b = b + a). The reference sums in element order: the two differ by fp32
// rounding only, the tolerance of tests/cache_test_util.hpp's compare_row.
float qr_combine(float a, float b, bool take_max) {
  precise float t = a + b;
  return take_max ? max(a, b) : t;
}
void qr_group_reduce(inout float v[QR_REGS], uint n, uint G, uint S, bool take_max) {
  const uint RB = max(1u, G / S);
  [[unroll]] for (uint i = 1; i < QR_REGS; ++i)  // running values within each block of RB
    if (i < n && i % RB != 0u) v[i] = qr_combine(v[i - 1u], v[i], take_max);
  [[unroll]] for (uint h = 1u; h < 64u; h <<= 1)  // across the lanes, on each block's last register
    if (h < S && h < G)
      [[unroll]] for (uint i = 0; i < QR_REGS; ++i)
        if (i < n && (i % RB == RB - 1u || i + 1u == n)) v[i] = qr_combine(v[i], subgroupShuffleXor(v[i], h), take_max);
  [[unroll]] for (uint k = 1; k < QR_REGS; ++k) {  // the block's value back to its registers
    const uint i = QR_REGS - 1u - k;
    if (i + 1u < n && i % RB != RB - 1u) v[i] = v[i + 1u];
  }
}

// A row held in the calling subgroup's registers (x[i]: element lane + W i, zeros past the
// row) quantized there (the caller's branches to here uniform per subgroup: see
// append_tail.glsl): code[i] the element's code (turbo index, q8_0 byte, f16 bits), c[i] the value
// the kernels compute with once the row is stored (turbo norm x centroid in the rotated domain,
// q8_0 d x q, f16 itself), v[i] the f16 bits of its group's scale or norm (as float bits; f16: none).
// In the reference's steps and rounding (kvcache/codec.cpp), but for the turbo norm's division
// after the rotation (below): turbo: norm, rotation, nearest centroid, norm correction; q8_0:
// d = amax / 127 in f32, q = roundf(x * (1/d)), d stored as f16.
// A group's scalar steps (its norm's square root and reciprocal, its f16 bits) are computed once,
// in the first of its RB registers of the lane, and copied to the others: the compiler does not
// merge them by itself (precise arithmetic, branches), and one subgroup's chain is the fused
// split's path (bench/results/2026-11-28-session35).
void qr_quantize_regs(RowShape s, inout float x[QR_REGS], out uint code[QR_REGS], out float c[QR_REGS],
                      out float v[QR_REGS]) {
  const uint G = s.type == TYPE_Q8_0 ? 32u : s.group_elems;
  const uint S = QR_W, lane = gl_SubgroupInvocationID, n = (s.stored_dim + S - 1u) / S, RB = max(1u, G / S);
  if (s.type == TYPE_F16) {
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      code[i] = half_bits_rte(x[i]);
      c[i] = half_to_float(code[i]);
      v[i] = 0.0;
    }
  } else if (s.type == TYPE_Q8_0) {
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) v[i] = abs(x[i]);
    qr_group_reduce(v, n, G, S, true);
    float id[QR_REGS];
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      if (i % RB == 0u) {
        const float d = div_rn(v[i], 127.0);
        id[i] = d != 0.0 ? div_rn(1.0, d) : 0.0;
        v[i] = uintBitsToFloat(half_bits_rte(d));
      } else {
        id[i] = id[i - 1u];
        v[i] = v[i - 1u];
      }
    }
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      precise float y = x[i] * id[i];
      const int q = int(round_away(y));
      code[i] = uint(q) & 0xffu;
      c[i] = float(q) * half_to_float(floatBitsToUint(v[i]));
    }
  } else {
    // 1. Group norms, and meanwhile s1 and the Walsh-Hadamard butterflies (two independent
    // chains of shuffles, where the reference normalises first: the butterflies are linear, so
    // the rotated value divided by the norm differs from the reference's by fp32 rounding, the
    // tolerance of compare_row, as the sums' order does); then / the norm, / sqrt(G), s2, and
    // the nearest centroid.
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      precise float sq = x[i] * x[i];
      v[i] = sq;
      x[i] *= sign1((lane + S * i) % G);
    }
    qr_group_reduce(v, n, G, S, false);
    TKV_HADAMARD_REGISTERS(x, QR_REGS, n, G, lane, S)
    float ig[QR_REGS];  // 1 / the group's norm (div_rn's reciprocal)
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      if (i % RB == 0u) {
        v[i] = sqrt(v[i]);
        ig[i] = 1.0 / v[i];
      } else {
        v[i] = v[i - 1u];
        ig[i] = ig[i - 1u];
      }
      x[i] = v[i] > 1e-10 ? div_rn_r(x[i], v[i], ig[i]) : 0.0;
    }
    const float sqrt_g = G == 128 ? uintBitsToFloat(0x413504f3u) : 8.0;
    float sq[QR_REGS];
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      code[i] = qr_nearest_centroid(s.type, sign2((lane + S * i) % G) * div_rn(x[i], sqrt_g), c[i]);
      precise float t = c[i] * c[i];
      sq[i] = t;
    }
    // 2. Norm correction from the chosen centroids.
    qr_group_reduce(sq, n, G, S, false);
    [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
      if (i % RB == 0u) {
        const float r = sqrt(sq[i]), g = v[i];
        v[i] = uintBitsToFloat(half_bits_rte(r > 1e-10 ? div_rn(g, r) : g));
      } else {
        v[i] = v[i - 1u];
      }
      c[i] *= half_to_float(floatBitsToUint(v[i]));
    }
  }
}

// The row (in the calling subgroup's copy of qr_x: elements l + W i, which the caller writes from
// the same lanes, so no sync) quantized by qr_quantize_regs into the copy's arrays: the codes into
// qr_code, one lane per group the group's f16 scale / norm bits into qr_scale, and qr_x replaced by
// the values the kernels compute with. Other lanes read the results after a barrier (qr_store
// does).
void qr_quantize_store(RowShape s, QrWork w, float c[QR_REGS], uint code[QR_REGS], float v[QR_REGS]) {
  const uint G = s.type == TYPE_Q8_0 ? 32u : s.group_elems, X = w.copy * 256u, N = w.copy * 8u;
  const uint S = QR_W, lane = gl_SubgroupInvocationID, n = (s.stored_dim + S - 1u) / S;
  [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
    const uint e = lane + S * i;
    if (lane < S && i < n && e < s.stored_dim) {
      QR_CODE_SET(X + e, code[i]);
      QR_X_SET(X + e, c[i]);
      if (s.type != TYPE_F16 && e % G == 0u) QR_SCALE_SET(N + e / G, floatBitsToUint(v[i]));
    }
  }
}
void qr_quantize(RowShape s, QrWork w) {
  const uint S = QR_W, lane = gl_SubgroupInvocationID, n = (s.stored_dim + S - 1u) / S, X = w.copy * 256u;
  float x[QR_REGS], c[QR_REGS], v[QR_REGS];
  uint code[QR_REGS];
  [[unroll]] for (uint i = 0; i < QR_REGS; ++i) {
    const uint e = lane + S * i;
    x[i] = i < n && e < s.stored_dim ? QR_X_GET(X + e) : 0.0;
  }
  qr_quantize_regs(s, x, code, c, v);
  qr_quantize_store(s, w, c, code, v);
}

// The 32-bit word `i` of an f16 or q8_0 row's bits, assembled from the per-element codes.
uint qr_pack_word(uint type, uint X, uint i) {
  uint word = 0;
  if (type == TYPE_F16) {
    word = QR_CODE_GET(X + 2 * i) | (QR_CODE_GET(X + 2 * i + 1) << 16);
  } else {
    for (uint k = 0; k < 4; ++k) word |= QR_CODE_GET(X + 4 * i + k) << (8 * k);
  }
  return word;
}

// Byte offset of a head's region in its page, and of a turbo tile (16 tokens) in it.
uint qr_region(RowShape s, uint page, uint head) {
  const uint region_bytes = s.page_size * (s.bits_row + 2u * s.groups);
  return page * region_bytes * s.kv_heads + head * region_bytes;
}
uint qr_tile(RowShape s, uint region, uint slot) { return region + (slot / 16u) * 16u * (s.bits_row + 2u * s.groups); }

// Bits `set` under `mask` of one field at bit `at` of tile lane `lane`'s words (word k of the
// lane at base + 32 k): its ones set, then its zeros cleared (a field may straddle two words).
// Atomics: the words are shared with the tile's other tokens, whose bits they leave as they are.
// (In that order, writers of the same bits never undo each other: once one writer's two atomics
// are done the field holds `set`, whatever the others' are doing.)
void qr_store_field(bool is_v, uint base, uint lane, uint at, uint set, uint mask) {
  const uint word = base + 32u * (at / 32u) + lane, sh = at % 32u;
  qr_pool_or(is_v, word, set << sh);
  qr_pool_and(is_v, word, ~((mask & ~set) << sh));
  if (sh != 0u && (mask >> (32u - sh)) != 0u) {  // (the bits past the word: the next one's)
    qr_pool_or(is_v, word + 32u, set >> (32u - sh));
    qr_pool_and(is_v, word + 32u, ~((mask & ~set) >> (32u - sh)));
  }
}

// The token's bits and norms into its tile (tile_slot's layout; a pair's field is F bits: two
// magnitudes of mb bits, then two negative bits), an invocation per field the token has a part in:
// K, tile lane 4 (t % 8) + li (li < 4), fields 4 blk + 2 (t / 8) + h, both elements (dims
// 16 blk + 8 h + 2 li, + 1); V, tile lane 4 li + (t % 8) / 2 (li < 8), fields 4 blk + 2 x + t / 8,
// element t % 2 (dim 16 blk + 8 x + li). Its words are shared with the tile's other tokens
// (possibly read or written by other workgroups of this dispatch): only its bits change. (Before,
// an invocation per word found the token's fields in it: ~660 instructions a word, ~2 us of the
// fused tail's chain on an H100, bench/results/2026-11-27-session26.)
void qr_store_tile(RowShape s, QrWork w, uint region, uint slot) {
  const uint bits = qr_index_bits(s.type), mb = bits - 1u, F = 2u * bits;
  const uint t = slot % 16u, tb = t / 8u, X = w.copy * 256u;
  const uint tile = qr_tile(s, region, slot), base = tile / 4u;
  const uint lanes = s.is_v ? 8u : 4u, fields = lanes * 2u * (s.stored_dim / 16u);
  for (uint i = w.tid; i < fields; i += w.nthreads) {
    const uint li = i % lanes, blk = i / lanes / 2u, h = (i / lanes) % 2u;
    if (s.is_v) {
      const uint z = t % 2u;
      const uvec2 a = mag_sign(QR_CODE_GET(X + 16u * blk + 8u * h + li), bits);
      qr_store_field(true, base, 4u * li + (t % 8u) / 2u, F * (4u * blk + 2u * h + tb),
                     (a.x << (mb * z)) | (a.y << (2u * mb + z)), (((1u << mb) - 1u) << (mb * z)) | (1u << (2u * mb + z)));
    } else {
      const uint d = 16u * blk + 8u * h + 2u * li;
      const uvec2 a = mag_sign(QR_CODE_GET(X + d), bits), b = mag_sign(QR_CODE_GET(X + d + 1u), bits);
      qr_store_field(false, base, 4u * (t % 8u) + li, F * (4u * blk + 2u * tb + h),
                     a.x | (b.x << mb) | (a.y << (2u * mb)) | (b.y << (2u * mb + 1u)), (1u << F) - 1u);
    }
  }
  if (w.tid < s.groups)
    qr_pool_store16(s.is_v, (tile + 16u * s.bits_row + 32u * w.tid + 4u * (t % 8u) + 2u * (t / 8u)) / 2u,
                    QR_SCALE_GET(w.copy * 8u + w.tid));
}

// Stores the quantized row (qr_code, qr_scale) as token `slot` of `page`, head `head`.
void qr_store(RowShape s, QrWork w, uint page, uint head, uint slot) {
  const uint region = qr_region(s, page, head);
  if (s.type >= TYPE_TURBO2) {
    qr_store_tile(s, w, region, slot);
    return;
  }
  const uint bits_word = (region + slot * s.bits_row) / 4u;
  for (uint i = w.tid; i < s.bits_row / 4u; i += w.nthreads)
    qr_pool_store(s.is_v, bits_word + i, qr_pack_word(s.type, w.copy * 256u, i));
  if (w.tid < s.groups) {
    const uint scale_half = (region + s.page_size * s.bits_row + slot * 2u * s.groups) / 2u;
    qr_pool_store16(s.is_v, scale_half + w.tid, QR_SCALE_GET(w.copy * 8u + w.tid));
  }
}

#endif
