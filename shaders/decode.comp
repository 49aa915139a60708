#version 450
// Split-K flash decoding over the paged, compressed cache (attention/decoder.hpp).
//
// A workgroup = one (split of a sequence, KV head, chunk of query rows, sequence). Its query rows
// are the GQA heads of the KV head times the M new tokens, so each K/V row is read once for all
// of them. Inside, a team of TEAM lanes works on a run of UNROLL consecutive tokens per step, each
// lane owning DPL consecutive dims: the query rows' dims live in the lane's registers, and the
// lane loads only its own bits of each K and V row straight from the pool into registers (no
// shared staging, no workgroup barrier in the loop: every subgroup streams on its own).
//
// Per step, the lane's partial scores (UNROLL tokens x rows) are summed across the team by a
// reduce-scatter (each shuffle level halves the values a lane holds), so each lane ends up owning
// one or a few whole scores: the softcap, mask and exp are computed once per score, not once per
// lane. The probabilities go through a small per-team slice of shared memory (subgroup barriers
// only) to every lane of the team for the P.V products. The running maximum is raised only when a
// score exceeds it by more than RAISE (the accumulators then hold weights up to e^RAISE, exact in
// f32), so the rescale of the accumulators is rare.
//
// At the end the teams merge (shuffles, then shared memory). With one split the workgroup finishes
// the output (normalise, inverse rotation, store); otherwise it writes partials (m, l, o), and the
// last split of its group to finish merges them and finishes the output (split_merge.glsl).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_control_flow_attributes : require
#ifdef TKV_TIMELINE
#extension GL_EXT_shader_realtime_clock : require
#endif

#include "codebooks.glsl"
#include "layout.glsl"
#include "dequant.glsl"
#include "rotation.glsl"

// Specialization constants: attention/decoder.cpp lists the same ids.
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
layout(constant_id = 17) const uint DPL = 8;         // dims per lane
layout(constant_id = 18) const uint TEAM = 16;       // lanes per token (power of two, <= subgroup)
layout(constant_id = 19) const uint UNROLL = 4;      // consecutive tokens per team per step
layout(constant_id = 20) const uint DIRECT = 1;      // one split: write the final output
layout(constant_id = 21) const uint Q_F16 = 0;
layout(constant_id = 22) const uint OUT_F16 = 0;
layout(constant_id = 23) const uint VARIANT = 0;
layout(constant_id = 24) const uint MODE = 0;
layout(constant_id = 25) const uint MIN_SUBGROUP = 32;
layout(constant_id = 26) const uint K_NEW_F16 = 0;  // fused append: the new rows' formats
layout(constant_id = 27) const uint V_NEW_F16 = 0;
// A batch of at most this many sequences passes their (length, page table offset) in the push
// constants (the device's push constant bytes past the header), with no buffer update and barrier
// before the dispatch (attention/decoder.cpp).
layout(constant_id = 28) const uint INLINE_SEQS = 10;

layout(local_size_x_id = 16) in;

const uint RM = GQA * M;
const uint Q_HEADS = KV_HEADS * GQA;
const uint K_REGION = PAGE_SIZE * (K_BITS_ROW + 2 * K_GROUPS);
const uint V_REGION = PAGE_SIZE * (V_BITS_ROW + 2 * V_GROUPS);
const uint QDIM = K_DIM > V_DIM ? K_DIM : V_DIM;
const uint NTEAMS = WG / TEAM;
const uint STEP = NTEAMS * UNROLL;  // tokens per step of the workgroup (divides the page size)
const uint DPL4 = DPL / 4;          // vec4s per lane row: arrays of vec4 stay in registers
const uint ROWS4 = (ROWS + 3) / 4;
#define MR(j) m_run[(j) / 4][(j) % 4]
#define LR(j) l_run[(j) / 4][(j) % 4]
// Scores per team and step: UNROLL tokens x R2 rows (rows padded to a power of two), at least 4.
const uint R2 = ROWS <= 1 ? 1 : ROWS <= 2 ? 2 : ROWS <= 4 ? 4 : ROWS <= 8 ? 8 : ROWS <= 16 ? 16 : 32;
const uint NV = UNROLL * R2 < 4 ? 4 : UNROLL * R2;  // <= 32: the plan lowers UNROLL
const uint OWN = NV > TEAM ? NV / TEAM : 1;  // scores each lane owns after the reduce-scatter
const float RAISE = 8.0;
const uint MAX_SUBGROUPS = WG / MIN_SUBGROUP;
const float NEG_INF = -1.0 / 0.0;

const bool INDEXED_MODE = MODE != MODE_ZERO && MODE != MODE_NORM;  // modes whose loads return indices
const uint NC = K_TYPE == TYPE_TURBO2 ? 4 : K_TYPE == TYPE_TURBO3 ? 8 : 16;
const uint V_NC = V_TYPE == TYPE_TURBO2 ? 4 : V_TYPE == TYPE_TURBO3 ? 8 : 16;

