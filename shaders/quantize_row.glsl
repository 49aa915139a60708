// Quantizing one K or V row and storing it in its page (kvcache/layout.hpp), by a whole
// workgroup: the append (quantize.comp, a workgroup per row) and the decode kernels' fused append
// (append_tail.glsl) run this one code. Every step follows the CPU reference (kvcache/codec.cpp)
// in the same order and rounding, so the bytes match it (tolerance: compare_row in
// tests/cache_test_util.hpp). Turbo: norm, rotation, nearest centroid, norm correction, then the
// bits go into the token's tile; q8_0 and f16 rows too.
//
// Needs, before inclusion: codebooks.glsl, layout.glsl, numeric.glsl, GL_KHR_shader_subgroup_basic;
// the row in its copy of qr_x (declared here: the caller fills elements [0, stored_dim), zeros
// past head_dim, then syncs as qr_sync does); and the
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

// Who quantizes a row: a whole workgroup (barriers), or one subgroup of it (subgroup barriers),
// so that several rows go at once, each in its copy of the arrays below (QR_COPIES of them,
// defined by the includer, default 1).
struct QrWork {
  uint copy;      // which copy of the arrays
  uint tid;       // invocation index within the group that does the row
  uint nthreads;  // its size
  bool sub;       // the group is a subgroup
};
#ifndef QR_COPIES
#define QR_COPIES 1
#endif
shared float qr_x[QR_COPIES * 256];
shared uint qr_code[QR_COPIES * 256];   // per element: turbo index, q8_0 byte, f16 bits
shared float qr_gnorm[QR_COPIES * 8];   // turbo group norms / q8_0 inverse scales
shared uint qr_scale[QR_COPIES * 8];    // f16 bits stored per group

void qr_sync(QrWork w) {
  if (w.sub) {
    subgroupMemoryBarrierShared();
    subgroupBarrier();
  } else {
    barrier();
  }
}

uint qr_index_bits(uint type) { return type == TYPE_TURBO2 ? 2u : type == TYPE_TURBO3 ? 3u : 4u; }

uint qr_nearest(uint type, float y) {
  uint n = 0;
  if (type == TYPE_TURBO2) { for (uint k = 0; k < 3; ++k) n += y >= M2[k] ? 1u : 0u; }
  else if (type == TYPE_TURBO3) { for (uint k = 0; k < 7; ++k) n += y >= M3[k] ? 1u : 0u; }
  else { for (uint k = 0; k < 15; ++k) n += y >= M4[k] ? 1u : 0u; }
  return n;
}

float qr_codebook(uint type, uint i) {
  if (type == TYPE_TURBO2) return C2[i];
  if (type == TYPE_TURBO3) return C3[i];
  return C4[i];
}