// Rows (f16, q8_0): words of a lane's bits per row (f16 2 dims, q8_0 4 dims per word; at least
// one: lanes then share a word and shift their part down).
const uint K_LBITS = K_TYPE == TYPE_F16 ? 16 : 8;
const uint V_LBITS = V_TYPE == TYPE_F16 ? 16 : 8;
const uint K_RNW = DPL * K_LBITS < 32 ? 1 : DPL * K_LBITS / 32;
const uint V_RNW = DPL * V_LBITS < 32 ? 1 : DPL * V_LBITS / 32;
// Turbo tiles (kvcache/layout.hpp): a K lane owns, for c = lane % 4, the dims 16 blk + 8 h + 2c
// + e of its DPL / 4 blocks; a V lane owns, for g = lane % 8, the dims 16 blk + 8 h + g of its
// DPL / 2 blocks. A token's bits of them sit in one tile lane's words (pair fields of both
// halves of the tile's tokens, interleaved); norms per group.
const bool K_TILED = K_TYPE >= TYPE_TURBO2, V_TILED = V_TYPE >= TYPE_TURBO2;
const uint K_BITS = K_TYPE == TYPE_TURBO2 ? 2 : K_TYPE == TYPE_TURBO3 ? 3 : 4;
const uint V_BITS = V_TYPE == TYPE_TURBO2 ? 2 : V_TYPE == TYPE_TURBO3 ? 3 : 4;
const uint K_MB = K_BITS - 1, V_MB = V_BITS - 1;  // magnitude bits
const uint K_BPL = DPL / 4, V_BPL = DPL / 2;      // 16-dim blocks per lane
const uint K_SPAN = 16 * K_BPL, V_SPAN = 16 * V_BPL;  // dims the lane's blocks cover
// A token's fields on a lane: 4 x BPL of F = 2 x index bits, from bit (4 F blk0) % 32 of the first
// word loaded; turbo3's (F = 6) need a word more where that offset leaves them unaligned.
const uint K_F = 2 * K_BITS, V_F = 2 * V_BITS;
const uint K_SPANB = 4 * K_F * K_BPL, V_SPANB = 4 * V_F * V_BPL;
const uint K_TNW = K_SPANB % 32 == 0 ? K_SPANB / 32 : 32 % K_SPANB == 0 ? 1 : K_SPANB / 32 + 2;
const uint V_TNW = V_SPANB % 32 == 0 ? V_SPANB / 32 : 32 % V_SPANB == 0 ? 1 : V_SPANB / 32 + 2;
// Per token and lane: words and scales (a lane whose blocks span several groups holds one scale
// per group and scales its values itself).
const uint K_NW = K_TILED ? K_TNW : K_RNW, V_NW = V_TILED ? V_TNW : V_RNW;
const uint K_NSC = K_TILED && K_SPAN > K_GROUP ? K_SPAN / K_GROUP : 1;
const uint V_NSC = V_TILED && V_SPAN > V_GROUP ? V_SPAN / V_GROUP : 1;
// (qlut and reglut index a table with the lane's indices and scale afterwards: where the lane's
// dims span several scale groups (head dims 80, 96, 192 on narrow teams) they dequantize as lut8.)
const bool USE_QLUT = VARIANT == VARIANT_QLUT && K_TYPE >= TYPE_TURBO2 && INDEXED_MODE && K_NSC == 1;
const bool K_REGLUT = VARIANT == VARIANT_REGLUT && K_TYPE >= TYPE_TURBO2 && INDEXED_MODE && K_NSC == 1;
const bool V_REGLUT = VARIANT == VARIANT_REGLUT && V_TYPE >= TYPE_TURBO2 && INDEXED_MODE && V_NSC == 1;
const bool INDEX_VARIANT = VARIANT == VARIANT_QLUT || VARIANT == VARIANT_REGLUT;
const uint K_VARIANT = INDEX_VARIANT && K_NSC > 1 ? VARIANT_LUT8 : VARIANT;
const uint V_VARIANT_R = VARIANT == VARIANT_REGLUT && V_NSC > 1 ? VARIANT_LUT8 : VARIANT;
const uint V_VARIANT = VARIANT == VARIANT_QLUT ? VARIANT_LUT8 : V_VARIANT_R;  // (qlut is a K variant)
const uint TSIZE = USE_QLUT ? ROWS * K_DIM * NC : 1;
const bool K_HAS_SCALE = K_TYPE != TYPE_F16, V_HAS_SCALE = V_TYPE != TYPE_F16;

layout(std430, binding = 0) readonly buffer KPool { uvec4 k4[]; };
layout(std430, binding = 0) readonly buffer KPool2 { uvec2 k2[]; };
layout(std430, binding = 0) readonly buffer KPool1 { uint k1[]; };
layout(std430, binding = 1) readonly buffer VPool { uvec4 v4[]; };
layout(std430, binding = 1) readonly buffer VPool2 { uvec2 v2[]; };
layout(std430, binding = 1) readonly buffer VPool1 { uint v1[]; };
layout(std430, binding = 2) readonly buffer Pages { uint pages[]; };
layout(std430, binding = 3) readonly buffer Seqs { uvec4 seqs[]; };  // (length, page table offset, -, -)
layout(std430, binding = 4) readonly buffer Q { uint qw[]; };
layout(std430, binding = 5) writeonly buffer Out { float out32[]; };
layout(std430, binding = 5) writeonly buffer Out16 { uint16_t out16[]; };

layout(push_constant) uniform Push {
  float scale;      // softmax scale
  float softcap;    // 0: off
  uint window;      // 0: off
  uint chunk;       // tokens per split
  uint splits;      // splits per sequence (the grid's x)
  uint q_offset;    // elements
  uint out_offset;  // elements
  uint zero;        // always 0: keeps profile mode 4's loads alive
  uint inline_seqs;  // sequences whose (length, page table offset) are seq_inline's (0: seqs[]'s)
  uint unused;
  uint k_new;       // fused append: elements to the new K rows (append_tail.glsl)
  uint v_new;       // and to the new V rows
  uvec2 seq_inline[INLINE_SEQS];
} pc;

shared float qsh[ROWS * QDIM];          // query rows [j][d]; after the loop, the merged output rows
shared float msh[MAX_SUBGROUPS * ROWS * 2];
shared float tsh[TSIZE];                // qlut: T[j][d][c] = q[j][d] * C[c]
// smem: K's pairs (two dims of a token, kvcache/layout.hpp) through a table of value pairs indexed
// by both elements' magnitude and sign bits (turbo2 4 bits, turbo3 6), one copy. Interleaved
// copies against bank conflicts did not pay (H100, turbo3 128K: 1 copy 214 us, 4 copies 219, 16
// copies 331, probably one workgroup per SM fewer with 16 KB of tables). turbo4's 256-entry pair
// table was slower than one lookup per element (H200: 287 against 214 us at 128K), so turbo4
// reads its codebook per element, and so does V, whose pairs are two tokens' elements.
// (Conditions in function bodies name these constants: glslang turned `VAR == SMEM && (TYPE == a
// || TYPE == b)` there into a specialization-constant operation on a phi, which spirv-opt rejects.)
const uint K_PAIRS = VARIANT == VARIANT_SMEM ? (K_TYPE == TYPE_TURBO3 ? 64 : K_TYPE == TYPE_TURBO2 ? 16 : 1) : 1;
const bool K_PAIRED = K_PAIRS > 1;
shared vec2 kpair[K_PAIRS];
shared float kcb[16];  // smem: the codebooks
shared float vcb[16];
// The centroids of pair-table entry e of a turbo type.
vec2 pair_entry(uint type, uint e) {
  const uvec2 i = pair_indices(type, e);
  return vec2(turbo_centroid(type, VARIANT_LUT8, i.x), turbo_centroid(type, VARIANT_LUT8, i.y));
}
shared vec4 sc4[NTEAMS * NV / 4];       // per team: the step's scores, then its probabilities
// The split's page numbers, read once. The plan keeps a split within this many pages.
const uint MAX_SPLIT_PAGES = 512;
shared uint split_pages[MAX_SPLIT_PAGES];

// Loads `nw` words at byte offset `off` (a multiple of min(nw, 4) words) as wide loads.
#define TKV_LOAD_WORDS(P4, P2, P1, NW, off, dst)                                          \
  if (NW >= 4) {                                                                          \
    [[unroll]] for (uint c = 0; c < NW / 4; ++c) {                                        \
      const uvec4 x = P4[((off) >> 4) + c];                                               \
      dst[4 * c] = x.x; dst[4 * c + 1] = x.y; dst[4 * c + 2] = x.z; dst[4 * c + 3] = x.w; \
    }                                                                                     \
  } else if (NW == 2) {                                                                   \
    const uvec2 x = P2[(off) >> 3];                                                       \
    dst[0] = x.x; dst[min(1u, NW - 1u)] = x.y;                                            \
  } else {                                                                                \
    dst[0] = P1[(off) >> 2];                                                              \
  }

// Rows: fetches the lane's part of token `slot` of `page`: only what the profile mode reads.
#define TKV_DEFINE_ROW_FETCH(NAME, P4, P2, P1, TYPE, GROUP, GROUPS, BITS_ROW, REGION, NW, NSC, LBITS, DIM)       \
  void NAME(uint page, uint kvh, uint slot, uint lane, out uint w[NW], out float scale[NSC]) {              \
    [[unroll]] for (uint i = 0; i < NW; ++i) w[i] = 0u;                                                      \
    [[unroll]] for (uint i = 0; i < NSC; ++i) scale[i] = 1.0;                                                \
    const uint d0 = lane * DPL;                                                                              \
    if (MODE == MODE_ZERO || d0 >= DIM) return;                                                              \
    const uint region = page * (REGION * KV_HEADS) + kvh * REGION;                                           \
    const uint row = region + slot * BITS_ROW;                                                               \
    if (TYPE != TYPE_F16) {                                                                                  \
      const uint off = region + PAGE_SIZE * BITS_ROW + slot * 2u * GROUPS + 2u * (d0 / GROUP);               \
      scale[0] = half_at(P1[off >> 2], off);                                                                 \
      if (MODE == MODE_NORM) return;                                                                         \
    }                                                                                                        \
    if (MODE == MODE_NORM) { /* f16 has no scale: touch one word of the lane's chunk */                      \
      w[0] = P1[(row + 2u * d0) >> 2];                                                                       \
      return;                                                                                                \
    }                                                                                                        \
    const uint off = TYPE == TYPE_F16 ? row + 2u * d0 : row + d0;                                            \
    TKV_LOAD_WORDS(P4, P2, P1, NW, off, w)                                                                   \
    if (DPL * LBITS < 32) w[0] >>= ((d0 * LBITS) & 31u);                                                     \
  }

// Tiles: the words of the tile lane that holds the lane's elements of token `slot`, and its scales.
#define TKV_DEFINE_TILE_FETCH(NAME, P1, IS_K, DIM, GROUP, GROUPS, BITS_ROW, REGION, NW, NSC, F, BPL)                \
  void NAME(uint page, uint kvh, uint slot, uint lane, out uint w[NW], out float scale[NSC]) {              \
    [[unroll]] for (uint i = 0; i < NW; ++i) w[i] = 0u;                                                      \
    [[unroll]] for (uint i = 0; i < NSC; ++i) scale[i] = 1.0;                                                \
    const uint blk0 = (lane / (IS_K ? 4u : 8u)) * BPL;                                                       \
    if (MODE == MODE_ZERO || 16u * blk0 >= DIM) return;                                                      \
    const uint t = slot % 16u;                                                                               \
    const uint tile = page * (REGION * KV_HEADS) + kvh * REGION + (slot / 16u) * 16u * (BITS_ROW + 2u * GROUPS); \
    const uint at = tile / 4u + (IS_K ? 4u * (t % 8u) + lane % 4u : 4u * (lane % 8u) + (t % 8u) / 2u);       \
    [[unroll]] for (uint i = 0; i < NSC; ++i) {                                                              \
      const uint grp = 16u * blk0 / GROUP + i;                                                               \
      const uint off = tile + 16u * BITS_ROW + 32u * grp + 4u * (t % 8u) + 2u * (t / 8u);                    \
      if (grp < GROUPS) scale[i] = half_at(P1[off >> 2], off);                                               \
    }                                                                                                        \
    if (MODE == MODE_NORM) return;                                                                           \
    const uint lane_words = DIM / 16u * F / 8u, w0 = 4u * F * blk0 / 32u;                                   \
    [[unroll]] for (uint i = 0; i < NW; ++i)                                                                 \
      if (w0 + i < lane_words) w[i] = P1[at + 32u * (w0 + i)];                                               \
  }