void qr_turbo(RowShape s, QrWork w) {
  const uint G = s.group_elems, X = w.copy * 256u, N = w.copy * 8u;
  // 1. Group norms: squares summed in element order, unfused, as the reference does.
  // (16 loads ahead of the adds: the chain is then the adds alone.)
  if (w.tid < s.groups) {
    precise float sum = 0.0;
    for (uint j0 = 0; j0 < G; j0 += 16u) {
      float v[16];
      [[unroll]] for (uint k = 0; k < 16u; ++k) v[k] = qr_x[X + w.tid * G + j0 + k];
      [[unroll]] for (uint k = 0; k < 16u; ++k) {
        precise float sq = v[k] * v[k];
        sum += sq;
      }
    }
    qr_gnorm[N + w.tid] = sqrt(sum);
  }
  qr_sync(w);
  // 2. Normalise and apply s1, then the Walsh-Hadamard butterfly, then / sqrt(G) and s2.
  for (uint e = w.tid; e < s.stored_dim; e += w.nthreads) {
    const float g = qr_gnorm[N + e / G];
    const float xh = g > 1e-10 ? div_rn(qr_x[X + e], g) : 0.0;
    qr_x[X + e] = sign1(e % G) * xh;
  }
  qr_sync(w);
  for (uint h = 1; h < G; h <<= 1) {
    for (uint p = w.tid; p < s.stored_dim / 2; p += w.nthreads) {
      const uint base = (p / (G / 2)) * G;
      const uint q = p % (G / 2);
      const uint i = X + base + (q / h) * 2 * h + (q % h);
      const float a = qr_x[i], b = qr_x[i + h];
      qr_x[i] = a + b;
      qr_x[i + h] = a - b;
    }
    qr_sync(w);
  }
  const float sqrt_g = G == 128 ? uintBitsToFloat(0x413504f3u) : 8.0;
  for (uint e = w.tid; e < s.stored_dim; e += w.nthreads)
    qr_code[X + e] = qr_nearest(s.type, sign2(e % G) * div_rn(qr_x[X + e], sqrt_g));
  qr_sync(w);
  // 3. Norm correction from the chosen centroids.
  if (w.tid < s.groups) {
    precise float sum = 0.0;
    for (uint j0 = 0; j0 < G; j0 += 16u) {
      float c[16];
      [[unroll]] for (uint k = 0; k < 16u; ++k) c[k] = qr_codebook(s.type, qr_code[X + w.tid * G + j0 + k]);
      [[unroll]] for (uint k = 0; k < 16u; ++k) {
        precise float sq = c[k] * c[k];
        sum += sq;
      }
    }
    const float r = sqrt(sum);
    const float g = qr_gnorm[N + w.tid];
    qr_scale[N + w.tid] = half_bits_rte(r > 1e-10 ? div_rn(g, r) : g);
  }
}

void qr_q8_0(RowShape s, QrWork w) {
  const uint X = w.copy * 256u, N = w.copy * 8u;
  // d = amax / 127 in f32; q = roundf(x * (1/d)) with the f32 d; the stored d is f16(d).
  if (w.tid < s.groups) {
    float amax = 0.0;
    for (uint j = 0; j < 32; ++j) amax = max(amax, abs(qr_x[X + w.tid * 32 + j]));
    const float d = div_rn(amax, 127.0);
    qr_scale[N + w.tid] = half_bits_rte(d);
    qr_gnorm[N + w.tid] = d != 0.0 ? div_rn(1.0, d) : 0.0;
  }
  qr_sync(w);
  for (uint e = w.tid; e < s.stored_dim; e += w.nthreads) {
    precise float v = qr_x[X + e] * qr_gnorm[N + e / 32];
    qr_code[X + e] = uint(int(round_away(v))) & 0xffu;
  }
}

// The row in qr_x quantized into qr_code and qr_scale (ends with a sync).
void qr_quantize(RowShape s, QrWork w) {
  if (s.type == TYPE_F16) {
    for (uint e = w.tid; e < s.stored_dim; e += w.nthreads) qr_code[w.copy * 256u + e] = half_bits_rte(qr_x[w.copy * 256u + e]);
  } else if (s.type == TYPE_Q8_0) {
    qr_q8_0(s, w);
  } else {
    qr_turbo(s, w);
  }
  qr_sync(w);
}

// The 32-bit word `i` of an f16 or q8_0 row's bits, assembled from the per-element codes.
uint qr_pack_word(uint type, uint X, uint i) {
  uint word = 0;
  if (type == TYPE_F16) {
    word = qr_code[X + 2 * i] | (qr_code[X + 2 * i + 1] << 16);
  } else {
    for (uint k = 0; k < 4; ++k) word |= qr_code[X + 4 * i + k] << (8 * k);
  }
  return word;
}

// Byte offset of a head's region in its page, and of a turbo tile (16 tokens) in it.
uint qr_region(RowShape s, uint page, uint head) {
  const uint region_bytes = s.page_size * (s.bits_row + 2u * s.groups);
  return page * region_bytes * s.kv_heads + head * region_bytes;
}
uint qr_tile(RowShape s, uint region, uint slot) { return region + (slot / 16u) * 16u * (s.bits_row + 2u * s.groups); }

// The element of token t whose field (pair y, element z) sits in tile lane li's word sequence
// (li: K 0-3, V 0-7; tile_slot's inverse), or ~0u where that field is another token's.
uint qr_tile_elem(bool is_v, uint t, uint li, uint y, uint z) {
  if (!is_v) return (y / 2u) % 2u == t / 8u ? 16u * (y / 4u) + 8u * (y % 2u) + 2u * li + z : ~0u;
  return y % 2u == t / 8u && z == t % 2u ? 16u * (y / 4u) + 8u * ((y / 2u) % 2u) + li : ~0u;
}

// The token's bits and norms into its tile. Its words are shared with the tile's other tokens
// (possibly read or written by other workgroups of this dispatch): clear and set only its bits.
// An invocation per word assembles the token's fields in it from the codes (no shared atomics).
void qr_store_tile(RowShape s, QrWork w, uint region, uint slot) {
  const uint bits = qr_index_bits(s.type), mb = bits - 1u, fb = 2u * bits;
  const uint lane_words = s.stored_dim / 16u * bits / 4u, lanes = s.is_v ? 8u : 4u;
  const uint t = slot % 16u, X = w.copy * 256u;
  const uint tile = qr_tile(s, region, slot);
  for (uint i = w.tid; i < lanes * lane_words; i += w.nthreads) {
    const uint li = i / lane_words, k = i % lane_words;
    uint set = 0u, mask = 0u;
    // The token's pairs among those overlapping bits [32k, 32k + 32) of lane li's sequence, pairs
    // y0 .. y1 (a pair is fb bits, two magnitudes of mb bits, then two signs): K's pairs y with
    // (y / 2) % 2 == t / 8 (both elements), V's with y % 2 == t / 8 (element t % 2); at most 4 of
    // them (turbo2: 8 pairs in a word). (qr_tile_elem decides; this only skips the others.)
    const uint y0 = (32u * k) / fb, y1 = (32u * k + 31u) / fb, tb = t / 8u;
    const uint j0 = s.is_v ? (y0 + 1u - tb) / 2u
                           : 2u * (y0 / 4u) + (y0 % 4u <= 2u * tb ? 0u : y0 % 4u == 2u * tb + 1u ? 1u : 2u);
    [[unroll]] for (uint n = 0; n < 4u; ++n) {
      const uint j = j0 + n, y = s.is_v ? 2u * j + tb : 4u * (j / 2u) + 2u * tb + j % 2u;
      if (y > y1) break;
      [[unroll]] for (uint z = 0; z < 2u; ++z) {
        const uint d = qr_tile_elem(s.is_v, t, li, y, z);
        if (d >= s.stored_dim) continue;
        const uvec2 ms = mag_sign(qr_code[X + d], bits);
        const int at = int(fb * y + mb * z) - int(32u * k), sign_at = int(fb * y + 2u * mb + z) - int(32u * k);
        const uint m = (1u << mb) - 1u;
        if (at < 0) {  // (a magnitude that starts in the word before)
          set |= ms.x >> -at;
          mask |= m >> -at;
        } else if (at < 32) {  // (the bits past the word are the next word's)
          set |= ms.x << at;
          mask |= m << at;
        }
        if (sign_at >= 0 && sign_at < 32) {
          set |= ms.y << sign_at;
          mask |= 1u << sign_at;
        }
      }
    }
    if (mask != 0u) {
      const uint lane = s.is_v ? 4u * li + (t % 8u) / 2u : 4u * (t % 8u) + li;
      const uint at = tile / 4u + 32u * k + lane;
      qr_pool_and(s.is_v, at, ~mask);
      qr_pool_or(s.is_v, at, set);
    }
  }
  if (w.tid < s.groups)
    qr_pool_store16(s.is_v, (tile + 16u * s.bits_row + 32u * w.tid + 4u * (t % 8u) + 2u * (t / 8u)) / 2u,
                    qr_scale[w.copy * 8u + w.tid]);
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
    qr_pool_store16(s.is_v, scale_half + w.tid, qr_scale[w.copy * 8u + w.tid]);
  }
}

#endif