#define TKV_DEFINE_FETCH(NAME, P4, P2, P1, TYPE, TILED, IS_K, GROUP, GROUPS, BITS_ROW, REGION, NW, NSC, LBITS, DIM, F, BPL) \
  TKV_DEFINE_ROW_FETCH(NAME##_rows, P4, P2, P1, TYPE, GROUP, GROUPS, BITS_ROW, REGION, NW, NSC, LBITS, DIM)     \
  TKV_DEFINE_TILE_FETCH(NAME##_tiles, P1, IS_K, DIM, GROUP, GROUPS, BITS_ROW, REGION, NW, NSC, F, BPL)          \
  void NAME(uint page, uint kvh, uint slot, uint lane, out uint w[NW], out float scale[NSC]) {              \
    if (TILED) NAME##_tiles(page, kvh, slot, lane, w, scale);                                                \
    else NAME##_rows(page, kvh, slot, lane, w, scale);                                                       \
  }

TKV_DEFINE_FETCH(fetch_k, k4, k2, k1, K_TYPE, K_TILED, true, K_GROUP, K_GROUPS, K_BITS_ROW, K_REGION, K_NW, K_NSC, K_LBITS, K_DIM, K_F, K_BPL)
TKV_DEFINE_FETCH(fetch_v, v4, v2, v1, V_TYPE, V_TILED, false, V_GROUP, V_GROUPS, V_BITS_ROW, V_REGION, V_NW, V_NSC, V_LBITS, V_DIM, V_F, V_BPL)

// The dim of the lane's element i on each side: the lane's base plus a constant per element.
uint k_dim_base(uint lane) { return K_TILED ? 16u * (lane / 4u) * K_BPL + 2u * (lane % 4u) : lane * DPL; }
uint k_dim_off(uint i) { return K_TILED ? 16u * (i / 4u) + 8u * ((i / 2u) % 2u) + i % 2u : i; }
uint v_dim_base(uint lane) { return V_TILED ? 16u * (lane / 8u) * V_BPL + lane % 8u : lane * DPL; }
uint v_dim_off(uint i) { return V_TILED ? 16u * (i / 2u) + 8u * (i % 2u) : i; }

// Tiles, once per token: shifts the lane's words of the token at tile position t so that the
// field of its element i sits where *_tile_index() looks, at a position that is a constant once
// the element loop is unrolled (the token's half of the tile is the runtime part, taken out here).
#define TKV_DEFINE_TILE_BITS(NAME, IS_K, NW, F, BPL)                                                               \
  void NAME(inout uint w[NW], uint lane, uint t) {                                                          \
    const uint blk0 = (lane / (IS_K ? 4u : 8u)) * BPL;                                                       \
    const uint base = (4u * F * blk0) % 32u + (IS_K ? 2u : 1u) * F * (t / 8u);                               \
    /* (by selects: moving array elements under a condition put the array in local memory, H100) */         \
    const bool drop = base >= 32u; /* turbo3: a whole word first */                                          \
    const uint s = base % 32u;                                                                               \
    uint r[NW];                                                                                              \
    [[unroll]] for (uint k = 0; k < NW; ++k) {                                                               \
      const uint w1 = k + 1u < NW ? w[min(k + 1u, NW - 1u)] : 0u, w2 = k + 2u < NW ? w[min(k + 2u, NW - 1u)] : 0u; \
      const uint lo = drop ? w1 : w[k], hi = drop ? w2 : w1;                                                 \
      r[k] = s == 0u ? lo : (lo >> s) | (hi << (32u - s));                                                   \
    }                                                                                                        \
    [[unroll]] for (uint k = 0; k < NW; ++k) w[k] = r[k];                                                    \
  }
TKV_DEFINE_TILE_BITS(k_tile_bits, true, K_NW, K_F, K_BPL)
TKV_DEFINE_TILE_BITS(v_tile_bits, false, V_NW, V_F, V_BPL)

// Element i's reference index from words prepared by *_tile_bits: element i is in block b and
// dim half h of it; e is its element of the pair (K: i's parity; V: the token's).
#define TKV_DEFINE_TILE_INDEX(NAME, IS_K, NW, F, MB)                                                             \
  uint NAME(uint w[NW], uint i, uint e) {                                                                   \
    const uint b = IS_K ? i / 4u : i / 2u, h = IS_K ? (i / 2u) % 2u : i % 2u;                               \
    const uint pos = 4u * F * b + (IS_K ? F : 2u * F) * h;                                                  \
    const uint k = pos / 32u, s = pos % 32u;                                                                 \
    uint v = w[min(k, NW - 1u)] >> s;                                                                        \
    if (s + F > 32u) v |= w[min(k + 1u, NW - 1u)] << (32u - s);                                             \
    /* (profile mode 3 leaves the signs out: every value from the positive half) */                         \
    const uint negative = MODE == MODE_NOSIGN ? 0u : (v >> (2u * MB + e)) & 1u;                             \
    return index_of((v >> (MB * e)) & ((1u << MB) - 1u), negative, MB + 1u);                                \
  }
TKV_DEFINE_TILE_INDEX(k_tile_index, true, K_NW, K_F, K_MB)
TKV_DEFINE_TILE_INDEX(v_tile_index, false, V_NW, V_F, V_MB)
#define K_TILE_INDEX(w, e, k) k_tile_index(w, (k), (k) % 2u)
#define V_TILE_INDEX(w, e, k) v_tile_index(w, (k), (e))

// The lane's DPL values of a row from its words, before the scale (a lane spanning several scale
// groups scales them itself). For qlut / reglut the turbo values are the indices themselves (as
// floats); smem reads the codebook from shared memory, K pairs from the pair table.
#define TKV_DEFINE_VALUES(NAME, TYPE, IS_K, NW, NSC, LBITS, VAR, CB, PAIRED, INDEX, GROUP)                     \
  void NAME(uint w[NW], uint e, float scale[NSC], out vec4 v[DPL4]) {                                       \
    if (MODE == MODE_ZERO || (MODE == MODE_NORM && TYPE != TYPE_F16)) {                                      \
      [[unroll]] for (uint c = 0; c < DPL4; ++c) v[c] = vec4(MODE == MODE_NORM ? 1.0 : 0.0);                 \
      return;                                                                                                \
    }                                                                                                        \
    if (MODE == MODE_NORM) {                                                                                 \
      [[unroll]] for (uint c = 0; c < DPL4; ++c) v[c] = vec4(unpackHalf2x16(w[0]).x);                        \
      return;                                                                                                \
    }                                                                                                        \
    if (PAIRED && MODE == MODE_FULL) {                                                                       \
      [[unroll]] for (uint k = 0; k < DPL; k += 2) {                                                         \
        const uint a = INDEX(w, e, k), b = INDEX(w, e, k + 1u);                                              \
        /* the table's entries (dequant.glsl pair_indices): turbo2 a | b << 2; turbo3 low bits, then signs */ \
        const vec2 x = kpair[TYPE == TYPE_TURBO2 ? a | (b << 2) : (a & 3u) | ((b & 3u) << 2) | ((a >> 2) << 4) | ((b >> 2) << 5)]; \
        v[k / 4][k % 4] = x.x;                                                                               \
        v[k / 4][k % 4 + 1] = x.y;                                                                           \
      }                                                                                                      \
    } else {                                                                                                 \
      [[unroll]] for (uint k = 0; k < DPL; ++k) {                                                            \
        float x;                                                                                             \
        if (TYPE == TYPE_F16) {                                                                              \
          const vec2 h = unpackHalf2x16(w[k / 2]);                                                           \
          x = (k & 1u) != 0u ? h.y : h.x;                                                                    \
        } else if (TYPE == TYPE_Q8_0) {                                                                      \
          x = float(bitfieldExtract(int(w[k / 4]), int(8u * (k % 4)), 8));                                   \
        } else {                                                                                             \
          const uint idx = INDEX(w, e, k);                                                                   \
          const uint top = TYPE == TYPE_TURBO2 ? 3u : TYPE == TYPE_TURBO3 ? 7u : 15u;                        \
          if (VAR == VARIANT_QLUT || VAR == VARIANT_REGLUT)                                                  \
            x = float(MODE == MODE_CONST ? top | (idx & pc.zero) : idx);                                     \
          else if (VAR == VARIANT_SMEM && MODE == MODE_FULL)                                                 \
            x = CB[idx];                                                                                     \
          else if (MODE == MODE_CONST)                                                                       \
            x = turbo_centroid(TYPE, VARIANT_LUT8, top) + float(idx & pc.zero);                              \
          else                                                                                               \
            x = turbo_centroid(TYPE, VAR, idx);                                                              \
        }                                                                                                    \
        v[k / 4][k % 4] = x;                                                                                 \
      }                                                                                                      \
    }                                                                                                        \
    if (MODE == MODE_CONST && TYPE < TYPE_TURBO2)                                                            \
      [[unroll]] for (uint c = 0; c < DPL4; ++c) v[c] = vec4(1.0) + vec4(floatBitsToUint(v[c]) & uvec4(pc.zero)); \
    if (NSC > 1) /* the lane's dims span groups: each value times its group's scale */                       \
      [[unroll]] for (uint k = 0; k < DPL; ++k) v[k / 4][k % 4] *= scale[min(16u * (IS_K ? k / 4u : k / 2u) / GROUP, NSC - 1u)]; \
  }

TKV_DEFINE_VALUES(k_values, K_TYPE, true, K_NW, K_NSC, K_LBITS, K_VARIANT, kcb, K_PAIRED, K_TILE_INDEX, K_GROUP)
TKV_DEFINE_VALUES(v_values, V_TYPE, false, V_NW, V_NSC, V_LBITS, V_VARIANT, vcb, false, V_TILE_INDEX, V_GROUP)

#define R_GET(j, d) qsh[(j) * QDIM + (d)]
#define R_SET(j, d, v) qsh[(j) * QDIM + (d)] = (v)
TKV_DEFINE_HADAMARD(hadamard_rows, R_GET, R_SET)

#include "query.glsl"
#ifdef TKV_FUSED_APPEND
#define TKV_APPEND_TAIL  // a tail workgroup and split slot a group (append_tail.glsl)
#endif
#include "split_merge.glsl"
#include "timeline.glsl"
TKV_DEFINE_MERGE_SPLITS(merge_splits, R_SET)
TKV_DEFINE_FINISH_ROWS(finish_rows, R_GET, R_SET, hadamard_rows)
#ifdef TKV_FUSED_APPEND
#include "numeric.glsl"
#define QR_COPIES 1  // (two: the H100 compiler gave the kernel 167 registers instead of 128)
#define QR_MIN_SUBGROUP MIN_SUBGROUP
#include "append_tail.glsl"
RowShape tail_shape(bool is_v) {
  return is_v ? RowShape(V_TYPE, V_DIM, V_GROUPS, V_GROUP, V_BITS_ROW, PAGE_SIZE, KV_HEADS, true)
              : RowShape(K_TYPE, K_DIM, K_GROUPS, K_GROUP, K_BITS_ROW, PAGE_SIZE, KV_HEADS, false);
}
const uint TAIL_SLOT = 1;  // the tail's split slot
#else
const uint TAIL_SLOT = 0;
#endif

// The per-token parts of a step, written as macros of a literal token index and expanded for
// 0..7 (guarded by UNROLL): the driver left loops over the tokens rolled once their bodies grew,
// which moved the per-token arrays to local memory and cost 3-4x (H200 compiler statistics).
#define TKV_FOR_TOKENS(X) X(0u) X(1u) X(2u) X(3u) X(4u) X(5u) X(6u) X(7u)

// Loads token u's words (the team's tokens share a page; a token past the split's end loads
// nothing and holds zeros).
#define TKV_FETCH_TOKEN(u)                                                                        \
  if (u < UNROLL) {                                                                               \
    uint w[K_NW], x[V_NW];                                                                        \
    float kc[K_NSC], vc[V_NSC];                                                                   \
    if (tok0 + u < end) {                                                                         \
      fetch_k(page, kvh, slot0 + u, lane, w, kc);                                                 \
      fetch_v(page, kvh, slot0 + u, lane, x, vc);                                                 \
      if (K_TILED && INDEXED_MODE) k_tile_bits(w, lane, (slot0 + u) % 16u);                       \
      if (V_TILED && INDEXED_MODE) v_tile_bits(x, lane, (slot0 + u) % 16u);                       \
    } else {                                                                                      \
      [[unroll]] for (uint i = 0; i < K_NW; ++i) w[i] = 0u;                                       \
      [[unroll]] for (uint i = 0; i < V_NW; ++i) x[i] = 0u;                                       \
      [[unroll]] for (uint i = 0; i < K_NSC; ++i) kc[i] = 0.0;                                    \
      [[unroll]] for (uint i = 0; i < V_NSC; ++i) vc[i] = 0.0;                                    \
    }                                                                                             \
    [[unroll]] for (uint i = 0; i < K_NSC; ++i) kscale[u * K_NSC + i] = kc[i];                    \
    [[unroll]] for (uint i = 0; i < V_NSC; ++i) vscale[u * V_NSC + i] = vc[i];                    \
    [[unroll]] for (uint i = 0; i < K_NW; ++i) kw[u * K_NW + i] = w[i];                           \
    [[unroll]] for (uint i = 0; i < V_NW; ++i) vw[u * V_NW + i] = x[i];                           \
  }

// Token u's partial scores against every row over the lane's dims.
#define TKV_SCORE_TOKEN(u)                                                                        \
  if (u < UNROLL) {                                                                               \
    uint w[K_NW];                                                                                 \
    float kc[K_NSC];                                                                              \
    [[unroll]] for (uint i = 0; i < K_NW; ++i) w[i] = kw[u * K_NW + i];                           \
    [[unroll]] for (uint i = 0; i < K_NSC; ++i) kc[i] = kscale[u * K_NSC + i];                    \
    const float ksc = K_NSC == 1 ? kc[0] : 1.0; /* else the values carry their group's scale */    \
    vec4 kv[DPL4];                                                                                \
    k_values(w, 0u, kc, kv);                                                                      \
    float r[NC]; /* reglut: centroid x scale of every entry, indexed by the loaded indices */      \
    if (K_REGLUT)                                                                                 \
      [[unroll]] for (uint c = 0; c < NC; ++c) r[c] = turbo_centroid(K_TYPE, VARIANT_LUT8, c) * ksc; \
    [[unroll]] for (uint j = 0; j < ROWS; ++j) {                                                  \
      float acc = 0.0;                                                                            \
      if (USE_QLUT) {                                                                             \
        [[unroll]] for (uint k = 0; k < DPL; ++k)                                                 \
          if (kdim0 + k_dim_off(k) < K_DIM) acc += tsh[(j * K_DIM + kdim0 + k_dim_off(k)) * NC + uint(kv[k / 4][k % 4])]; \
        acc *= ksc;                                                                               \
      } else if (K_REGLUT) {                                                                      \
        [[unroll]] for (uint k = 0; k < DPL; ++k) acc += q[j * DPL4 + k / 4][k % 4] * r[uint(kv[k / 4][k % 4])]; \
      } else {                                                                                    \
        [[unroll]] for (uint c = 0; c < DPL4; ++c) acc += dot(q[j * DPL4 + c], kv[c]);            \
        acc *= ksc;                                                                               \
      }                                                                                           \
      s[u * R2 + j] = acc;                                                                        \
    }                                                                                             \
  }

// P.V for token u: the lane's dims of V, weighted by each row's probability (which also sums into l).
#define TKV_ACCUM_TOKEN(u)                                                                        \
  if (u < UNROLL) {                                                                               \
    uint w[V_NW];                                                                                 \
    float vc[V_NSC];                                                                              \
    [[unroll]] for (uint i = 0; i < V_NW; ++i) w[i] = vw[u * V_NW + i];                           \
    [[unroll]] for (uint i = 0; i < V_NSC; ++i) vc[i] = vscale[u * V_NSC + i];                    \
    vec4 vv[DPL4];                                                                                \
    v_values(w, (slot0 + u) % 2u, vc, vv);                                                        \
    float sc = V_NSC == 1 ? vc[0] : 1.0;                                                          \
    if (V_REGLUT) {                                                                               \
      float r[V_NC];                                                                              \
      [[unroll]] for (uint c = 0; c < V_NC; ++c) r[c] = turbo_centroid(V_TYPE, VARIANT_LUT8, c) * sc; \
      [[unroll]] for (uint k = 0; k < DPL; ++k) vv[k / 4][k % 4] = r[uint(vv[k / 4][k % 4])];     \
      sc = 1.0;                                                                                   \
    }                                                                                             \
    [[unroll]] for (uint c = 0; c < (R2 + 3) / 4; ++c) {                                          \
      const vec4 pv = sc4[tbase + (u * R2) / 4 + c];                                              \
      [[unroll]] for (uint e = 0; e < 4; ++e) {                                                   \
        const uint j = 4 * c + e;                                                                 \
        if (j < R2 && j < ROWS) {                                                                 \
          const float p = pv[(u * R2 + j) % 4];                                                   \
          LR(j) += p;                                                                             \
          const float wgt = p * sc;                                                               \
          [[unroll]] for (uint k = 0; k < DPL4; ++k) o[j * DPL4 + k] += wgt * vv[k];              \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
  }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint lane = tid % TEAM, team = tid / TEAM;
#ifdef TKV_FUSED_APPEND
  const uint split = gl_WorkGroupID.x - 1u;  // the tail is x = 0 (below): dispatched first
#else
  const uint split = gl_WorkGroupID.x;
#endif
  const uint kvh = gl_WorkGroupID.y % KV_HEADS, row_chunk = gl_WorkGroupID.y / KV_HEADS;
  const uint b = gl_WorkGroupID.z;
  TL_STAMP(0u);
  const uvec4 info = b < pc.inline_seqs ? uvec4(pc.seq_inline[b], 0u, 0u) : seqs[b];
  const uint len = info.x, table = info.y;
#ifdef TKV_FUSED_APPEND
  if (gl_WorkGroupID.x == 0u) {  // the tail of the fused append
    append_tail(b, kvh, row_chunk, len, table, tid, WG);
    return;
  }
  const uint covered = len - M;  // the splits' tokens: [0, covered), the old ones
#else
  const uint covered = len;
#endif
  const uint start = split * pc.chunk;
  if (start >= covered) {  // uniform: the whole workgroup leaves
    TL_END(split, false, false);
    return;
  }
  const uint end = min(covered, start + pc.chunk);

  const uint kdim0 = k_dim_base(lane), vdim0 = v_dim_base(lane);  // the lane's first dims

  const uint first_page = start / PAGE_SIZE;
  for (uint p = tid; p <= (end - 1) / PAGE_SIZE - first_page; p += WG) split_pages[p] = pages[table + first_page + p];
  if (VARIANT == VARIANT_SMEM) {
    if (K_PAIRED)
      for (uint i = tid; i < K_PAIRS; i += WG) kpair[i] = pair_entry(K_TYPE, i);
    if (tid < 16u) {
      kcb[tid] = K_TILED && tid < NC ? turbo_centroid(K_TYPE, VARIANT_LUT8, tid) : 0.0;
      vcb[tid] = V_TILED && tid < V_NC ? turbo_centroid(V_TYPE, VARIANT_LUT8, tid) : 0.0;
    }
  }

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
    [[unroll]] for (uint i = 0; i < DPL; ++i) {
      const uint d = kdim0 + k_dim_off(i);
      q[j * DPL4 + i / 4][i % 4] = d < K_DIM ? qsh[j * QDIM + d] : 0.0;
    }
  if (USE_QLUT) {
    for (uint e = tid; e < ROWS * K_DIM * NC; e += WG) {
      const uint c = e % NC, jd = e / NC, j = jd / K_DIM, d = jd % K_DIM;
      tsh[e] = qsh[j * QDIM + d] * turbo_centroid(K_TYPE, VARIANT_LUT8, c);
    }
  }
  barrier();  // qsh is reused after the loop
  TL_STAMP(1u);

  vec4 m_run[ROWS4], l_run[ROWS4];
  vec4 o[ROWS * DPL4];
  [[unroll]] for (uint j = 0; j < ROWS; ++j) {
    MR(j) = NEG_INF;
    LR(j) = 0.0;
    [[unroll]] for (uint c = 0; c < DPL4; ++c) o[j * DPL4 + c] = vec4(0.0);
  }
  const uint tbase = team * (NV / 4);  // the team's slice of sc4

  for (uint base = start; base < end; base += STEP) {
    // The team's UNROLL consecutive tokens share a page (the step divides the page size).
    const uint tok0 = base + team * UNROLL;
    const uint page = split_pages[tok0 / PAGE_SIZE - first_page], slot0 = tok0 % PAGE_SIZE;
    uint kw[8 * K_NW], vw[8 * V_NW];  // sized for the 8 expansions; UNROLL are used
    float kscale[8 * K_NSC], vscale[8 * V_NSC];
    TKV_FOR_TOKENS(TKV_FETCH_TOKEN)

    // The lane's partial scores s[u * R2 + j] over its dims.
    float s[NV];
    [[unroll]] for (uint i = 0; i < NV; ++i) s[i] = 0.0;
    TKV_FOR_TOKENS(TKV_SCORE_TOKEN)

    // Reduce-scatter across the team: at each shuffle level a lane keeps one half of its values
    // (the upper half when its bit of `off` is set) plus its partner's copy of that half. Once a
    // lane holds one value, the remaining levels sum it whole.
    uint own = 0u;
    [[unroll]] for (uint level = 0; level < 5; ++level) {  // a counted loop: it unrolls, so s stays in registers
      const uint off = 16u >> level;
      if (off < TEAM) {
        const bool up = (lane & off) != 0u;
        const uint h = NV * off / TEAM;  // values kept after this level (0: whole sums)
        if (h > 0u) {
          [[unroll]] for (uint i = 0; i < 16u; ++i) {  // NV <= 32 (the plan)
            if (i < h) {
              const float keep = up ? s[i + h] : s[i], give = up ? s[i] : s[i + h];
              s[i] = keep + subgroupShuffleXor(give, off);
            }
          }
          if (up) own += h;
        } else {
          s[0] += subgroupShuffleXor(s[0], off);
        }
      }
    }

    // The owned scores: soft-cap, then the causal and window mask of their row.
    [[unroll]] for (uint i = 0; i < OWN; ++i) {
      const uint gi = own + i, u = gi / R2, j = gi % R2, gr = row_chunk * ROWS + j;
      const uint t = tok0 + u;
      const uint hi = len - M + gr / GQA;
      const uint lo = (pc.window > 0 && hi + 1 > pc.window) ? hi + 1 - pc.window : 0u;
      float v = s[i];
      if (pc.softcap > 0.0) v = pc.softcap * tanh(v / pc.softcap);
      const bool live = u < UNROLL && j < ROWS && gr < RM && t < end && t >= lo && t <= hi;
      s[i] = live ? v : NEG_INF;
      sc4[tbase + gi / 4][gi % 4] = s[i];
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();

    // Each row's largest score of the step; the running maximum moves only when exceeded by RAISE.
    vec4 mx[ROWS4];
    [[unroll]] for (uint c = 0; c < ROWS4; ++c) mx[c] = vec4(NEG_INF);
    [[unroll]] for (uint c = 0; c < 8u; ++c) {
      if (c < NV / 4) {
        const vec4 x = sc4[tbase + c];
        [[unroll]] for (uint e = 0; e < 4; ++e) {
          const uint gi = 4 * c + e, j = gi % R2;
          if (gi / R2 < UNROLL && j < ROWS) mx[j / 4][j % 4] = max(mx[j / 4][j % 4], x[e]);
        }
      }
    }
    bool rescale = false;
    vec4 alpha[ROWS4];
    [[unroll]] for (uint j = 0; j < ROWS; ++j) {
      const float m_old = MR(j), m_new = mx[j / 4][j % 4] > m_old + RAISE ? mx[j / 4][j % 4] : m_old;
      alpha[j / 4][j % 4] = m_new == m_old ? 1.0 : (m_old == NEG_INF ? 0.0 : exp(m_old - m_new));
      rescale = rescale || m_new != m_old;
      MR(j) = m_new;
    }
    if (rescale) {
      [[unroll]] for (uint j = 0; j < ROWS; ++j) {
        const float a = alpha[j / 4][j % 4];
        LR(j) *= a;
        [[unroll]] for (uint c = 0; c < DPL4; ++c) o[j * DPL4 + c] *= a;
      }
    }
    // The owned probabilities, for the whole team.
    float p_own[OWN];
    [[unroll]] for (uint i = 0; i < OWN; ++i) {
      const uint j = (own + i) % R2;
      float m = MR(0);
      [[unroll]] for (uint r = 1; r < ROWS; ++r) m = j == r ? MR(r) : m;
      p_own[i] = s[i] == NEG_INF ? 0.0 : exp(s[i] - m);
    }
    subgroupBarrier();  // every lane has read the scores
    [[unroll]] for (uint i = 0; i < OWN; ++i) sc4[tbase + (own + i) / 4][(own + i) % 4] = p_own[i];
    subgroupMemoryBarrierShared();
    subgroupBarrier();

    // P.V: the lane's dims of V, weighted by each row's probability (which also sums into l).
    TKV_FOR_TOKENS(TKV_ACCUM_TOKEN)
    subgroupBarrier();  // the probabilities are read before the next step overwrites them
  }

  // Merge the teams of a subgroup (lanes with the same dims), then the subgroups. The loop bound
  // is a constant (the largest subgroup size) so that it unrolls: a runtime-bounded loop here made
  // the compiler keep `o` in local memory for the whole kernel (H200 statistics).
  [[unroll]] for (uint level = 0; level < 7; ++level) {
    const uint off = TEAM << level;
    if (off < 128u && off < gl_SubgroupSize) {
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
  TL_STAMP(2u);
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
          const uint d = vdim0 + v_dim_off(i);
          if (d < V_DIM) qsh[j * QDIM + d] = (g == 0 ? 0.0 : qsh[j * QDIM + d]) + a * o[j * DPL4 + i / 4][i % 4];
        }
      }
    barrier();
  }

  const uint row0 = row_chunk * ROWS;
  if (DIRECT == 0) {
    // Several splits: the partials; the group's last workgroup merges them.
    for (uint e = tid; e < ROWS * PSTRIDE4; e += WG) {
      const uint j = e / PSTRIDE4, k4 = e % PSTRIDE4, gr = row0 + j, d = j * QDIM + partial_dim4(k4);
      if (gr >= RM) continue;
      part4[partial_index4(b, kvh, gr, split, k4)] =
          k4 == 0u ? vec4(m_all[j], l_all[j], 0.0, 0.0) : vec4(qsh[d], qsh[d + 1u], qsh[d + 2u], qsh[d + 3u]);
    }
    const uint n = splits_with_tokens(covered, pc.chunk) + TAIL_SLOT;
    const bool last = arrive_last(group_of(b, kvh, row_chunk), n);
    TL_STAMP(3u);
    if (!last) {
      TL_END(split, true, false);
      return;
    }
    merge_splits(b, kvh, row0, n, tid, WG);
  } else {
    [[unroll]] for (uint j = 0; j < ROWS; ++j)
      if (tid == j) merge_l[j] = l_all[j];
    barrier();
    TL_STAMP(3u);
  }
  TL_STAMP(4u);
  finish_rows(b, kvh, row0, tid, WG);
  TL_STAMP(5u);
  TL_END(split, true, true);
}
