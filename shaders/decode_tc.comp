#version 450
// Split-K flash decoding over turbo, f16 and q8_0 K and V on the tensor cores
// (VK_NV_cooperative_matrix), the "tc" variant of attention/decoder.hpp. (f16 and q8_0 rows:
// K_ROWS, V_ROWS below; what follows describes the turbo tiles.) Same bindings, push constants
// and partials as decode.comp; every split writes partials, and the last of its group merges them
// and stores the output (split_merge.glsl).
//
// A workgroup = 4, 6 or 8 subgroups (WG, the plan's choice); each streams its own tiles of 16
// consecutive tokens (the cache's tiles, kvcache/layout.hpp) with its own online-softmax state.
// Per tile:
//   scores  S[16 x 8] = sum over 16-dim blocks of  [C_hi; C_lo][16 x 16 dims] . Qb[16 dims x 8]
//           (per half of 8 tokens: rows g and g + 8 are token g's hi and lo halves, summed after)
//   output  O[16 dims x 8]  += C^T[16 dims x 16 tokens] . Pb[16 tokens x 8]      (per dim block)
// where C holds the tokens' centroids (the norms stay outside: score = norm_k x q.c, and the V
// norm is folded into p). Exactness (1e-4 per head against float64) rules out plain f16 operands,
// so every operand is split into f16 hi + lo halves: Qb's 8 columns are the rows' q_hi (0..3)
// and q_lo (4..7), Pb's the rows' w_hi and w_lo (w = p x norm_v), and C is multiplied as C_hi and
// C_lo (rows of one MMA for the scores, two MMAs into one accumulator for the output): column j +
// column j+4 of an accumulator is row j's value, with every cross term but lo x lo. turbo2's C is
// exact in f16 at its own scale (CS2 below): no C_lo, one MMA per 16 tokens and per block.
//
// The cache's tiles hold each lane's fragment elements in its own words (lane 4g + c: pairs
// j = 4 blk + r, r the A register, kvcache/layout.hpp), so a lane loads its words straight from
// the pool (coalesced, one tile ahead) and makes each A register (an f16 pair) from one table read
// in shared memory: a pair's field (both magnitudes and both signs) indexes a table of (hi pair,
// lo pair) words. The table has a copy per lane of a half-warp (entry e of copy l at e x 16 + l),
// so that the 16 lanes of a 64-bit load always read 16 different bank pairs: no bank conflicts,
// and the address is one shift and one LOP3 (field x 128 | lane x 8). turbo4's 8-bit fields
// index 256 x 16 entries (32 KB, TAB256: the plan's choice) or, where its shared memory is
// wanted for more workgroups an SM, its magnitudes alone (64 x 16), and its sign bits then flip
// the halves' signs with XORs. This relies on the fragment
// layout of NVIDIA's mma.m16n8k16 in the element order its driver uses (A: lane 4g + c holds
// (g, 2c..2c+1), (g, 2c+8..2c+9), (g+8, 2c..2c+1), (g+8, 2c+8..2c+9); accumulator: (g, 2c..2c+1),
// (g+8, 2c..2c+1); B (k x n): (k = g, n = 2c..2c+1), (k = g+8, n = 2c..2c+1), which the driver
// transposes into mma's B registers with MOVM), which the host checks once per device with
// shaders/coopmat_probe.comp. Pb is built that way in registers from each lane's own scores.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
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
layout(constant_id = 3) const uint DIM = 128;        // stored elements per row: one group (64 or 128)
layout(constant_id = 4) const uint K_BITS_ROW = 48;
layout(constant_id = 5) const uint V_BITS_ROW = 48;
layout(constant_id = 6) const uint PAGE_SIZE = 64;
layout(constant_id = 7) const uint KV_HEADS = 8;
layout(constant_id = 8) const uint GQA = 4;
layout(constant_id = 9) const uint M = 1;
layout(constant_id = 10) const uint ROWS = 4;        // query rows per workgroup, <= 8 (> 4: WIDE); ROWS16: <= 16
layout(constant_id = 11) const uint Q_F16 = 0;
layout(constant_id = 12) const uint MODE = 0;        // 0 or 1 (reads nothing)
layout(constant_id = 13) const uint OUT_F16 = 0;
layout(constant_id = 14) const uint K_NEW_F16 = 0;  // fused append: the new rows' formats
layout(constant_id = 15) const uint V_NEW_F16 = 0;
layout(constant_id = 16) const uint B_NATIVE = 0;  // 1: B fragments in mma.m16n8k16's own order (KHR)

layout(constant_id = 17) const uint WG = 128;  // invocations: 4, 6 or 8 subgroups of 32
layout(local_size_x_id = 17) in;
// 1: the query rows on the MMAs' 16-row side (ROWS <= 16; B_NATIVE, 4 subgroups: attention/plan.cpp
// decides), below.
layout(constant_id = 18) const uint ROWS16 = 0;
// 1: turbo4's table holds both negative bits (256 entries, K and V of one type or a turbo4 side
// beside rows; DecodePlan::tab256), below.
layout(constant_id = 19) const uint TAB256 = 0;
// A batch of at most this many sequences passes their (length, page table offset) in the push
// constants (the device's push constant bytes past the header), with no buffer update and barrier
// before the dispatch (attention/decoder.cpp).
layout(constant_id = 20) const uint INLINE_SEQS = 10;
// q8_0 V in the one-row loop of a plain call: V one tile ahead (V_AHEAD, below) or not, the
// plan's choice by a subgroup's tiles in a split (attention/plan.cpp).
layout(constant_id = 21) const uint V_AHEAD_ROW = 1;

const uint SUBGROUPS = WG / 32u, TILE = 16, STEP = SUBGROUPS * TILE;
const uint RM = GQA * M;
// Up to 4 rows, Qb's 8 columns hold the rows' q_hi and q_lo (hi + lo columns summed afterwards);
// WIDE (5 to 8 rows), they hold 8 rows' q_hi and a second matrix their q_lo, so that the tile's
// dequantized fragments serve twice the rows: scores C_hi.Q_hi + C_hi.Q_lo + C_lo.Q_hi (3 MMAs a
// block for 16 tokens and 8 rows, against 4 for two chunks of 4 rows), output C_hi.P_hi +
// C_hi.P_lo + C_lo.P_hi likewise, and no column sums.
//
// ROWS16: the transposed products, for up to 16 rows: queries as the A operand (rows on the MMAs'
// 16-row side, loop-invariant fragments in registers), the tile's centroids as B (its 8 columns
// are 8 tokens), per 16-dim block and token half h:
//   scores  S^T[16 rows x 8 tokens] = Q_hi . C_hi^T + Q_lo . C_hi^T + Q_hi . C_lo^T
//   output  O^T[16 rows x 8 dims] += P_hi . V_hi + P_lo . V_hi + P_hi . V_lo   (per 8-dim block)
// with P (16 rows x 16 tokens, A) straight from the scores' accumulators: lane 4g + c holds rows
// g, g + 8 of tokens 2c, 2c + 1 of each half, the A fragment's elements. The tile words' pairs are
// the B fragments as they are: under B_NATIVE lane 4g + c holds (k = 2c, 2c + 1, 2c + 8, 2c + 9;
// n = g), and K's pairs 4 blk + 2h, + 1 are token g + 8h's dims 2c.., 2c + 8.. of the block, V's
// pairs 4 blk + 2x, + 1 dim g + 8x's tokens 2c.., 2c + 8... One tile's table reads (as many as
// for 4 rows) serve 16 rows: 96 MMAs where two chunks of 8 rows (the WIDE form) take 96 and 4
// chunks of 4 rows 128, with the softmax of 8 scores a lane.
const bool WIDE = ROWS > 4u;  // (not with ROWS16, whose own loop is rows16_split)
const uint QCOLS = ROWS16 != 0u ? 16u : ROWS > 4u ? 16u : 8u;  // frag: Qb's columns (ROWS16: Q's rows, hi or lo)
const uint Q_HEADS = KV_HEADS * GQA;
const uint V_DIM = DIM, V_GROUP = DIM;  // (split_merge.glsl) one group per row
const uint BLOCKS = DIM / 16;
const bool READS = MODE == MODE_FULL;
const float NEG_INF = -1.0 / 0.0;

// f16 and q8_0 K or V: rows (kvcache/layout.hpp), read straight into the A fragments (exact
// operands, no table: q8_0's int8 values are exact f16 numbers). A lane's words of a tile are
// whole 16-byte (q8_0: 8-byte) loads: the MMAs' sums run over dims (K) and tokens (V) in any order
// both operands share, so the rows' dims are assigned to the fragments' slots where each lane's
// words lie side by side (k_slot, v_dim below). q8_0's block scales cannot enter an f16 operand
// exactly (d x q needs 19 bits): K's multiply per-block score accumulators after the MMAs (a
// 16-dim step of the MMAs stays within one 32-dim block), V's go into the probabilities, one P
// matrix per block (a 16-dim output block stays within one block of V).
const bool K_Q8 = K_TYPE == TYPE_Q8_0, V_Q8 = V_TYPE == TYPE_Q8_0;
const bool K_ROWS = K_TYPE == TYPE_F16 || K_Q8, V_ROWS = V_TYPE == TYPE_F16 || V_Q8;
// Rows take no whole-tile prefetch: a tile's f16 words are 64 registers a lane (8 KB a subgroup
// in flight). They load a tile's V at the top of its step (in flight during the scores) and the
// next tile's K after the scores (in flight during the softmax and the output), in K's registers.
// (H100, session 19 runs 4-5, against the whole tile at the top of its step: f16 m 3 / m 8 at 32K
// -8%, q8_0 m 1 at 32K / 128K -7% / -6%, batch 16 8K -5%; q8_0's wide form +1% (m 3) / +4%
// (m 8); registers 151 -> 161 (f16), 146 -> 168 (q8_0).)
const bool PREFETCH = !K_ROWS && !V_ROWS;
// q8_0 V (the 8-column loop: one query row and the wide form): V one tile ahead, loaded at the
// top of the step before (in flight for a whole step), K still after the scores in K's
// registers. (H200, session 47 runs 2-3, one row: R161 -> R165, 128K 88.7 -> 86.9 us, 32K 32.7 ->
// 31.6, batch 16 8K 76.3 -> 74.9, 4K even.
// In the 16-row loop (m >= 3) the same spilled, R252 with 24 STL: m 3 / m 8 at 32K +23% / +29%.
// The wide form (m 2), session 48 (session 47's run 4): R201 -> R220, 32K 38.5 -> 36.9 us, 8K
// 20.4 -> 20.0. f16 V ahead: R237, 173 copies on the steady path, 128K 134.0 -> 160.4 us.)
// Not in a fused call's one-row loop: there it cost q8_0's 32-layer fused step at 4K 25-31 us
// over its decode step against 2-7 without (H200, session 51 run 3: P7 6.2-7.7% -> 0.5-1.7%, the
// decode step the same; its run 2 had placed the rise at f75932c, this V_AHEAD's commit).
#ifdef TKV_FUSED_APPEND
const bool V_AHEAD = V_Q8 && !PREFETCH && WIDE;
#else
const bool V_AHEAD_ON = WIDE || V_AHEAD_ROW != 0u;  // (its own constant: glslang wants && of names)
const bool V_AHEAD = V_Q8 && !PREFETCH && V_AHEAD_ON;
#endif
// The wide form's K one tile ahead too, loaded at the top of the step before into the other tile
// buffer (its registers are past the 12-warp line already). (H200, session 49 run 1, with the two
// buffers: R220 -> R252, no spills; m 2 at 32K 36.9 -> 34.3 us, 8K 20.5 -> 20.3.)
const bool K_AHEAD = V_AHEAD && WIDE;
// The tiles (kvcache/layout.hpp): pair j's field (F = 2 x index bits: two magnitudes, then two
// negative bits) at bit F j of the lane's words; norms after the bits (one group).
const uint K_MB = K_TYPE == TYPE_TURBO2 ? 1 : K_TYPE == TYPE_TURBO3 ? 2 : 3;
const uint V_MB = V_TYPE == TYPE_TURBO2 ? 1 : V_TYPE == TYPE_TURBO3 ? 2 : 3;
const uint K_F = 2 * (K_MB + 1), V_F = 2 * (V_MB + 1);
// Words per lane and tile (rows: 16 x DIM halves, or bytes, over 32 lanes).
const uint K_LW = K_Q8 ? DIM / 8u : K_ROWS ? DIM / 4u : BLOCKS * K_F / 8;
const uint V_LW = V_Q8 ? DIM / 8u : V_ROWS ? DIM / 4u : BLOCKS * V_F / 8;
// Tiles (rows: a row) and a page's region of one head, in words (16 rows of whole bytes: a
// multiple of 4). (Word offsets, not bytes divided by 4: the driver then forms each load's address
// with one add.)
const uint K_TILE = K_ROWS ? K_BITS_ROW / 4u : 4 * (K_BITS_ROW + 2), V_TILE = V_ROWS ? V_BITS_ROW / 4u : 4 * (V_BITS_ROW + 2);
// q8_0: a token's scales (one f16 per 32-dim block) in words, after the page's rows (1: unused).
const uint K_SW = K_Q8 ? DIM / 64u : 1u, V_SW = V_Q8 ? DIM / 64u : 1u;
const uint K_SW2 = 2u * K_SW, V_SW2 = 2u * V_SW;  // (of two tokens: g and g + 8)
const uint K_REGION = K_ROWS ? PAGE_SIZE * (K_TILE + (K_Q8 ? K_SW : 0u)) : PAGE_SIZE / 16 * K_TILE;
const uint V_REGION = V_ROWS ? PAGE_SIZE * (V_TILE + (V_Q8 ? V_SW : 0u)) : PAGE_SIZE / 16 * V_TILE;
// Rows: a lane's 16-byte loads per K token (f16; V: BLOCKS / 4), its 8-byte loads per K token
// (q8_0), and q8_0's 32-dim blocks.
const uint KQ = DIM / 32u;

// The pools, read-only to the driver. A fused append-decode dispatch (TKV_FUSED_APPEND) also
// writes them: the splits that hold new tokens store them (split_append below) through the pools
// bound a second time (10: K, 11: V; attention/decoder.cpp). A row side's (f16, q8_0) go as
// relaxed atomics (which need not wait for each other; through coherent bindings, with plain
// stores among them, a new row took ~2.4 us to quantize and store on an H100, against ~0.8
// through plain ones: session 28, runs 3-4). A turbo side's new rows are kept in shared memory,
// packed (the fresh words, below); the split's first fetch of their tile patches their bits in
// and stores the words that hold them whole, with plain stores: no barrier. A row side's are
// stored during the prologue, made visible by memory barriers on each side of its barrier (STORES_VISIBLE,
// STORES_SEEN), and read back through coherent views of those
// bindings (kc1 .., FRESH), so that no line an SM's L1 cache took before the writes is read (a
// line may hold another split's or KV head's bytes too). Every other tile is read as by the
// plain kernel. (Every read coherent, session 28 runs 3-4: q8_0's fused calls at 32K 0.2-0.6% ->
// 5.6% of the step.)
layout(std430, binding = 0) readonly buffer KPool { uint k1[]; };
layout(std430, binding = 0) readonly buffer KPool2 { uvec2 k2[]; };
layout(std430, binding = 0) readonly buffer KPool4 { uvec4 k4[]; };
layout(std430, binding = 1) readonly buffer VPool { uint v1[]; };
layout(std430, binding = 1) readonly buffer VPool4 { uvec4 v4[]; };
#ifdef TKV_FUSED_APPEND
layout(std430, binding = 10) buffer KPoolRW { uint k_rw[]; };
layout(std430, binding = 10) coherent readonly buffer KPoolC { uint kc1[]; };
layout(std430, binding = 10) coherent readonly buffer KPoolC2 { uvec2 kc2[]; };
layout(std430, binding = 10) coherent readonly buffer KPoolC4 { uvec4 kc4[]; };
layout(std430, binding = 11) buffer VPoolRW { uint v_rw[]; };
layout(std430, binding = 11) coherent readonly buffer VPoolC { uint vc1[]; };
layout(std430, binding = 11) coherent readonly buffer VPoolC4 { uvec4 vc4[]; };
uint fresh_from = 0xffffffffu;  // the call's first new token (main): its tile and later ones are fresh
uint fresh_len = 0u;             // and the call's length: new tokens [fresh_from, fresh_len)
bool fresh_split = false;        // (uniform) this split's range holds new tokens (main)
uint fresh_table = 0u;           // the sequence's page table (main)
#define FRESH(tb) ((tb) + TILE > fresh_from)
// (Turbo sides read their new tokens' tiles plainly and patch them from the fresh words, below.)
#define K1(i, f) ((f) && K_ROWS ? kc1[i] : k1[i])
#define K2(i, f) ((f) && K_ROWS ? kc2[i] : k2[i])
#define K4(i, f) ((f) && K_ROWS ? kc4[i] : k4[i])
#define V1(i, f) ((f) && V_ROWS ? vc1[i] : v1[i])
#define V4(i, f) ((f) && V_ROWS ? vc4[i] : v4[i])
#else
#define FRESH(tb) false
#define K1(i, f) k1[i]
#define K2(i, f) k2[i]
#define K4(i, f) k4[i]
#define V1(i, f) v1[i]
#define V4(i, f) v4[i]
#endif
// A lane's tile loads are one base offset plus constants. Offsets into a pool binding are below
// 2^30 words (a binding's range is at most 4 GiB; 2^29 uvec2, 2^28 uvec4): in_range masks a base
// to that range, which changes no valid offset and tells the compiler that base + a constant
// does not wrap, so that the constant can fold into the load's immediate offset. (Without it,
// each load had its own 64-bit address arithmetic: IADD3, LEA and IMAD.X, session 45 run 4.)
uint in_range(uint i, uint words) { return i & (0x3fffffffu / words); }
// The tile loops' order: a fused call's from each subgroup's last tile down, so that a split's
// new tokens (in its last tiles) are only ever a subgroup's first fetch, made before the loop,
// whose own fetches then need no branch (session 29, run 2: turbo3's fused 32K step 0.9-1.5% ->
// -0.3..0.6% of the decode step); the plain kernel's from the first up.
#ifdef TKV_FUSED_APPEND
const bool TILES_DOWN = true;
#else
const bool TILES_DOWN = false;
#endif
uint next_tile(uint tb) { return TILES_DOWN ? tb - STEP : tb + STEP; }
layout(std430, binding = 2) readonly buffer Pages { uint pages[]; };
layout(std430, binding = 3) readonly buffer Seqs { uvec4 seqs[]; };
layout(std430, binding = 4) readonly buffer Q { uint qw[]; };
layout(std430, binding = 5) writeonly buffer Out { float out32[]; };
layout(std430, binding = 5) writeonly buffer Out16 { uint16_t out16[]; };

layout(push_constant) uniform Push {
  float scale;
  float softcap;
  uint window;
  uint chunk;
  uint splits;
  uint q_offset;
  uint out_offset;
  uint zero;
  uint inline_seqs;  // sequences whose (length, page table offset) are seq_inline's (0: seqs[]'s)
  uint unused;
  uint k_new;       // fused append: elements to the new K rows (append_tail.glsl)
  uint v_new;       // and to the new V rows
  uvec2 seq_inline[INLINE_SEQS];
} pc;

// Lo halves must not be f16 subnormals (which may flush to zero): the centroids are scaled by CS
// and the query rows by a power of two qs that puts their largest value in [2^11, 2^12), both
// exact, and divided out of the scores and outputs.
const float CS = 1024.0;
// turbo2's two magnitudes have a scale at which both are f16 values (1.9267578 and 6.4296875 at
// CS2, within 6.2e-8 of the fp32 codebook's ratio: float rounding): its operands need no lo halves,
// so a score MMA covers 16 tokens and an output MMA needs one operand instead of hi and lo.
const float CS2 = 48.17617;
const bool K_EXACT = K_TYPE == TYPE_TURBO2 || K_ROWS, V_EXACT = V_TYPE == TYPE_TURBO2 || V_ROWS;
const float K_CS = K_ROWS ? 1.0 : K_EXACT ? CS2 : CS, V_CS = V_ROWS ? 1.0 : V_EXACT ? CS2 : CS;
shared float qmax_sh[8];  // the largest |q| of each subgroup that holds query rows

// x as f16 hi + lo with hi + lo = x to ~2^-21 relative: hi keeps x's top 10 mantissa bits (exact
// in f16), lo = x - hi is exact in f32. (Written with integer bits: the driver folded
// float(float16_t(x)) back to x, which made every lo half 0 and the error that of plain f16.)
// Truncation keeps hi's magnitude at most |x|, so hi and lo have x's sign: negating x negates both.
f16vec2 split_hilo(float x) {
  const float hi = uintBitsToFloat(floatBitsToUint(x) & 0xffffe000u);
  return f16vec2(float16_t(hi), float16_t(x - hi));
}

// Tables, 16 copies: entry e -> (hi pair, lo pair) of cs x the centroids of a pair field e
// (turbo4: of its whole field, 256 entries, where the plan says TAB256; else of its magnitudes,
// 64, positive); exact types: (the f16 pair, 0). (turbo4's 256 entries save a pair's sign work,
// ~3 ALU instructions: 790 -> 575 in its steady path. Their 32 KB leave one workgroup an SM, of
// eight subgroups (attention/plan.cpp). H200, session 39 runs 2-4: turbo4 8K / 32K / 128K 17.8 /
// 34.6 / 95.0 -> 16.0 / 28.5 / 78.2 us, m 8 32K 75.8 -> 65.7, batch 16 8K 105.3 -> 86.4. The same
// table in 8 copies (16 KB) met 2-way bank conflicts and gained nothing: 95.0 -> 94.7.)
const uint K_ENTRIES = K_ROWS ? 0 : K_MB != 3 ? 1 << K_F : TAB256 != 0u ? 256 : 64;
const uint V_ENTRIES = V_ROWS ? 0 : V_MB != 3 ? 1 << V_F : TAB256 != 0u ? 256 : 64;
// One region holds, as float bits where they are floats: the tables in the loop, then the
// subgroups' outputs (osh) and (m, l) (msh), then the merged output rows: never live together. The shared memory of a workgroup decides how many an SM holds (turbo3 at 128K on the
// H100: 140 us with 31.9 KB per workgroup, 97.5 us with the tables and the epilogue aliased,
// 23.5 KB; with qsh here too and Qb / Pb in one array, 20 KB; Pb now lives in registers).
// K and V of one type share one table.
const uint V_OWN_ENTRIES = K_TYPE == V_TYPE ? 0 : V_ENTRIES;  // entries of a separate V table
const uint TAB_K = 0, TAB_V = K_TYPE == V_TYPE ? 0 : K_ENTRIES * 16;  // uvec2 offsets of the tables
// osh holds OSLOTS subgroups' outputs: ROWS16 folds subgroups sg + SUBGROUPS / 2 into sg first
// (rows16_split), so that 16 rows' outputs of 4 subgroups take 16 KB, not 33. (H100, session 21:
// workgroups of 35.3 KB and of 27.2 KB ran one an SM, a second wave of them 26-45 us late; 23.0 KB
// two an SM.)
const uint OSLOTS = ROWS16 != 0u ? SUBGROUPS / 2u : SUBGROUPS;
const uint OSH = 0, MSH = OSLOTS * ROWS * DIM;   // float offsets of osh and msh (msh: every subgroup's)
const uint REGION_T = (K_ENTRIES + V_OWN_ENTRIES) * 16, REGION_O = (OSLOTS * ROWS * DIM + SUBGROUPS * ROWS * 2 + 1) / 2;
const uint REGION_TO = REGION_T > REGION_O ? REGION_T : REGION_O;
#ifdef TKV_FUSED_APPEND
// A fused dispatch's splits that hold new tokens quantize them (split_append) while the prologue
// builds the tables: the quantizer's arrays after the tables (where the outputs' room is larger,
// within it), two or four copies (a subgroup quantizing one new row into each) of a row's DIM values and
// codes and its 8 scales, 2 DIM + 8 words each (quantize_row.glsl indexes copies 256 words apart:
// QR_AT below). The plan's decode_shared_bytes counts them. (Row sides use them; a turbo side's
// row stays in its quantizer's registers until its fresh words, below: fw_write.)
// (rows16 and WIDE, whose outputs' room holds them: four copies, as the M new tokens of more
// query rows take more rows to quantize.)
const uint QR_COPIES_FORM = ROWS16 != 0u || WIDE ? 4u : 2u;
#define QR_COPIES QR_COPIES_FORM
const uint QR_COPY_WORDS = 2u * DIM + 8u;
// The fresh words, after them (turbo sides; rows are stored and read back): each new token's
// row of a turbo side packed by the subgroup that quantized it (fw_write: 32 words, then its
// norm's f16 bits), K's rows then V's, by the token's place among the call's new ones. The first
// fetch of a tile that holds new tokens rebuilds their bits in the words its lanes loaded from them
// (fw_bits_k / fw_bits_v: each lane its own words, in registers, fields at known places) and
// stores the words that hold new bits, whole, in the pool: no barrier, no atomics, no pool address
// during the quantizer. K row: word p < 16, byte i: the pair field (elements 2p + 32 i and the
// next: two magnitudes, then two negative bits, K_F bits, as a tile's field); V row: word p,
// nibble i: element p + 32 i's magnitude, then its negative bit. (Before, an overlay of the
// tile's words that the quantizer ORed its fields into, by shared atomics, a field an atomic:
// session 32, run 1, the fresh split's prologue ~2 us longer with that store than without it;
// session 29, run 2: those bits stored to the pool during the prologue, 5.15 us; session 30,
// run 2: stored after the tile loop, its tiles 1.34 -> 2.24 us.)
const uint FW_ROW = 33u, FW_K = K_ROWS ? 0u : M * FW_ROW, FW_V = V_ROWS ? 0u : M * FW_ROW;
const uint REGION_Q = REGION_T + (QR_COPIES * QR_COPY_WORDS + FW_K + FW_V + 1u) / 2u;
#else
const uint REGION_Q = 0;
#endif
const uint REGION = REGION_TO > REGION_Q ? REGION_TO : REGION_Q;  // (> ROWS x DIM / 2: the rows)
shared uvec2 region[REGION];
#define F_SET(i, v) region[(i) / 2u][(i) % 2u] = floatBitsToUint(v)
#define F_GET(i) uintBitsToFloat(region[(i) / 2u][(i) % 2u])
// rows16 over f16 V rows: osh's element i (row i / DIM, dim i % DIM) with its dim's low 5 bits
// XORed by the row's low 3 bits (onto dim bits 0-2, and bits 1-2 again onto 3-4) and by dim bits
// 5-6 (onto 3-4), so that the fold's stores of one accumulator element (8 rows g x 4 lanes c, dims
// 32c + 16e + ..) reach 32 banks instead of one (rows of DIM floats: 32-way conflicts; the fold's
// arrival 11.5 -> 6.1 us, f16 m 3 32K 71.4 -> 65.8). Each dim stays in its row's 32-dim run. The
// same swizzle on every layout (turbo's and q8_0's 8-way conflicts in rows16, the columns' 2-way)
// lost: H100, session 22, m 1 32K turbo3 28.4 -> 30.0 us, q8_0 39.7 -> 41.8, rows16 turbo3 m 3
// arrival 4.9 -> 5.8 (fewer conflicts, more costly addresses: the parity of i no longer known).
const uint OSH_SWIZZLE = ROWS16 != 0u ? (V_TYPE == TYPE_F16 ? 1u : 0u) : 0u;
uint osh_at(uint i) {
  const uint row = i / DIM, d = i % DIM;
  return OSH_SWIZZLE != 0u ? i ^ ((row & 7u) ^ ((row & 6u) << 2) ^ (((d >> 5) & 3u) << 3)) : i;
}
#define OSH_SET(i, v) F_SET(OSH + osh_at(i), v)
#define OSH_GET(i) F_GET(OSH + osh_at(i))
#define MSH_SET(i, v) F_SET(MSH + (i), v)
#define MSH_GET(i) F_GET(MSH + (i))
// Qb on its way from the subgroups' rows to every subgroup's fragments: [column][dim], q_hi of
// rows 0..3, then q_lo (WIDE: q_hi of rows 0..7, then q_lo). Stored column-major (a column's consecutive k side by side, the order of
// mma.m16n8k16's B registers). (The driver still transposes each B fragment with MOVM before each
// MMA, as it did for row-major B: H100 SASS, no change in time.)
shared float16_t frag[QCOLS * DIM];
const uint MAX_SPLIT_PAGES = 512;
shared uint split_pages[MAX_SPLIT_PAGES];

// Table entry e: the pair's two elements (field bits: magnitudes a, b; then negatives a, b).
uvec2 table_entry(uint type, uint mb, uint e, float cs, bool exact) {
  const uint half_ = 1u << mb, m = half_ - 1u;
  float ca = cs * turbo_centroid(type, VARIANT_LUT8, half_ + (e & m));
  float cb = cs * turbo_centroid(type, VARIANT_LUT8, half_ + ((e >> mb) & m));
  // The negative bits (turbo4: e reaches bits 6 and 7 only in a table of 256 entries).
  if (((e >> (2u * mb)) & 1u) != 0u) ca = -ca;
  if (((e >> (2u * mb + 1u)) & 1u) != 0u) cb = -cb;
  if (exact) {  // within an f32 ulp of an f16 value: rounded to its 11 significant bits
    ca = uintBitsToFloat((floatBitsToUint(ca) + 0x1000u) & 0xffffe000u);
    cb = uintBitsToFloat((floatBitsToUint(cb) + 0x1000u) & 0xffffe000u);
    return uvec2(packFloat2x16(f16vec2(float16_t(ca), float16_t(cb))), 0u);
  }
  const f16vec2 a2 = split_hilo(ca), b2 = split_hilo(cb);  // (negating x negates hi and lo)
  return uvec2(packFloat2x16(f16vec2(a2.x, b2.x)), packFloat2x16(f16vec2(a2.y, b2.y)));
}

// Bits [F j, F j + 7 + F) of the words, shifted to start at bit 7 (compile-time shifts; a field
// may straddle two words).
#define FIELD_AT7(w, j, F, LW)                                                                      \
  ((((F) * (j)) % 32u >= 7u ? (w)[(F) * (j) / 32u] >> (((F) * (j)) % 32u - 7u)                     \
                             : (w)[(F) * (j) / 32u] << (7u - ((F) * (j)) % 32u)) |                   \
   (((F) * (j)) % 32u + (F) > 32u ? (w)[min((F) * (j) / 32u + 1u, (LW) - 1u)] << (39u - ((F) * (j)) % 32u) : 0u))

// Pair j of a lane's tile words as its (hi, lo) f16 pairs: hv, lv. lane8 = (lane % 16) x 8, the
// lane's copy of the table.
#define TABLE_PAIR(w, j, F, LW, ENTRIES, TABLE, hv, lv)                                             \
  f16vec2 hv, lv;                                                                                   \
  {                                                                                                 \
    const uint at = FIELD_AT7(w, j, F, LW);                                                         \
    const uvec2 t = region[(TABLE) + (((at & ((ENTRIES - 1u) << 7)) | lane8) >> 3)];                \
    /* turbo4's 64 entries: its negative bits (6, 7 of the field) onto the halves' signs */          \
    const uint sm = (F) != 8u || (ENTRIES) == 256u ? 0u : ((at << 2) & 0x8000u) | ((at << 17) & 0x80000000u); \
    hv = unpackFloat2x16(t.x ^ sm);                                                                 \
    lv = unpackFloat2x16(t.y ^ sm);                                                                 \
  }

// The output phase's A fragment of block blk (pairs 4 blk + r in registers r = 0..3) from a
// lane's tile words: its hi and lo halves.
#define BUILD_A(w, blk, F, LW, ENTRIES, TABLE, ah, al)                                              \
  [[unroll]] for (uint r = 0; r < 4u; ++r) {                                                        \
    TABLE_PAIR(w, 4u * (blk) + r, F, LW, ENTRIES, TABLE, h, l)                                      \
    ah[2 * r] = h.x; ah[2 * r + 1] = h.y;                                                           \
    al[2 * r] = l.x; al[2 * r + 1] = l.y;                                                           \
  }

// The same fragment's f16 values alone (exact types).
#define BUILD_A_EXACT(w, blk, F, LW, ENTRIES, TABLE, a)                                             \
  [[unroll]] for (uint r = 0; r < 4u; ++r) {                                                        \
    TABLE_PAIR(w, 4u * (blk) + r, F, LW, ENTRIES, TABLE, h, l)                                      \
    a[2 * r] = h.x; a[2 * r + 1] = h.y;                                                             \
  }

// Pb's fragment from a lane's four values (token g, columns 2c, 2c + 1; token g + 8, the same),
// the lane's own scores: the driver's B elements of lane 4g + c (coopmat_probe.cpp checks; NV
// matrices: the driver transposes them into mma's order before each MMA). Under KHR matrices
// (B_NATIVE) the fragment is in mma's order already: lane 4g + c holds (token 2c, 2c + 1, 2c + 8,
// 2c + 9; column g); (token t < 8, column n) and (t + 8, n) sit in lane 4t + n / 2, elements n % 2
// and 2 + n % 2: the lanes trade values.
#define BUILD_B(pv, pf)                                                                             \
  if (B_NATIVE == 0u) {                                                                             \
    [[unroll]] for (uint i = 0; i < 4; ++i) pf[i] = pv[i];                                          \
  } else {                                                                                          \
    const uint we = packFloat2x16(f16vec2(pv[0], pv[2])), wo = packFloat2x16(f16vec2(pv[1], pv[3])); \
    const uint sa = 8u * c + g / 2u;                                                                \
    const uint ae = subgroupShuffle(we, sa), ao = subgroupShuffle(wo, sa);                          \
    const uint be = subgroupShuffle(we, sa + 4u), bo = subgroupShuffle(wo, sa + 4u);                \
    const f16vec2 av = unpackFloat2x16((g & 1u) != 0u ? ao : ae);                                   \
    const f16vec2 bv = unpackFloat2x16((g & 1u) != 0u ? bo : be);                                   \
    pf[0] = av.x; pf[1] = bv.x; pf[2] = av.y; pf[3] = bv.y;                                         \
  }

// Rows: the fragment slot (k index) that K's dim d takes. fetch_tile gives lane 4g + c of each of
// its tokens the 16 bytes at word 16 i + 4 c, i < KQ: word 16 i + 4 c + e' fills the lane's slot
// s = 4 i + e', which BUILD_A_KROWS reads as block s / 2's register pair at k 8 (s % 2) + 2 c, + 1.
// q8_0: lane c of each token loads the 8 bytes at word 8 b + 2 c of block b: its word 8 b + 2 c + x
// holds block step kb = 2 b + x's k 2c, 2c + 1 (bytes 0, 1) and 2c + 8, 2c + 9 (bytes 2, 3).
uint k_slot(uint d) {
  if (K_Q8) {
    const uint w = d / 4u, byte = d % 4u;
    return 16u * (2u * (w / 8u) + w % 2u) + 8u * (byte % 2u) + 2u * ((w % 8u) / 2u) + byte / 2u;
  }
  if (!K_ROWS) return d;
  const uint p = d / 2u, s = 4u * (p / 16u) + p % 4u;
  return 16u * (s / 2u) + 8u * (s % 2u) + 2u * ((p % 16u) / 4u) + d % 2u;
}
// The dim of V that row j of the output fragments of block db holds. Rows: the lane's 16-byte
// words of a token are words BLOCKS g .. + BLOCKS - 1, word BLOCKS g + db (dims 2 (BLOCKS g + db),
// + 1) gives block db's rows g and g + 8.
// q8_0: lane g loads word 8 b + g of a token (block b): its bytes 2 x + h are rows g + 8 h of
// output block db = 2 b + x.
uint v_dim(uint db, uint j) {
  if (V_Q8) return 32u * (db / 2u) + 4u * (j % 8u) + 2u * (db % 2u) + j / 8u;
  return V_ROWS ? 2u * (BLOCKS * (j % 8u) + db) + j / 8u : 16u * db + j;
}

// The lane's words and norms of the tile at token tb (zeros and norms 1 in profile mode 1), K's
// and V's apart (rows load a tile's V at the top of its step and the next tile's K after its
// scores). Rows: tokens g and g + 8 of K (KQ loads each), tokens 2c, 2c + 1, 2c + 8, 2c + 9 of V
// (f16: BLOCKS words each; q8_0: KQ); q8_0's scales of tokens g and g + 8 (K_SW, V_SW words each).
uint tile_page(uint tb, uint first_page) { return split_pages[tb / PAGE_SIZE - first_page]; }
// The split's page numbers into split_pages: invocation i's first one loaded at the split's start
// (main: split_page_0), stored in the prologue, before its barrier (fill_split_pages), so that no
// subgroup waits for it before issuing its query rows' loads (a store of a load's value waits for
// the load). Long splits' further pages (past WG of them) are loaded there.
uint split_page_0 = 0u, split_page_count = 0u, split_table = 0u, split_first_page = 0u;
void fill_split_pages(uint tid) {
  if (tid < split_page_count) split_pages[tid] = split_page_0;
  for (uint p = tid + WG; p < split_page_count; p += WG) split_pages[p] = pages[split_table + split_first_page + p];
}

// The word offsets of the tile at tb: of K's (V's) region of the page, and of the tile (rows: its row).
uint k_region(uint tb, uint kvh, uint first_page) {
  return tile_page(tb, first_page) * (K_REGION * KV_HEADS) + kvh * K_REGION;
}
uint k_tile(uint kr, uint tb) { return kr + (K_ROWS ? tb % PAGE_SIZE : tb % PAGE_SIZE / TILE) * K_TILE; }
uint v_region(uint tb, uint kvh, uint first_page) {
  return tile_page(tb, first_page) * (V_REGION * KV_HEADS) + kvh * V_REGION;
}
uint v_tile(uint vr, uint tb) { return vr + (V_ROWS ? tb % PAGE_SIZE : tb % PAGE_SIZE / TILE) * V_TILE; }

// A turbo side's words of a tile that holds new tokens, as loaded (plainly), given their bits
// from the fresh words (fw_bits_k / fw_bits_v, below; fw_patch_k / fw_patch_v store the words
// that hold new bits); then NORMS (a statement, the norms likewise, nw the tile's new tokens,
// kt / vt its first word).
// (patch_k / patch_v, in the fetches' FRESH branches, after every load of the tile is issued.)
#ifdef TKV_FUSED_APPEND
uint fresh_tokens(uint tb);
void fw_bits_k(uint tb, uint nw, uint lane, out uint nb[K_LW]);
void fw_bits_v(uint tb, uint nw, uint lane, out uint nb[V_LW]);
uint fw_norms(bool is_v, uint tb, uint w, uint nw);
uint fw_patch_k(uint word, uint w, uint bits, uint mask, bool store);
uint fw_patch_v(uint word, uint w, uint bits, uint mask, bool store);
uint k_new_mask(uint i, uint nw, uint lane);
uint v_new_mask(uint i, uint nw, uint lane);
uint norm_new_mask(uint w, uint nw);
#define FW_PATCH_K(tb, kvh, first_page, kw, NORMS)                                                  \
  if (!K_ROWS && READS) {                                                                           \
    const uint nw = fresh_tokens(tb), kt = k_tile(k_region(tb, kvh, first_page), tb);               \
    uint nb[K_LW];                                                                                  \
    fw_bits_k(tb, nw, lane, nb);                                                                    \
    [[unroll]] for (uint i = 0; i < K_LW; ++i)                                                      \
      kw[i] = fw_patch_k(kt + 32u * i + lane, kw[i], nb[i], k_new_mask(i, nw, lane), true);         \
    NORMS;                                                                                          \
  }
#define FW_PATCH_V(tb, kvh, first_page, vw, NORMS)                                                  \
  if (!V_ROWS && READS) {                                                                           \
    const uint nw = fresh_tokens(tb), vt = v_tile(v_region(tb, kvh, first_page), tb);               \
    uint nb[V_LW];                                                                                  \
    fw_bits_v(tb, nw, lane, nb);                                                                    \
    [[unroll]] for (uint i = 0; i < V_LW; ++i)                                                      \
      vw[i] = fw_patch_v(vt + 32u * i + lane, vw[i], nb[i], v_new_mask(i, nw, lane), true);         \
    NORMS;                                                                                          \
  }
#else
#define FW_PATCH_K(tb, kvh, first_page, kw, NORMS)
#define FW_PATCH_V(tb, kvh, first_page, vw, NORMS)
#endif

// The lane's words of the tile at word kt alone (the columns and rows16 read their norms and
// scales each their own way).
void fetch_k_words(uint kt, uint lane, bool f, out uint kw[K_LW]) {
  const uint g = lane >> 2, c = lane & 3u;
  if (K_Q8) {
    const uint base = in_range((kt + g * K_TILE + 2u * c) / 2u, 2u);
    [[unroll]] for (uint h = 0; h < 2u; ++h)
      [[unroll]] for (uint b = 0; b < KQ; ++b) {
        const uvec2 w = READS ? K2(base + (8u * h * K_TILE + 8u * b) / 2u, f) : uvec2(0u);
        kw[2u * (KQ * h + b)] = w.x;
        kw[2u * (KQ * h + b) + 1u] = w.y;
      }
  } else if (K_ROWS) {
    const uint base = in_range((kt + g * K_TILE + 4u * c) / 4u, 4u);
    [[unroll]] for (uint h = 0; h < 2u; ++h)
      [[unroll]] for (uint i = 0; i < KQ; ++i) {
        const uvec4 w = READS ? K4(base + (8u * h * K_TILE + 16u * i) / 4u, f) : uvec4(0u);
        [[unroll]] for (uint e = 0; e < 4u; ++e) kw[4u * (KQ * h + i) + e] = w[e];
      }
  } else {
    const uint base = in_range(kt + lane, 1u);
    [[unroll]] for (uint i = 0; i < K_LW; ++i) kw[i] = READS ? K1(base + 32u * i, f) : 0u;
  }
}

void fetch_k_as(uint tb, uint lane, uint kvh, uint first_page, bool f, out uint kw[K_LW], out uint kn, out uint ks[K_SW2]) {
  const uint g = lane >> 2, slot = tb % PAGE_SIZE, kr = k_region(tb, kvh, first_page), kt = k_tile(kr, tb);
  fetch_k_words(kt, lane, f, kw);
  const uint sb = in_range(kr + PAGE_SIZE * K_TILE + (slot + g) * K_SW, 1u);
  [[unroll]] for (uint h = 0; h < 2u; ++h)
    [[unroll]] for (uint i = 0; i < K_SW; ++i)
      ks[K_SW * h + i] = READS && K_Q8 ? K1(sb + 8u * h * K_SW + i, f) : 0u;
  // (norms of tokens g and g + 8; rows have none)
  kn = READS && !K_ROWS ? K1(kt + 4u * K_BITS_ROW + lane / 4u, f) : 0x3c003c00u;
}
void patch_k(uint tb, uint lane, uint kvh, uint first_page, inout uint kw[K_LW], inout uint kn) {
  FW_PATCH_K(tb, kvh, first_page, kw, kn = fw_patch_k(kt + 4u * K_BITS_ROW + lane / 4u, kn, fw_norms(false, tb, lane / 4u, nw),
                                                       norm_new_mask(lane / 4u, nw), lane % 4u == 0u));
}
void fetch_k(uint tb, uint lane, uint kvh, uint first_page, out uint kw[K_LW], out uint kn, out uint ks[K_SW2]) {
  [[dont_flatten]] if (FRESH(tb)) {
    fetch_k_as(tb, lane, kvh, first_page, true, kw, kn, ks);
    patch_k(tb, lane, kvh, first_page, kw, kn);
  } else {
    fetch_k_as(tb, lane, kvh, first_page, false, kw, kn, ks);
  }
}

void fetch_v_words(uint vt, uint lane, bool f, out uint vw[V_LW]) {
  const uint g = lane >> 2, c = lane & 3u;
  if (V_Q8) {
    const uint base = in_range(vt + 2u * c * V_TILE + g, 1u);
    [[unroll]] for (uint u = 0; u < 4u; ++u)
      [[unroll]] for (uint b = 0; b < KQ; ++b)  // (token 2c + 8 (u >> 1) + (u & 1))
        vw[KQ * u + b] = READS ? V1(base + (8u * (u >> 1) + (u & 1u)) * V_TILE + 8u * b, f) : 0u;
  } else if (V_ROWS) {
    const uint base = in_range((vt + 2u * c * V_TILE + BLOCKS * g) / 4u, 4u);
    [[unroll]] for (uint u = 0; u < 4u; ++u)
      [[unroll]] for (uint i = 0; i < BLOCKS / 4u; ++i) {  // (token 2c + 8 (u >> 1) + (u & 1))
        const uvec4 w = READS ? V4(base + ((8u * (u >> 1) + (u & 1u)) * V_TILE + 4u * i) / 4u, f) : uvec4(0u);
        [[unroll]] for (uint e = 0; e < 4u; ++e) vw[BLOCKS * u + 4u * i + e] = w[e];
      }
  } else {
    const uint base = in_range(vt + lane, 1u);
    [[unroll]] for (uint i = 0; i < V_LW; ++i) vw[i] = READS ? V1(base + 32u * i, f) : 0u;
  }
}

void fetch_v_as(uint tb, uint lane, uint kvh, uint first_page, bool f, out uint vw[V_LW], out uint vn, out uint vs[V_SW2]) {
  const uint g = lane >> 2, slot = tb % PAGE_SIZE, vr = v_region(tb, kvh, first_page), vt = v_tile(vr, tb);
  fetch_v_words(vt, lane, f, vw);
  const uint sb = in_range(vr + PAGE_SIZE * V_TILE + (slot + g) * V_SW, 1u);
  [[unroll]] for (uint h = 0; h < 2u; ++h)
    [[unroll]] for (uint i = 0; i < V_SW; ++i)
      vs[V_SW * h + i] = READS && V_Q8 ? V1(sb + 8u * h * V_SW + i, f) : 0u;
  vn = READS && !V_ROWS ? V1(vt + 4u * V_BITS_ROW + lane / 4u, f) : 0x3c003c00u;
}
void patch_v(uint tb, uint lane, uint kvh, uint first_page, inout uint vw[V_LW], inout uint vn) {
  FW_PATCH_V(tb, kvh, first_page, vw, vn = fw_patch_v(vt + 4u * V_BITS_ROW + lane / 4u, vn, fw_norms(true, tb, lane / 4u, nw),
                                                       norm_new_mask(lane / 4u, nw), lane % 4u == 0u));
}
void fetch_v(uint tb, uint lane, uint kvh, uint first_page, out uint vw[V_LW], out uint vn, out uint vs[V_SW2]) {
  [[dont_flatten]] if (FRESH(tb)) {
    fetch_v_as(tb, lane, kvh, first_page, true, vw, vn, vs);
    patch_v(tb, lane, kvh, first_page, vw, vn);
  } else {
    fetch_v_as(tb, lane, kvh, first_page, false, vw, vn, vs);
  }
}

// Both sides' words (PREFETCH): a fresh tile's K and V loads all issued before either is patched
// (patching K first made the fresh split wait for K's loads before issuing V's: session 30, run 1,
// its last split's tiles 1.33 -> 2.62 us, turbo3's fused 4K step 7-10% -> 14-15%).
void fetch_tile(uint tb, uint lane, uint kvh, uint first_page, out uint kw[K_LW], out uint vw[V_LW], out uint kn,
                out uint vn, out uint ks[K_SW2], out uint vs[V_SW2]) {
  [[dont_flatten]] if (FRESH(tb)) {
    fetch_k_as(tb, lane, kvh, first_page, true, kw, kn, ks);
    fetch_v_as(tb, lane, kvh, first_page, true, vw, vn, vs);
    patch_k(tb, lane, kvh, first_page, kw, kn);
    patch_v(tb, lane, kvh, first_page, vw, vn);
  } else {
    fetch_k_as(tb, lane, kvh, first_page, false, kw, kn, ks);
    fetch_v_as(tb, lane, kvh, first_page, false, vw, vn, vs);
  }
}
// A tile below a subgroup's first (the tile loops run from a subgroup's last tile down): none
// holds new tokens, so its loads need no branch in the loop.
void fetch_tile_old(uint tb, uint lane, uint kvh, uint first_page, out uint kw[K_LW], out uint vw[V_LW], out uint kn,
                    out uint vn, out uint ks[K_SW2], out uint vs[V_SW2]) {
  fetch_k_as(tb, lane, kvh, first_page, false, kw, kn, ks);
  fetch_v_as(tb, lane, kvh, first_page, false, vw, vn, vs);
}

// Rows: K block kb's A fragment (tokens g, g + 8 x k 2c, 2c + 8: slots 2 kb, 2 kb + 1 of each
// token's words, k_slot).
#define BUILD_A_KROWS(kb, a)                                                                        \
  [[unroll]] for (uint r = 0; r < 4u; ++r) {                                                        \
    const f16vec2 x = unpackFloat2x16(kw[(r >> 1) * 4u * KQ + 2u * (kb) + (r & 1u)]);               \
    a[2 * r] = x.x; a[2 * r + 1] = x.y;                                                             \
  }
// Rows: V block db's A fragment (V^T: rows g, g + 8 = the halves of word db of a token, v_dim;
// k = tokens 2c + 8 (r & 1) and the next, whose halves one register pairs).
#define BUILD_A_VROWS(db, a)                                                                        \
  [[unroll]] for (uint r = 0; r < 4u; ++r) {                                                        \
    const uint w0 = vw[BLOCKS * 2u * (r & 1u) + (db)], w1 = vw[BLOCKS * (2u * (r & 1u) + 1u) + (db)]; \
    const f16vec2 x = unpackFloat2x16((r >> 1) == 0u ? (w0 & 0xffffu) | (w1 << 16) : (w0 >> 16) | (w1 & 0xffff0000u)); \
    a[2 * r] = x.x; a[2 * r + 1] = x.y;                                                             \
  }
// q8_0: the signed bytes 0 and 2 of x as f16 numbers, exactly: offset binary under an exponent
// of 1024 (0x64XX = 1024 + XX), less 1152; the xor sets the exponent and flips the sign bit at
// once (0x00XX ^ 0x6480 = 0x64 (XX ^ 0x80)). One mask and one xor. (The xor's constant comes
// through the push constant that is always 0, so that the driver holds it in a register and can
// make the mask and the xor one LOP3: with both constants immediates it emitted an and and an
// xor, session 45 run 4's listing.)
f16vec2 q8_bytes02(uint x) { return unpackFloat2x16((x & 0x00ff00ffu) ^ (0x64806480u | pc.zero)) - f16vec2(float16_t(1152.0)); }
// q8_0 V: byte p of x0 and of x1 (two tokens' words). The words' halves that hold byte p are
// joined first (bytes 0, 1 or 2, 3 of both: shared by two bytes' pairs), then q8_bytes02 (after a
// shift for odd p).
f16vec2 q8_vpair(uint x0, uint x1, uint p) {
  const uint m = p < 2u ? (x0 & 0xffffu) | (x1 << 16) : (x0 >> 16) | (x1 & 0xffff0000u);
  return q8_bytes02((p & 1u) == 0u ? m : m >> 8);
}
// q8_0 K: bytes h and h + 2 of word w (q8_bytes02, after a shift for h = 1). (A byte pair of one
// word needs no gathering when it is bytes 0, 2 or 1, 3: k_slot puts a query's dims in that
// order.)
f16vec2 q8_kpair(uint w, uint h) { return q8_bytes02(h == 0u ? w : w >> 8); }
// q8_0: K step kb's A fragment (tokens g, g + 8; word 2 b + x of the token's words, b = kb / 2,
// x = kb % 2: bytes 0, 2 at k 2c, bytes 1, 3 at k 2c + 8).
#define BUILD_A_KQ8(kb, a)                                                                          \
  [[unroll]] for (uint r = 0; r < 4u; ++r) {                                                        \
    const uint w = kw[2u * (KQ * (r >> 1) + (kb) / 2u) + (kb) % 2u];                                \
    const f16vec2 x = q8_kpair(w, r & 1u);                                                          \
    a[2 * r] = x.x; a[2 * r + 1] = x.y;                                                             \
  }
// q8_0: V block db's A fragment (rows g + 8 h: byte 2 (db % 2) + h of word b = db / 2 of a token;
// k = tokens 2c + 8 (r & 1) and the next).
#define BUILD_A_VQ8(db, a)                                                                          \
  [[unroll]] for (uint r = 0; r < 4u; ++r) {                                                        \
    const uint byte = 2u * ((db) % 2u) + (r >> 1);                                                  \
    const f16vec2 x = q8_vpair(vw[KQ * 2u * (r & 1u) + (db) / 2u], vw[KQ * (2u * (r & 1u) + 1u) + (db) / 2u], byte); \
    a[2 * r] = x.x; a[2 * r + 1] = x.y;                                                             \
  }
// An exact side's fragment, from rows or from a table.
#define BUILD_A_K_EXACT(kb, a)                                                                      \
  if (K_Q8) {                                                                                       \
    BUILD_A_KQ8(kb, a)                                                                              \
  } else if (K_ROWS) {                                                                              \
    BUILD_A_KROWS(kb, a)                                                                            \
  } else {                                                                                          \
    BUILD_A_EXACT(kw, kb, K_F, K_LW, K_ENTRIES, TAB_K, a)                                           \
  }
#define BUILD_A_V_EXACT(db, a)                                                                      \
  if (V_Q8) {                                                                                       \
    BUILD_A_VQ8(db, a)                                                                              \
  } else if (V_ROWS) {                                                                              \
    BUILD_A_VROWS(db, a)                                                                            \
  } else {                                                                                          \
    BUILD_A_EXACT(vw, db, V_F, V_LW, V_ENTRIES, TAB_V, a)                                           \
  }

#define R_GET(j, d) F_GET((j) * DIM + (d))
#define R_SET(j, d, v) F_SET((j) * DIM + (d), v)
TKV_DEFINE_HADAMARD(hadamard_rows, R_GET, R_SET)

#include "query.glsl"
#include "split_merge.glsl"
#include "timeline.glsl"
TKV_DEFINE_MERGE_SPLITS(merge_splits, R_SET)
TKV_DEFINE_FINISH_ROWS(finish_rows, R_GET, R_SET, hadamard_rows)
#ifdef TKV_FUSED_APPEND
#include "numeric.glsl"
#define QR_MIN_SUBGROUP 32u
uint qr_word(uint i) { return region[i / 2u][i % 2u]; }
void qr_word_set(uint i, uint v) { region[i / 2u][i % 2u] = v; }
// Element i of the quantizer's row or codes (copy i / 256, element i % 256 < DIM) at its word
// after the tables: the values of both copies, then their codes, then their scales.
const uint QR_BASE = 2u * REGION_T;
#define QR_AT(i) (((i) >> 8) * DIM + ((i) & 255u))
#define QR_X_GET(i) uintBitsToFloat(qr_word(QR_BASE + QR_AT(i)))
#define QR_X_SET(i, v) qr_word_set(QR_BASE + QR_AT(i), floatBitsToUint(v))
#define QR_CODE_GET(i) qr_word(QR_BASE + QR_COPIES * DIM + QR_AT(i))
#define QR_CODE_SET(i, v) qr_word_set(QR_BASE + QR_COPIES * DIM + QR_AT(i), v)
#define QR_SCALE_GET(i) qr_word(QR_BASE + 2u * QR_COPIES * DIM + (i))
#define QR_SCALE_SET(i, v) qr_word_set(QR_BASE + 2u * QR_COPIES * DIM + (i), v)
// The fresh words (above) of new token i's row (its place among the call's new ones) of a side.
uint fw_row(bool is_v, uint i) { return QR_BASE + QR_COPIES * QR_COPY_WORDS + (is_v ? FW_K : 0u) + i * FW_ROW; }
// The pool writes of the quantizer's stores (qr_store: row sides alone; a turbo side's rows go to
// the fresh words, fw_write).
void qr_pool_and(bool is_v, uint word, uint bits) {
  if (is_v) atomicAnd(v_rw[word], bits);
  else atomicAnd(k_rw[word], bits);
}
void qr_pool_or(bool is_v, uint word, uint bits) {
  if (is_v) atomicOr(v_rw[word], bits);
  else atomicOr(k_rw[word], bits);
}
// Which of the 16 tokens of the tile at tb are new (bit p: token tb + p).
uint fresh_tokens(uint tb) {
  const uint lo = fresh_from > tb ? min(fresh_from - tb, 16u) : 0u;
  const uint hi = fresh_len > tb ? min(fresh_len - tb, 16u) : 0u;
  return hi > lo ? ((1u << hi) - 1u) & ~((1u << lo) - 1u) : 0u;
}
// The part of a field's bits fm (at bit lo of a lane's words) in word i (compile-time shifts).
uint field_part(uint fm, uint lo, uint i) { return lo >= 32u * i ? fm << (lo - 32u * i) : fm >> (32u * i - lo); }
bool field_in(uint lo, uint F, uint i) { return lo < 32u * i + 32u && lo + F > 32u * i; }
// The bits of K word i of a lane that belong to new tokens (nw): its fields 4 blk + 2 h + e are
// token g + 8 h's (qr_store_tile), F bits each.
uint k_new_mask(uint i, uint nw, uint lane) {
  const uint g = lane >> 2;
  const bool n0 = ((nw >> g) & 1u) != 0u, n1 = ((nw >> (g + 8u)) & 1u) != 0u;
  uint m = 0u;
  [[unroll]] for (uint j = 0; j < 4u * BLOCKS; ++j)
    if (field_in(K_F * j, K_F, i) && (((j >> 1) & 1u) == 0u ? n0 : n1)) m |= field_part((1u << K_F) - 1u, K_F * j, i);
  return m;
}
// V word i of lane 4 li + q: fields 4 blk + 2 x + h hold tokens 2q + e + 8h as element e (its
// magnitude bits and its negative bit, qr_store_tile).
uint v_new_mask(uint i, uint nw, uint lane) {
  const uint q = lane & 3u, mb = V_MB;
  uint m = 0u;
  [[unroll]] for (uint j = 0; j < 4u * BLOCKS; ++j)
    [[unroll]] for (uint e = 0; e < 2u; ++e)
      if (field_in(V_F * j, V_F, i) && ((nw >> (2u * q + e + 8u * (j & 1u))) & 1u) != 0u)
        m |= field_part((((1u << mb) - 1u) << (mb * e)) | (1u << (2u * mb + e)), V_F * j, i);
  return m;
}
// A norm word w holds tokens w (low half) and w + 8 (high half).
uint norm_new_mask(uint w, uint nw) {
  return (((nw >> w) & 1u) != 0u ? 0xffffu : 0u) | (((nw >> (w + 8u)) & 1u) != 0u ? 0xffff0000u : 0u);
}
// The new tokens' bits (nw: which tokens of the tile at tb are new) in the lane's K words: lane
// 4 g + li holds tokens g and g + 8 as fields 4 blk + 2 t + h (token g + 8 t; K_F bits: its
// elements 16 blk + 8 h + 2 li and the next), from byte blk / 2 of their row's fresh word
// 8 (blk % 2) + 4 h + li. (The fields' places are known when compiled: shifts and ORs.)
void fw_bits_k(uint tb, uint nw, uint lane, out uint nb[K_LW]) {
  const uint g = lane >> 2, li = lane & 3u;
  [[unroll]] for (uint i = 0; i < K_LW; ++i) nb[i] = 0u;
  [[unroll]] for (uint t = 0; t < 2u; ++t)
    if (((nw >> (g + 8u * t)) & 1u) != 0u) {
      const uint row = fw_row(false, tb + g + 8u * t - fresh_from);
      uint w[4];  // (2 (blk % 2) + h)
      [[unroll]] for (uint k = 0; k < 4u; ++k) w[k] = qr_word(row + 8u * (k >> 1) + 4u * (k & 1u) + li);
      [[unroll]] for (uint blk = 0; blk < BLOCKS; ++blk)
        [[unroll]] for (uint h = 0; h < 2u; ++h) {
          const uint f = (w[2u * (blk % 2u) + h] >> (8u * (blk / 2u))) & ((1u << K_F) - 1u), at = K_F * (4u * blk + 2u * t + h);
          [[unroll]] for (uint i = 0; i < K_LW; ++i)
            if (field_in(at, K_F, i)) nb[i] |= field_part(f, at, i);
        }
    }
}
// In the lane's V words: lane 4 li + q holds tokens 2q + e + 8 t as element e of fields
// 4 blk + 2 x + t (V_F bits: two magnitudes of V_MB bits, then two negative bits; dim
// 16 blk + 8 x + li), from nibble blk / 2 of their row's fresh word 16 (blk % 2) + 8 x + li.
void fw_bits_v(uint tb, uint nw, uint lane, out uint nb[V_LW]) {
  const uint li = lane >> 2, q = lane & 3u, mb = V_MB;
  [[unroll]] for (uint i = 0; i < V_LW; ++i) nb[i] = 0u;
  [[unroll]] for (uint t = 0; t < 2u; ++t)
    [[unroll]] for (uint e = 0; e < 2u; ++e)
      if (((nw >> (2u * q + e + 8u * t)) & 1u) != 0u) {
        const uint row = fw_row(true, tb + 2u * q + e + 8u * t - fresh_from);
        uint w[4];  // (2 (blk % 2) + x)
        [[unroll]] for (uint k = 0; k < 4u; ++k) w[k] = qr_word(row + 16u * (k >> 1) + 8u * (k & 1u) + li);
        [[unroll]] for (uint blk = 0; blk < BLOCKS; ++blk)
          [[unroll]] for (uint x = 0; x < 2u; ++x) {
            const uint ms = (w[2u * (blk % 2u) + x] >> (4u * (blk / 2u))) & 0xfu, at = V_F * (4u * blk + 2u * x + t);
            const uint f = ((ms & ((1u << mb) - 1u)) << (mb * e)) | ((ms >> mb) << (2u * mb + e));
            [[unroll]] for (uint i = 0; i < V_LW; ++i)
              if (field_in(at, V_F, i)) nb[i] |= field_part(f, at, i);
          }
      }
}
// Norm word w of the tile at tb: the new ones of its tokens w (low half) and w + 8 (high half).
uint fw_norms(bool is_v, uint tb, uint w, uint nw) {
  uint n = 0u;
  [[unroll]] for (uint h = 0; h < 2u; ++h)
    if (((nw >> (w + 8u * h)) & 1u) != 0u) n |= (qr_word(fw_row(is_v, tb + w + 8u * h - fresh_from) + 32u) & 0xffffu) << (16u * h);
  return n;
}
// Word w of a tile that holds new tokens, as loaded from pool word `word`, with their bits (under
// mask) in place; stored whole if it holds any (`store`: one lane of those that loaded it). Every
// old token's bits are as loaded (nothing writes them during the call), every new one's from the
// fresh words: the row chunks' splits of one range store the same value, and one that loads the
// word after another stored it patches the same bits again.
uint fw_patch_k(uint word, uint w, uint bits, uint mask, bool store) {
  w = (w & ~mask) | bits;
  if (store && mask != 0u) k_rw[word] = w;
  return w;
}
uint fw_patch_v(uint word, uint w, uint bits, uint mask, bool store) {
  w = (w & ~mask) | bits;
  if (store && mask != 0u) v_rw[word] = w;
  return w;
}
// Stores as atomics too (ones set, then zeros cleared, as qr_store_field: the row chunks' writers
// of the same values never undo each other): relaxed atomics are what a release barrier orders
// under the Vulkan memory model, where plain stores stay private to their invocation, and unlike
// stores through coherent bindings they need not wait for each other (session 28, run 3).
void qr_pool_store(bool is_v, uint word, uint value) {
  qr_pool_or(is_v, word, value);
  qr_pool_and(is_v, word, value);
}
void qr_pool_store16(bool is_v, uint index, uint value) {
  const uint sh = 16u * (index & 1u), v = (value & 0xffffu) << sh;
  qr_pool_or(is_v, index >> 1, v);
  qr_pool_and(is_v, index >> 1, v | ~(0xffffu << sh));
}
#include "new_rows.glsl"
// A turbo row quantized in the calling subgroup's registers (quantize_new_row_regs: code[k] lane
// p's element p + 32 k, v[0] its norm's f16 bits) as new token i's fresh words: V, each lane its
// elements' nibbles; K, lane p < 16 its pair fields, from lanes 2p and 2p + 1's nibbles (two
// shuffles); lane 0 the norm. (Before, the codes went through the quantizer's copy in shared memory
// and a subgroup barrier, then a word from dependent shared loads under branches: in session
// 33's SASS of the fused turbo2 pipeline, ~200 of the K quantizer's ~735 instructions, one chain.)
void fw_write(RowShape s, uint p, uint i, uint code[QR_REGS], float v[QR_REGS]) {
  const uint bits = qr_index_bits(s.type), mb = bits - 1u, row = fw_row(s.is_v, i);
  uint word = 0u;  // V: nibble k, element p + 32 k's magnitude, then its negative bit
  [[unroll]] for (uint k = 0; k < DIM / 32u; ++k) {
    const uvec2 a = mag_sign(code[k], bits);
    word |= (a.x | (a.y << mb)) << (4u * k);
  }
  if (!s.is_v) {  // K: byte k, the pair 2p + 32 k, 2p + 1 + 32 k: two magnitudes, two negative bits
    const uint e0 = subgroupShuffle(word, (2u * p) & 31u), e1 = subgroupShuffle(word, (2u * p + 1u) & 31u);
    const uint mm = (1u << mb) - 1u;
    word = 0u;
    [[unroll]] for (uint k = 0; k < DIM / 32u; ++k) {
      const uint a = (e0 >> (4u * k)) & 0xfu, b = (e1 >> (4u * k)) & 0xfu;
      word |= ((a & mm) | ((b & mm) << mb) | ((a >> mb) << (2u * mb)) | ((b >> mb) << (2u * mb + 1u))) << (8u * k);
    }
    if (p >= 16u) word = 0u;
  }
  qr_word_set(row + p, word);
  if (p == 0u) qr_word_set(row + 32u, floatBitsToUint(v[0]));
}
RowShape row_shape(bool is_v) {
  return is_v ? RowShape(V_TYPE, DIM, V_Q8 ? KQ : V_ROWS ? 0u : 1u, V_Q8 ? 32u : DIM, V_BITS_ROW, PAGE_SIZE, KV_HEADS, true)
              : RowShape(K_TYPE, DIM, K_Q8 ? KQ : K_ROWS ? 0u : 1u, K_Q8 ? 32u : DIM, K_BITS_ROW, PAGE_SIZE, KV_HEADS, false);
}

// The fused append in the splits: the call's length `len` counts the M new tokens, at [old, len),
// old = len - M, and the splits cover [0, len) as a decode call over the appended cache would.
// A split whose range [start, end) holds new tokens quantizes their K and V rows during its
// prologue (QR_FIRST below), and its tile loop attends to them with the old ones: a turbo side's
// from the fresh words (their tile's first fetch patched, and stored from there), a row
// side's stored at once and read back (those rows through coherent views, FRESH; the writes made
// visible around the prologue's barrier). Every row chunk's split of that range stores the same
// rows: every write is an atomic that sets its ones before clearing its zeros, so writers of the
// same bits never undo each other (qr_pool_store; a turbo side's words are stored
// whole, the same value by each, fw_patch_k). No other split reads
// these tiles: a split's range is whole tiles. (It replaces the tail
// workgroups of the scalar kernel's fused append, append_tail.glsl, which took slots beside the
// splits: H100, session 27, the fused step at 4097-4160 old tokens planned 22 three-step splits
// instead of 33 two-step ones, 6-9% of the decode step against 0-2.6% at 4032-4095.)
bool stored_rows = false;  // this invocation stored new rows (split_append): to be made visible

// Subgroups QR_FIRST .. QR_FIRST + QR_COPIES - 1 quantize and store the split's new rows: where
// six subgroups take up to 4 rows, 4 and 5, which hold no query rows; else 0 .., beside their own
// query rows (but in columns_split's pair form, where 2 and 3 take them), whose loads the split
// function issues before this (query_load) and uses after (query_finish), so that the two rows'
// loads are in flight together. (Session 28, run 4, before the turbo overlay:
// quantizers on subgroups 2 and 3 while 0 and 1 took two query rows each made that split's
// prologue 3.6 us, set by the rows; a row costs ~0.8 us to quantize and store through the plain
// bindings.)
const uint QR_FIRST = ROWS16 == 0u && !WIDE && SUBGROUPS >= 6u ? 4u : 0u;
void split_append(uint b, uint kvh, uint start, uint end, uint len, uint tid) {
  const uint old = len - M, first = max(start, old), n = end - first;  // (end > old: n >= 1)
  // (sg through a subgroup reduction: the driver then knows the branches on it uniform in each
  // subgroup and issues the quantizer's shuffles under them plainly; append_tail.glsl)
  const uint sg = subgroupMin(tid / 32u), lane = tid % 32u;
  // Subgroup QR_FIRST + i: rows i, i + QR_COPIES, ... (K_0 .. K_n-1, then V_0 .. V_n-1): a row
  // side's quantized into copy i, then stored in the pool (its lanes read each other's codes: a
  // subgroup barrier; no workgroup one); a turbo side's in registers, then packed as its fresh
  // words (fw_write).
  if (sg < QR_FIRST || sg >= QR_FIRST + QR_COPIES) return;
  const QrWork w = QrWork(sg - QR_FIRST, lane, 32u);
  for (uint r = w.copy; r < 2u * n; r += QR_COPIES) {
    const RowShape rs = row_shape(r >= n);
    const uint pos = first + r % n;
    if (rs.is_v ? V_ROWS : K_ROWS) {
      quantize_new_row(rs, w, b, kvh, pos - old);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      qr_store(rs, w, pages[fresh_table + pos / PAGE_SIZE], kvh, pos % PAGE_SIZE);
      stored_rows = true;  // (rows are read back: released below)
      subgroupMemoryBarrierShared();
      subgroupBarrier();  // (the copy is rewritten next)
    } else {
      uint code[QR_REGS];
      float c[QR_REGS], v[QR_REGS];
      quantize_new_row_regs(rs, b, kvh, pos - old, code, c, v);
      fw_write(rs, lane, pos - old, code, v);
    }
  }
  TL_STAMP(6u);  // (turboprof timeline: the new rows' time, in the tails' "rows" column)
}
#endif

// Before the prologue's barrier: the new rows' stores (split_append) done, so that every
// subgroup's tile loop reads them back.
#ifdef TKV_FUSED_APPEND
#define STORES_VISIBLE() if (stored_rows) memoryBarrierBuffer()
// (after it: GLSL's barrier orders shared memory only; this acquires the buffers' writes, in the
// split that reads them alone: a memory barrier waits for the invocation's loads in flight, in
// every split the first tile's)
#define STORES_SEEN() if (fresh_split && (K_ROWS || V_ROWS)) memoryBarrierBuffer()
// The split's new rows, if it holds any (split_append), between its query rows' loads and the rest.
#define FRESH_ROWS(b, kvh, start, end, len, tid) if (fresh_split) split_append(b, kvh, start, end, len, tid)
#else
#define STORES_VISIBLE()
#define STORES_SEEN()
#define FRESH_ROWS(b, kvh, start, end, len, tid)
#endif

// Query row j of the workgroup's rows into the calling subgroup's registers, scaled and rotated
// as the cache's K rows were: dim lane + 32 i in x[i], zeros past the rows. Returns the
// subgroup's largest |x|.
// (In two parts: query_load, then query_finish, so that other loads can be in flight with its.)
void query_load(uint b, uint kvh, uint row_chunk, uint j, uint lane, out float x[4]) {
  const uint QV = DIM / 32u;
  const uint gr = row_chunk * ROWS + j;
  const bool live = j < ROWS && gr < RM;
  const uint qbase = pc.q_offset + ((b * M + gr / GQA) * Q_HEADS + kvh * GQA + gr % GQA) * HEAD_DIM;
  [[unroll]] for (uint i = 0; i < 4u; ++i) {
    const uint d = lane + 32u * i;
    x[i] = i < QV && live && d < HEAD_DIM ? load_q(qbase + d) * pc.scale * (K_ROWS ? 1.0 : sign1(d)) : 0.0;
  }
}
float query_finish(uint lane, inout float x[4]) {
  const uint QV = DIM / 32u;
  if (!K_ROWS) {
    TKV_HADAMARD_REGISTERS(x, 4u, QV, DIM, lane, 32u)
  }
  float amax = 0.0;
  [[unroll]] for (uint i = 0; i < 4u; ++i)
    if (i < QV) {
      if (!K_ROWS) x[i] *= sign2(lane + 32u * i) * inv_sqrt_group(DIM);
      amax = max(amax, abs(x[i]));
    }
  return subgroupMax(amax);
}

// The power of two that puts the query rows' largest |q| (the maxima of subgroups 0..n-1, those
// that hold query rows: 4, or rows16's 8) in [2^11, 2^12).
float query_scale(uint n) {
  float qmax = max(max(qmax_sh[0], qmax_sh[1]), max(qmax_sh[2], qmax_sh[3]));
  if (n > 4u) qmax = max(qmax, max(max(qmax_sh[4], qmax_sh[5]), max(qmax_sh[6], qmax_sh[7])));
  int qexp;
  frexp(qmax, qexp);  // max |q| < 2^qexp
  return qmax == 0.0 ? 1.0 : exp2(float(12 - clamp(qexp, -100, 100)));
}

// Row j of the workgroup's: whether it is one of the group's, and the tokens it attends to
// [lo_tok, hi_tok] (its own position, and the window).
void row_range(uint row_chunk, uint j, uint len, out bool live, out uint hi_tok, out uint lo_tok) {
  const uint gr = row_chunk * ROWS + j;
  live = j < ROWS && gr < RM;
  hi_tok = len - M + (live ? gr / GQA : 0u);
  lo_tok = (pc.window > 0 && hi_tok + 1 > pc.window) ? hi_tok + 1 - pc.window : 0u;
}

// The tables (the region holds nothing else yet), invocation tid's share.
void build_tables(uint tid) {
  for (uint i = tid; i < K_ENTRIES * 16u; i += WG)
    region[TAB_K + i] = table_entry(K_TYPE, K_MB, i / 16u, K_CS, K_EXACT);
  for (uint i = tid; i < V_OWN_ENTRIES * 16u; i += WG)
    region[TAB_V + i] = table_entry(V_TYPE, V_MB, i / 16u, V_CS, V_EXACT);
}

// ROWS16: the lane's K words of the tile at tb (fetch_k's), and what the scores' columns need:
// the norms of tokens 2c, 2c + 8 (kn.x) and 2c + 1, 2c + 9 (kn.y) (a tile's norm word w holds
// tokens w and w + 8; rows: 1), q8_0's scales of token 8h + 2c + e at (2h + e) x K_SW.
const uint K_SW4 = K_Q8 ? 4u * K_SW : 1u, V_SW4 = V_Q8 ? 4u * V_SW : 1u;
void fetch_k16_as(uint tb, uint lane, uint kvh, uint first_page, bool f, out uint kw[K_LW], out uvec2 kn, out uint ks[K_SW4]) {
  const uint slot = tb % PAGE_SIZE, c = lane & 3u, kr = k_region(tb, kvh, first_page), kt = k_tile(kr, tb);
  fetch_k_words(kt, lane, f, kw);
  kn = READS && !K_ROWS ? uvec2(K1(kt + 4u * K_BITS_ROW + 2u * c, f), K1(kt + 4u * K_BITS_ROW + 2u * c + 1u, f))
                        : uvec2(0x3c003c00u);
  const uint sb = in_range(kr + PAGE_SIZE * K_TILE + (slot + 2u * c) * K_SW, 1u);
  [[unroll]] for (uint t = 0; t < 4u; ++t)
    [[unroll]] for (uint i = 0; i < K_SW; ++i)
      if (K_Q8) ks[t * K_SW + i] = READS ? K1(sb + (8u * (t >> 1) + (t & 1u)) * K_SW + i, f) : 0u;
}
void patch_k16(uint tb, uint lane, uint kvh, uint first_page, inout uint kw[K_LW], inout uvec2 kn) {
  const uint c = lane & 3u, n = 4u * K_BITS_ROW + 2u * c;  // (norm words 2c, 2c + 1: lanes c, c + 4, ..; c's stores)
  FW_PATCH_K(tb, kvh, first_page, kw, kn = uvec2(fw_patch_k(kt + n, kn.x, fw_norms(false, tb, 2u * c, nw), norm_new_mask(2u * c, nw), lane < 4u),
                                                 fw_patch_k(kt + n + 1u, kn.y, fw_norms(false, tb, 2u * c + 1u, nw), norm_new_mask(2u * c + 1u, nw), lane < 4u)));
}
void fetch_k16(uint tb, uint lane, uint kvh, uint first_page, out uint kw[K_LW], out uvec2 kn, out uint ks[K_SW4]) {
  [[dont_flatten]] if (FRESH(tb)) {
    fetch_k16_as(tb, lane, kvh, first_page, true, kw, kn, ks);
    patch_k16(tb, lane, kvh, first_page, kw, kn);
  } else {
    fetch_k16_as(tb, lane, kvh, first_page, false, kw, kn, ks);
  }
}
void fetch_v16_as(uint tb, uint lane, uint kvh, uint first_page, bool f, out uint vw[V_LW], out uvec2 vn, out uint vs[V_SW4]) {
  const uint slot = tb % PAGE_SIZE, c = lane & 3u, vr = v_region(tb, kvh, first_page), vt = v_tile(vr, tb);
  fetch_v_words(vt, lane, f, vw);
  vn = READS && !V_ROWS ? uvec2(V1(vt + 4u * V_BITS_ROW + 2u * c, f), V1(vt + 4u * V_BITS_ROW + 2u * c + 1u, f))
                        : uvec2(0x3c003c00u);
  const uint sb = in_range(vr + PAGE_SIZE * V_TILE + (slot + 2u * c) * V_SW, 1u);
  [[unroll]] for (uint t = 0; t < 4u; ++t)
    [[unroll]] for (uint i = 0; i < V_SW; ++i)
      if (V_Q8) vs[t * V_SW + i] = READS ? V1(sb + (8u * (t >> 1) + (t & 1u)) * V_SW + i, f) : 0u;
}
void patch_v16(uint tb, uint lane, uint kvh, uint first_page, inout uint vw[V_LW], inout uvec2 vn) {
  const uint c = lane & 3u, n = 4u * V_BITS_ROW + 2u * c;
  FW_PATCH_V(tb, kvh, first_page, vw, vn = uvec2(fw_patch_v(vt + n, vn.x, fw_norms(true, tb, 2u * c, nw), norm_new_mask(2u * c, nw), lane < 4u),
                                                 fw_patch_v(vt + n + 1u, vn.y, fw_norms(true, tb, 2u * c + 1u, nw), norm_new_mask(2u * c + 1u, nw), lane < 4u)));
}
void fetch_v16(uint tb, uint lane, uint kvh, uint first_page, out uint vw[V_LW], out uvec2 vn, out uint vs[V_SW4]) {
  [[dont_flatten]] if (FRESH(tb)) {
    fetch_v16_as(tb, lane, kvh, first_page, true, vw, vn, vs);
    patch_v16(tb, lane, kvh, first_page, vw, vn);
  } else {
    fetch_v16_as(tb, lane, kvh, first_page, false, vw, vn, vs);
  }
}
// Both sides' words (PREFETCH; as fetch_tile: every load issued before either side is patched).
void fetch_tile16(uint tb, uint lane, uint kvh, uint first_page, out uint kw[K_LW], out uvec2 kn, out uint ks[K_SW4],
                  out uint vw[V_LW], out uvec2 vn, out uint vs[V_SW4]) {
  [[dont_flatten]] if (FRESH(tb)) {
    fetch_k16_as(tb, lane, kvh, first_page, true, kw, kn, ks);
    fetch_v16_as(tb, lane, kvh, first_page, true, vw, vn, vs);
    patch_k16(tb, lane, kvh, first_page, kw, kn);
    patch_v16(tb, lane, kvh, first_page, vw, vn);
  } else {
    fetch_k16_as(tb, lane, kvh, first_page, false, kw, kn, ks);
    fetch_v16_as(tb, lane, kvh, first_page, false, vw, vn, vs);
  }
}

// A tile loop's step u: the words of tile buffer u (kwb[u] ...) as kw, vw, kn, vn, ks, vs (norm
// words of type NT, KS and VS scale words), by name (rows16_split, columns_split).
#define TAKE_TILE(u, NT, KS, VS)                                                                    \
  uint kw[K_LW], vw[V_LW], ks[KS], vs[VS];                                                          \
  NT kn = knb[u], vn = vnb[u];                                                                      \
  [[unroll]] for (uint i = 0; i < K_LW; ++i) kw[i] = kwb[u][i];                                     \
  [[unroll]] for (uint i = 0; i < V_LW; ++i) vw[i] = vwb[u][i];                                     \
  [[unroll]] for (uint i = 0; i < KS; ++i) ks[i] = ksb[u][i];                                       \
  [[unroll]] for (uint i = 0; i < VS; ++i) vs[i] = vsb[u][i];

// ROWS16: pair r (0..3) of the columns' A fragment of K step kb (token g + 8 (r >> 1), k slots
// 2c + 8 (r & 1), + 1) as (hi, lo) halves: from the tables, rows or q8_0 bytes (lo 0).
#define K_PAIR16(kb, r, hv, lv)                                                                     \
  f16vec2 hv, lv = f16vec2(0.0);                                                                    \
  if (K_Q8) {                                                                                       \
    const uint w_ = kw[2u * (KQ * ((r) >> 1) + (kb) / 2u) + (kb) % 2u];                             \
    hv = q8_kpair(w_, (r) & 1u);                                                                    \
  } else if (K_ROWS) {                                                                              \
    hv = unpackFloat2x16(kw[((r) >> 1) * 4u * KQ + 2u * (kb) + ((r) & 1u)]);                        \
  } else {                                                                                          \
    TABLE_PAIR(kw, 4u * (kb) + (r), K_F, K_LW, K_ENTRIES, TAB_K, t_h, t_l)                          \
    hv = t_h;                                                                                       \
    lv = t_l;                                                                                       \
  }
// The same for V block db (dim row g + 8 (r >> 1), tokens 2c + 8 (r & 1), + 1).
#define V_PAIR16(db, r, hv, lv)                                                                     \
  f16vec2 hv, lv = f16vec2(0.0);                                                                    \
  if (V_Q8) {                                                                                       \
    const uint byte_ = 2u * ((db) % 2u) + ((r) >> 1);                                               \
    hv = q8_vpair(vw[KQ * 2u * ((r) & 1u) + (db) / 2u], vw[KQ * (2u * ((r) & 1u) + 1u) + (db) / 2u], byte_); \
  } else if (V_ROWS) {                                                                              \
    const uint w0_ = vw[BLOCKS * 2u * ((r) & 1u) + (db)], w1_ = vw[BLOCKS * (2u * ((r) & 1u) + 1u) + (db)]; \
    hv = unpackFloat2x16(((r) >> 1) == 0u ? (w0_ & 0xffffu) | (w1_ << 16) : (w0_ >> 16) | (w1_ & 0xffff0000u)); \
  } else {                                                                                          \
    TABLE_PAIR(vw, 4u * (db) + (r), V_F, V_LW, V_ENTRIES, TAB_V, t_h, t_l)                          \
    hv = t_h;                                                                                       \
    lv = t_l;                                                                                       \
  }

// ROWS16 (the header): the split's query rows, tables and tiles, up to the subgroups' states in
// osh and msh. Every subgroup takes Q's fragments from frag, where the subgroups that hold query
// rows put them (below); the lane's rows are g and g + 8 (k = 0, 1), its
// scores sc[4 h + 2 k + e] those of token 8 h + 2 c + e of the tile. (Rows types: a tile's V at
// the top of its step, the next tile's K after the scores, as in the columns.)
void rows16_split(uint b, uint kvh, uint row_chunk, uint start, uint end, uint len, uint first_page, uint tid, uint sg,
                  uint lane) {
  const uint g = lane >> 2, c = lane & 3u, lane8 = (lane % 16u) * 8u;
  const uint QV = DIM / 32u;
  // The 16 rows' queries: subgroup sg holds rows sg + QSG i (4 rows each in 4 subgroups, 2 each
  // in 8: the prologue's serial work per subgroup halved).
  const uint QSG = SUBGROUPS >= 8u ? 8u : 4u, QPER = 16u / QSG;
  const bool q_rows = sg < QSG;
  float qv[4][4];
  float amax = 0.0;
  if (q_rows)
    [[unroll]] for (uint i = 0; i < 4u; ++i)
      if (i < QPER) query_load(b, kvh, row_chunk, sg + QSG * i, lane, qv[i]);
  FRESH_ROWS(b, kvh, start, end, len, tid);
  if (q_rows)
    [[unroll]] for (uint i = 0; i < 4u; ++i)
      if (i < QPER) amax = max(amax, query_finish(lane, qv[i]));
  if (lane == 0u && q_rows) qmax_sh[sg] = amax;
  build_tables(tid);
  fill_split_pages(tid);
  STORES_VISIBLE();
  barrier();
  STORES_SEEN();
  const float qs = query_scale(QSG);
  const float unscale = 1.0 / (K_CS * qs);
  // Q's rows, row-major (dims in K's fragment slots) in frag: their hi halves, loaded as qa, then
  // their lo halves (4 KB, not 8: two workgroups an SM hold 16 rows' state under the driver's
  // shared memory; session 21).
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qa[BLOCKS], qla[BLOCKS];
  [[unroll]] for (uint lo = 0; lo < 2u; ++lo) {
    if (lo == 1u) barrier();  // every subgroup has its hi halves
    [[unroll]] for (uint i = 0; i < 4u; ++i)
      [[unroll]] for (uint u = 0; u < 4u; ++u)
        if (q_rows && i < QPER && u < QV) {
          const f16vec2 h = split_hilo(qv[i][u] * qs);
          frag[(sg + QSG * i) * DIM + k_slot(lane + 32u * u)] = lo == 0u ? h.x : h.y;
        }
    barrier();
    [[unroll]] for (uint kb = 0; kb < BLOCKS; ++kb) {
      if (lo == 0u) coopMatLoadNV(qa[kb], frag, kb * 16u, DIM, false);
      else coopMatLoadNV(qla[kb], frag, kb * 16u, DIM, false);
    }
  }
  TL_STAMP(1u);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> acc[2 * BLOCKS];
  [[unroll]] for (uint nb = 0; nb < 2u * BLOCKS; ++nb) acc[nb] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);
  float m_run[2] = float[](NEG_INF, NEG_INF), l_run[2] = float[](0.0, 0.0);
  uint hi_tok[2], lo_tok[2];
  bool row_live[2];
  [[unroll]] for (uint k = 0; k < 2; ++k) row_range(row_chunk, g + 8u * k, len, row_live[k], hi_tok[k], lo_tok[k]);
  // The tiles' words in UNROLL buffers, as in columns_split: with PREFETCH two steps an
  // iteration, the current tile's words in buffer u and the next one's in the other. (H200,
  // session 49 run 2b: turbo3 m 8 R230 -> R245, 32K 64.1 -> 62.1 us, 8K 29.7 -> 28.8; turbo2 /
  // turbo4 m 8 32K -3% / -1.4%, 8K even; turbo3 m 3 32K 41.0 -> 39.4.)
  const uint UNROLL = PREFETCH ? 2u : 1u;
  uint kwb[UNROLL][K_LW], vwb[UNROLL][V_LW], ksb[UNROLL][K_SW4], vsb[UNROLL][V_SW4];
  uvec2 knb[UNROLL], vnb[UNROLL];
  // The subgroup's tiles (TILES_DOWN: from its last down; only the first fetch may hold new tokens).
  const uint tb0 = start + sg * TILE, tiles = tb0 < end ? (end - 1u - tb0) / STEP + 1u : 0u;
  uint tb = TILES_DOWN ? tb0 + (tiles > 0u ? tiles - 1u : 0u) * STEP : tb0;
  if (tiles > 0u) {
    if (PREFETCH) fetch_tile16(tb, lane, kvh, first_page, kwb[0], knb[0], ksb[0], vwb[0], vnb[0], vsb[0]);
    else fetch_k16(tb, lane, kvh, first_page, kwb[0], knb[0], ksb[0]);
  }

  for (uint left = tiles; left > 0u;)  // (UNROLL steps an iteration, u the buffer of this one)
  [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
    if (u > 0u && left == 0u) break;
    const uint nx = (u + 1u) % UNROLL;
    TAKE_TILE(u, uvec2, K_SW4, V_SW4)
    if (PREFETCH && left > 1u) {
      fetch_k16_as(next_tile(tb), lane, kvh, first_page, false, kwb[nx], knb[nx], ksb[nx]);
      fetch_v16_as(next_tile(tb), lane, kvh, first_page, false, vwb[nx], vnb[nx], vsb[nx]);
    }
    if (!PREFETCH) fetch_v16(tb, lane, kvh, first_page, vw, vn, vs);

    // Scores, per token half h: B = K's values of tokens 8h.. (hi, lo) of each 16-dim step (q8_0:
    // one accumulator per 32-dim block and half, s[2 (kb / 2) + h], scaled afterwards; else two
    // per half, s[2 (kb % 2) + h], summed afterwards: turbo's chains of dependent MMAs are 12 long,
    // not 24, which the schedule showed stalling (tuning log §56).
    const uint SACC16 = K_Q8 ? 2u * KQ : 4u;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> s[SACC16];
    [[unroll]] for (uint i = 0; i < SACC16; ++i) s[i] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);
    [[unroll]] for (uint kb = 0; kb < BLOCKS; ++kb)
      [[unroll]] for (uint h = 0; h < 2u; ++h) {
        const uint si = K_Q8 ? 2u * (kb / 2u) + h : 2u * (kb % 2u) + h;
        K_PAIR16(kb, 2u * h, h0, l0)
        K_PAIR16(kb, 2u * h + 1u, h1, l1)
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> bh;
        bh[0] = h0.x; bh[1] = h0.y; bh[2] = h1.x; bh[3] = h1.y;
        s[si] = coopMatMulAddNV(qa[kb], bh, s[si]);
        s[si] = coopMatMulAddNV(qla[kb], bh, s[si]);
        if (!K_EXACT) {
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> bl;
          bl[0] = l0.x; bl[1] = l0.y; bl[2] = l1.x; bl[3] = l1.y;
          s[si] = coopMatMulAddNV(qa[kb], bl, s[si]);
        }
      }
    const vec2 kn0 = unpackHalf2x16(kn.x), kn1 = unpackHalf2x16(kn.y);
    const vec2 vn0 = unpackHalf2x16(vn.x), vn1 = unpackHalf2x16(vn.y);
    float sc[8];
    [[unroll]] for (uint i = 0; i < 8u; ++i) {
      const uint h = i >> 2, k = (i >> 1) & 1u, e = i & 1u;
      float si = K_Q8 ? 0.0 : s[h][2u * k + e] + s[2u + h][2u * k + e];  // (turbo, f16: the two chains)
      if (K_Q8)  // the blocks' scales of the element's token (8h + 2c + e)
        [[unroll]] for (uint bq = 0; bq < KQ; ++bq)
          si += s[2u * bq + h][2u * k + e] * unpackHalf2x16(ks[(2u * h + e) * K_SW + bq / 2u])[bq % 2u];
      sc[i] = si * (e == 0u ? kn0[h] : kn1[h]) * unscale;
    }
    if (pc.softcap > 0.0)
      [[unroll]] for (uint i = 0; i < 8u; ++i) sc[i] = pc.softcap * tanh(sc[i] / pc.softcap);
    // Rows: K's words are spent; the next tile's K comes while this one's softmax and output run.
    if (!PREFETCH && left > 1u) fetch_k16_as(next_tile(tb), lane, kvh, first_page, false, kwb[nx], knb[nx], ksb[nx]);
    if (tb + TILE <= end && tb + TILE + M <= len + 1u && pc.window == 0u) {
      [[unroll]] for (uint i = 0; i < 8u; ++i)
        if (!row_live[(i >> 1) & 1u]) sc[i] = NEG_INF;
    } else {
      [[unroll]] for (uint i = 0; i < 8u; ++i) {
        const uint k = (i >> 1) & 1u, t = tb + 8u * (i >> 2) + 2u * c + (i & 1u);
        if (!(row_live[k] && t < end && t >= lo_tok[k] && t <= hi_tok[k])) sc[i] = NEG_INF;
      }
    }
    // A new running maximum only where some score passed the old one (a row's tokens lie in the
    // lanes of its g: two shuffle rounds); the outputs are rescaled only then.
    bool grew = false;
    [[unroll]] for (uint i = 0; i < 8u; ++i) grew = grew || sc[i] > m_run[(i >> 1) & 1u];
    if (subgroupAny(grew)) {
      float alpha[2];
      [[unroll]] for (uint k = 0; k < 2; ++k) {
        float mx = max(max(sc[2u * k], sc[2u * k + 1u]), max(sc[4u + 2u * k], sc[5u + 2u * k]));
        mx = max(mx, subgroupShuffleXor(mx, 1u));
        mx = max(mx, subgroupShuffleXor(mx, 2u));
        const float m_new = max(m_run[k], mx);
        alpha[k] = m_new == m_run[k] || m_run[k] == NEG_INF ? 1.0 : exp(m_run[k] - m_new);
        m_run[k] = m_new;
        l_run[k] *= alpha[k];
      }
      [[unroll]] for (uint nb = 0; nb < 2u * BLOCKS; ++nb)
        [[unroll]] for (uint i = 0; i < 4; ++i) acc[nb][i] *= alpha[i >> 1];
    }
    float pr[8];
    [[unroll]] for (uint i = 0; i < 8u; ++i) {
      pr[i] = sc[i] == NEG_INF ? 0.0 : exp(sc[i] - m_run[(i >> 1) & 1u]);
      l_run[(i >> 1) & 1u] += pr[i];
    }
    // P (A: rows g + 8k, tokens 8h + 2c + e at element 4k + 2h + e) = p x norm_v (q8_0: x the
    // token's scale of each 32-dim block, one P per block), hi and lo; then the output, per 8-dim
    // block nb = 2 db + x: B = V's values of dims 16 db + 8 x.. (hi, lo).
    const uint PB = V_Q8 ? KQ : 1u;
    [[unroll]] for (uint bq = 0; bq < PB; ++bq) {
      fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ph, pl;
      [[unroll]] for (uint i = 0; i < 8u; ++i) {
        const uint h = i >> 2, k = (i >> 1) & 1u, e = i & 1u;
        const float scale = V_Q8 ? unpackHalf2x16(vs[(2u * h + e) * V_SW + bq / 2u])[bq % 2u] : e == 0u ? vn0[h] : vn1[h];
        const f16vec2 w = split_hilo(pr[i] == 0.0 ? 0.0 : pr[i] * scale);
        ph[4u * k + 2u * h + e] = w.x;
        pl[4u * k + 2u * h + e] = w.y;
      }
      [[unroll]] for (uint db = 0; db < BLOCKS; ++db)
        [[unroll]] for (uint x = 0; x < 2u; ++x)
          if (!V_Q8 || db / 2u == bq) {
            V_PAIR16(db, 2u * x, h0, l0)
            V_PAIR16(db, 2u * x + 1u, h1, l1)
            const uint nb = 2u * db + x;
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> bh;
            bh[0] = h0.x; bh[1] = h0.y; bh[2] = h1.x; bh[3] = h1.y;
            acc[nb] = coopMatMulAddNV(ph, bh, acc[nb]);
            acc[nb] = coopMatMulAddNV(pl, bh, acc[nb]);
            if (!V_EXACT) {
              fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> bl;
              bl[0] = l0.x; bl[1] = l0.y; bl[2] = l1.x; bl[3] = l1.y;
              acc[nb] = coopMatMulAddNV(ph, bl, acc[nb]);
            }
          }
    }
    --left;
    tb = next_tile(tb);
  }

  // The subgroup's state: l summed over the lanes of a row (its c), o = the accumulators.
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    l_run[k] += subgroupShuffleXor(l_run[k], 1u);
    l_run[k] += subgroupShuffleXor(l_run[k], 2u);
  }
  barrier();  // every subgroup is done with the tables before osh overwrites them
  TL_STAMP(2u);
  // Subgroups OSLOTS.. store their states (osh slot sg - OSLOTS), then subgroups 0..OSLOTS - 1
  // fold them into their own (each lane reads and rewrites the elements it holds) and store those.
  const bool upper = sg >= OSLOTS;
  [[unroll]] for (uint fold = 0; fold < 2u; ++fold) {
    if (fold == 1u) barrier();
    if (upper == (fold == 1u)) continue;
    float a_own[2] = float[](1.0, 1.0), a_oth[2] = float[](0.0, 0.0);
    if (!upper)
      [[unroll]] for (uint k = 0; k < 2; ++k)
        if (g + 8u * k < ROWS) {
          const uint at = ((sg + OSLOTS) * ROWS + g + 8u * k) * 2;
          const float mo = MSH_GET(at), mx = max(m_run[k], mo);
          a_own[k] = m_run[k] == NEG_INF ? 0.0 : exp(m_run[k] - mx);
          a_oth[k] = mo == NEG_INF ? 0.0 : exp(mo - mx);
          l_run[k] = l_run[k] * a_own[k] + MSH_GET(at + 1) * a_oth[k];
          m_run[k] = mx;
        }
    const uint slot = upper ? sg - OSLOTS : sg;
    [[unroll]] for (uint nb = 0; nb < 2u * BLOCKS; ++nb)
      [[unroll]] for (uint i = 0; i < 4; ++i) {
        const uint j = g + 8u * (i >> 1), d = v_dim(nb / 2u, 8u * (nb % 2u) + 2u * c + (i & 1u));
        const uint o = (slot * ROWS + j) * DIM + d;
        if (j < ROWS) OSH_SET(o, acc[nb][i] * (a_own[i >> 1] / V_CS) + (upper ? 0.0 : OSH_GET(o) * a_oth[i >> 1]));
      }
    if (c == 0u)
      [[unroll]] for (uint k = 0; k < 2; ++k)
        if (g + 8u * k < ROWS) {
          MSH_SET((sg * ROWS + g + 8u * k) * 2, m_run[k]);
          MSH_SET((sg * ROWS + g + 8u * k) * 2 + 1, l_run[k]);
        }
  }
}

// The split's query rows, tables and tiles in the MMAs' columns (the header; ROWS16: rows16_split),
// up to the subgroups' states in osh and msh.
void columns_split(uint b, uint kvh, uint row_chunk, uint start, uint end, uint len, uint first_page, uint tid, uint sg,
                   uint lane) {
  const uint g = lane >> 2, c = lane & 3u, lane8 = (lane % 16u) * 8u;
  // Query rows (scaled), rotated as the cache's K rows were: subgroup sg < 4 holds row sg (and
  // WIDE, row sg + 4), dim lane + 32 i in qv[i] (qv2[i]); further subgroups hold none. The
  // Hadamard's butterflies are shuffles across lanes and register pairs within one: no shared
  // memory, no barrier (in shared memory, with the 512 atomics of the query scale, they cost ~2 us
  // per call on an H100).
  const uint QV = DIM / 32u;  // 2 or 4
  // (pair: a fused split that holds new tokens, four subgroups of up to 4 rows: 0 and 1 quantize
  // the new rows (split_append) while 2 and 3 take the query rows, two each: sg and sg - 2.)
#ifdef TKV_FUSED_APPEND
  // (Turbo sides alone, whose quantizer is the long one: session 30, run 1, q8_0's last prologue
  // 1.49 -> 1.76 us paired; turbo3's 4.96 -> 4.38.)
  const bool pair = fresh_split && PREFETCH && !WIDE && SUBGROUPS == 4u && QR_FIRST == 0u;
#else
  const bool pair = false;
#endif
  const bool q_rows = pair ? sg >= 2u && sg < 4u : sg < 4u;
  float qv[4], qv2[4];
  if (q_rows) {
    query_load(b, kvh, row_chunk, sg, lane, qv);
    if (WIDE) query_load(b, kvh, row_chunk, sg + 4u, lane, qv2);
    else if (pair) query_load(b, kvh, row_chunk, sg - 2u, lane, qv2);
  }
  FRESH_ROWS(b, kvh, start, end, len, tid);
  if (q_rows) {
    float amax = query_finish(lane, qv);
    if (WIDE || pair) amax = max(amax, query_finish(lane, qv2));
    if (lane == 0u) qmax_sh[sg] = amax;
  } else if (sg < 4u && lane == 0u) {
    qmax_sh[sg] = 0.0;
  }
  // (pair: subgroups 0 and 1 build their share once they quantized. Built by 2 and 3 alone, the
  // tables kept the fresh split's prologue ~1 us past the others' where the new token ends a
  // full split; session 41 run 6, H200, P7 over 128 steps from 4096: turbo3 4.6-6.6% -> 2.1-3.4%.)
  build_tables(tid);  // meanwhile
  fill_split_pages(tid);
  STORES_VISIBLE();
  barrier();
  STORES_SEEN();
  const float qs = query_scale(4u);
  // Qb's columns sg (hi) and sg + 4 (lo); WIDE: sg and sg + 4 (his), sg + 8 and sg + 12 (los);
  // pair: also sg - 2 (hi) and sg + 2 (lo).
  [[unroll]] for (uint i = 0; i < 4u; ++i)
    if (q_rows && i < QV) {
      const uint k = k_slot(lane + 32u * i);
      const f16vec2 h = split_hilo(qv[i] * qs);
      frag[sg * DIM + k] = h.x;
      frag[(sg + QCOLS / 2u) * DIM + k] = h.y;
      if (WIDE) {
        const f16vec2 h2 = split_hilo(qv2[i] * qs);
        frag[(sg + 4u) * DIM + k] = h2.x;
        frag[(sg + 12u) * DIM + k] = h2.y;
      } else if (pair) {
        const f16vec2 h2 = split_hilo(qv2[i] * qs);
        frag[(sg - 2u) * DIM + k] = h2.x;
        frag[(sg + 2u) * DIM + k] = h2.y;
      }
    }
  barrier();
  const float unscale = 1.0 / (K_CS * qs);  // (a power of two unless K is exact)

  // Qb's fragments, kept in registers for the whole split (WIDE: the lo halves in ql).
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> qf[BLOCKS], ql[BLOCKS];
  [[unroll]] for (uint kb = 0; kb < BLOCKS; ++kb) coopMatLoadNV(qf[kb], frag, kb * 16, DIM, true);
  if (WIDE)
    [[unroll]] for (uint kb = 0; kb < BLOCKS; ++kb) coopMatLoadNV(ql[kb], frag, 8u * DIM + kb * 16, DIM, true);
  // The same Qb as 8-dim halves: B of the one-row turbo scores' 16x8x8 MMAs (below).
  fcoopmatNV<16, gl_ScopeSubgroup, 8, 8> qk8[2 * BLOCKS];
  if (!WIDE && !K_EXACT)
    [[unroll]] for (uint j = 0; j < 2u * BLOCKS; ++j) coopMatLoadNV(qk8[j], frag, j * 8, DIM, true);
  TL_STAMP(1u);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> acc[BLOCKS];
  [[unroll]] for (uint db = 0; db < BLOCKS; ++db) acc[db] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);

  // The lane's rows r0, r0 + 1 (its accumulator columns 2c, 2c+1 are rows (2c % 4) + 0/1, hi for
  // c < 2, lo for c >= 2; WIDE: rows 2c, 2c + 1); its tokens g and g + 8 of each tile.
  const uint r0 = WIDE ? 2u * c : 2u * (c & 1u);
  float m_run[2] = float[](NEG_INF, NEG_INF), l_run[2] = float[](0.0, 0.0);
  uint hi_tok[2], lo_tok[2];
  bool row_live[2];
  [[unroll]] for (uint k = 0; k < 2; ++k) row_range(row_chunk, r0 + k, len, row_live[k], hi_tok[k], lo_tok[k]);
  // The tiles' words in UNROLL buffers: where a step loads the next tile's K and V while it
  // computes this one (PREFETCH, K_AHEAD), the loop runs two steps an iteration, the current tile's
  // words in buffer u and the next one's in the other, so that no copy carries them across steps.
  // (H200, session 49 run 1: turbo2/3/4 at 128K -2.9/-2.1/-1.3%, turbo3's copies 152 -> 123 a
  // tile; at 8K +1..2%. q8_0's one-row loop keeps one buffer, its V ahead copied: two cost it
  // R165 -> R230 and +30% at 32K, session 48 run 1.)
  const uint UNROLL = PREFETCH || K_AHEAD ? 2u : 1u;
  uint kwb[UNROLL][K_LW], vwb[UNROLL][V_LW], knb[UNROLL], vnb[UNROLL], ksb[UNROLL][K_SW2], vsb[UNROLL][V_SW2];
  // The subgroup's tiles, from tb0 (TILES_DOWN: from its last down to tb0; a split's new tokens,
  // in a fused call, are in its last tiles: only the first fetch may hold them).
  const uint tb0 = start + sg * TILE, tiles = tb0 < end ? (end - 1u - tb0) / STEP + 1u : 0u;
  uint tb = TILES_DOWN ? tb0 + (tiles > 0u ? tiles - 1u : 0u) * STEP : tb0;
  if (PREFETCH && tiles > 0u) fetch_tile(tb, lane, kvh, first_page, kwb[0], vwb[0], knb[0], vnb[0], ksb[0], vsb[0]);
  if (!PREFETCH && tiles > 0u) fetch_k(tb, lane, kvh, first_page, kwb[0], knb[0], ksb[0]);
  if (V_AHEAD && tiles > 0u) fetch_v(tb, lane, kvh, first_page, vwb[0], vnb[0], vsb[0]);

  for (uint left = tiles; left > 0u;)  // (UNROLL steps an iteration, u the buffer of this one)
  [[unroll]] for (uint u = 0; u < UNROLL; ++u) {
    if (u > 0u && left == 0u) break;
    const uint nx = (u + 1u) % UNROLL;
    TAKE_TILE(u, uint, K_SW2, V_SW2)
    // The next tile's words, in flight while this one is computed (rows: this tile's V, or with
    // V_AHEAD the next one's; the next one's K below, or with K_AHEAD here).
    if (PREFETCH && left > 1u) fetch_tile_old(next_tile(tb), lane, kvh, first_page, kwb[nx], vwb[nx], knb[nx], vnb[nx], ksb[nx], vsb[nx]);
    if (V_AHEAD && left > 1u) fetch_v_as(next_tile(tb), lane, kvh, first_page, false, vwb[nx], vnb[nx], vsb[nx]);
    if (K_AHEAD && left > 1u) fetch_k_as(next_tile(tb), lane, kvh, first_page, false, kwb[nx], knb[nx], ksb[nx]);
    if (!PREFETCH && !V_AHEAD) fetch_v(tb, lane, kvh, first_page, vw, vn, vs);

    // Scores: per 16-dim block and token half h, the centroids (hi rows, lo rows) times Qb (a
    // block's two MMAs side by side: the driver transposes qf[kb] once for both).
    // (Exact K: one MMA per block, rows = the 16 tokens. WIDE: rows = the 16 tokens, C_hi times
    // Q_hi and Q_lo, C_lo times Q_hi, into one accumulator. q8_0 K: one accumulator per 32-dim
    // block, s[kb / 2], scaled afterwards.)
    const uint SACC = K_Q8 ? KQ : 2u;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> s[SACC];
    [[unroll]] for (uint j = 0; j < SACC; ++j) s[j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(0.0);
    [[unroll]] for (uint kb = 0; kb < BLOCKS; ++kb)
      if (WIDE && K_EXACT) {
        const uint sa = K_Q8 ? kb / 2u : kb % 2u;  // (f16: two chains, summed below)
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
        BUILD_A_K_EXACT(kb, a)
        s[sa] = coopMatMulAddNV(a, qf[kb], s[sa]);
        s[sa] = coopMatMulAddNV(a, ql[kb], s[sa]);
      } else if (WIDE) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ah, al;
        BUILD_A(kw, kb, K_F, K_LW, K_ENTRIES, TAB_K, ah, al)
        const uint sa = kb % 2u;  // two chains of 12 MMAs a tile, not one of 24
        s[sa] = coopMatMulAddNV(ah, qf[kb], s[sa]);
        s[sa] = coopMatMulAddNV(ah, ql[kb], s[sa]);
        s[sa] = coopMatMulAddNV(al, qf[kb], s[sa]);
      } else if (K_EXACT) {
        const uint sa = K_Q8 ? kb / 2u : 0u;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
        BUILD_A_K_EXACT(kb, a)
        s[sa] = coopMatMulAddNV(a, qf[kb], s[sa]);
      } else {
        // Per token half h (tokens g + 8h), 16x8x8 MMAs over the block's two 8-dim halves r: rows
        // g and g + 8 of A hold the same token's C_hi and C_lo (two accumulator rows summed
        // afterwards), so one table read, a (hi pair, lo pair) entry, is a whole A operand (rows
        // g, g + 8 at k 2c..2c+1) that the driver reads in place; a 16x8x16 A (both halves) took
        // four copies into one register quad from two reads. (H200, session 51 run 1: steady
        // path 1070 -> 1004 instructions for two tiles, MOV 246 -> 144, HMMA 64 -> 96, R165
        // both; turbo3 / turbo4 at 8K-128K -0.9..-2.0% under KHR matrices, -0.3..-2.8% under NV.)
        [[unroll]] for (uint h = 0; h < 2u; ++h)
          [[unroll]] for (uint r = 0; r < 2u; ++r) {
            TABLE_PAIR(kw, 4u * kb + 2u * h + r, K_F, K_LW, K_ENTRIES, TAB_K, hv, lv)
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> a;
            a[0] = hv.x; a[1] = hv.y; a[2] = lv.x; a[3] = lv.y;
            s[h] = coopMatMulAddNV(a, qk8[2u * kb + r], s[h]);
          }
      }

    // The lane's scores: token g (elements 0, 1) and g + 8 (2, 3) of rows r0, r0 + 1: in s[h],
    // hi rows (elements 0, 1) plus lo rows (2, 3) (exact K: s[0]'s element i); the hi and lo
    // columns of a query row sit in lanes c and c ^ 2 (WIDE: s[0]'s element i, whole).
    const vec2 knorm = unpackHalf2x16(kn), vnorm = unpackHalf2x16(vn);
    float sc[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      float si = K_EXACT || WIDE ? s[0][i] : s[i >> 1][i & 1u] + s[i >> 1][(i & 1u) + 2u];
      if (WIDE && !K_Q8)  // the wide form's second chain (a loop: s[1] would be out of range for
        [[unroll]] for (uint j = 1; j < SACC; ++j) si += s[j][i];  // the spec defaults' q8_0 size)
      if (K_Q8) {  // the blocks' scales of the element's token (g or g + 8)
        si = 0.0;
        [[unroll]] for (uint b = 0; b < KQ; ++b)
          si += s[b][i] * unpackHalf2x16(ks[K_SW * (i >> 1) + b / 2u])[b % 2u];
      }
      sc[i] = (WIDE ? si : si + subgroupShuffleXor(si, 2u)) * ((i >> 1) == 0u ? knorm.x : knorm.y) * unscale;
    }
    if (pc.softcap > 0.0)
      [[unroll]] for (uint i = 0; i < 4; ++i) sc[i] = pc.softcap * tanh(sc[i] / pc.softcap);
    // Rows: K's words are spent; the next tile's K comes while this one's softmax and output run.
    if (!PREFETCH && !K_AHEAD && left > 1u) fetch_k_as(next_tile(tb), lane, kvh, first_page, false, kwb[nx], knb[nx], ksb[nx]);
    // Masks: rows past the group's, tokens past the split's end, before a row's window or after
    // its own position; a tile inside every row's range (most of them) needs only the rows'.
    if (tb + TILE <= end && tb + TILE + M <= len + 1u && pc.window == 0u) {
      [[unroll]] for (uint i = 0; i < 4; ++i)
        if (!row_live[i & 1u]) sc[i] = NEG_INF;
    } else {
      [[unroll]] for (uint i = 0; i < 4; ++i) {
        const uint k = i & 1u, t = tb + g + 8u * (i >> 1);
        if (!(row_live[k] && t < end && t >= lo_tok[k] && t <= hi_tok[k])) sc[i] = NEG_INF;
      }
    }
    // A new running maximum only where some score passed the old one: the reduction over the
    // subgroup's tokens (three shuffle rounds per row) runs only then, rare once the maxima settle.
    bool grew = false;
    [[unroll]] for (uint i = 0; i < 4; ++i) grew = grew || sc[i] > m_run[i & 1u];
    float alpha[2] = float[](1.0, 1.0);
    if (subgroupAny(grew)) {
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
    }
    [[unroll]] for (uint db = 0; db < BLOCKS; ++db)
      [[unroll]] for (uint i = 0; i < 4; ++i) acc[db][i] *= alpha[i & 1u];
    // Probabilities: l sums p; Pb holds w = p x norm_v (hi in lanes c < 2, lo in c >= 2; WIDE:
    // the rows' w_hi, and a second matrix, pl, their w_lo), built in registers (BUILD_B).
    float pr[4];
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const uint k = i & 1u;
      pr[i] = sc[i] == NEG_INF ? 0.0 : exp(sc[i] - m_run[k]);
      l_run[k] += pr[i];
    }
#define BUILD_P(wv, pf, pl)                                                                         \
  {                                                                                                 \
    float16_t pv[4], pv2[4];                                                                        \
    [[unroll]] for (uint i = 0; i < 4; ++i) {                                                       \
      const f16vec2 h = split_hilo(wv[i]);                                                          \
      pv[i] = WIDE || c < 2u ? h.x : h.y;                                                           \
      pv2[i] = h.y;                                                                                 \
    }                                                                                               \
    BUILD_B(pv, pf)                                                                                 \
    if (WIDE) {                                                                                     \
      BUILD_B(pv2, pl)                                                                              \
    }                                                                                               \
  }
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> pf, pl;
    if (V_Q8) {
      // q8_0 V: per 32-dim block b, w = p x the token's scale d_b, and its two output blocks.
      [[unroll]] for (uint b = 0; b < KQ; ++b) {
        float w[4];
        [[unroll]] for (uint i = 0; i < 4; ++i)
          w[i] = pr[i] == 0.0 ? 0.0 : pr[i] * unpackHalf2x16(vs[V_SW * (i >> 1) + b / 2u])[b % 2u];
        BUILD_P(w, pf, pl)
        [[unroll]] for (uint x = 0; x < 2u; ++x) {
          const uint db = 2u * b + x;
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
          BUILD_A_VQ8(db, a)
          acc[db] = coopMatMulAddNV(a, pf, acc[db]);
          if (WIDE) acc[db] = coopMatMulAddNV(a, pl, acc[db]);
        }
      }
    } else {
      float w[4];
      [[unroll]] for (uint i = 0; i < 4; ++i) w[i] = pr[i] == 0.0 ? 0.0 : pr[i] * ((i >> 1) == 0u ? vnorm.x : vnorm.y);
      BUILD_P(w, pf, pl)
    }

    // Output: per 16-dim block, the V centroids (dims x tokens), hi then lo, times Pb.
    [[unroll]] for (uint db = 0; db < BLOCKS; ++db)
      if (V_Q8) {
        // (above)
      } else if (V_EXACT) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
        BUILD_A_V_EXACT(db, a)
        acc[db] = coopMatMulAddNV(a, pf, acc[db]);
        if (WIDE) acc[db] = coopMatMulAddNV(a, pl, acc[db]);
      } else {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ah, al;
        BUILD_A(vw, db, V_F, V_LW, V_ENTRIES, TAB_V, ah, al)
        acc[db] = coopMatMulAddNV(ah, pf, acc[db]);
        if (WIDE) acc[db] = coopMatMulAddNV(ah, pl, acc[db]);
        acc[db] = coopMatMulAddNV(al, pf, acc[db]);
      }
    --left;
    tb = next_tile(tb);
  }

  // The subgroup's state: l summed over its tokens (lanes with the same c), o = hi + lo columns.
  [[unroll]] for (uint k = 0; k < 2; ++k) {
    l_run[k] += subgroupShuffleXor(l_run[k], 4u);
    l_run[k] += subgroupShuffleXor(l_run[k], 8u);
    l_run[k] += subgroupShuffleXor(l_run[k], 16u);
  }
  barrier();  // every subgroup is done with the tables before osh overwrites them
  TL_STAMP(2u);
  [[unroll]] for (uint db = 0; db < BLOCKS; ++db)
    [[unroll]] for (uint i = 0; i < 4; ++i) {
      const float o = (WIDE ? acc[db][i] : acc[db][i] + subgroupShuffleXor(acc[db][i], 2u)) * (1.0 / V_CS);
      const uint j = r0 + (i & 1u), d = v_dim(db, g + 8u * (i >> 1));
      if ((WIDE || c < 2u) && j < ROWS) OSH_SET((sg * ROWS + j) * DIM + d, o);
    }
  if (g == 0u && (WIDE || c < 2u))
    [[unroll]] for (uint k = 0; k < 2; ++k)
      if (r0 + k < ROWS) {
        MSH_SET((sg * ROWS + r0 + k) * 2, m_run[k]);
        MSH_SET((sg * ROWS + r0 + k) * 2 + 1, l_run[k]);
      }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint sg = tid / 32u, lane = tid % 32u;  // the plan requires subgroups of 32
  const uint split = gl_WorkGroupID.x;
  const uint kvh = gl_WorkGroupID.y % KV_HEADS, row_chunk = gl_WorkGroupID.y / KV_HEADS;
  const uint b = gl_WorkGroupID.z;
  TL_STAMP(0u);
  const uvec4 info = b < pc.inline_seqs ? uvec4(pc.seq_inline[b], 0u, 0u) : seqs[b];
  const uint len = info.x, table = info.y;
  const uint start = split * pc.chunk;
  if (start >= len) {
    TL_END(split, false, false);
    return;
  }
  const uint end = min(len, start + pc.chunk);
#ifdef TKV_FUSED_APPEND
  fresh_from = len - M;
  fresh_len = len;
  fresh_split = end > fresh_from;
  fresh_table = table;
#endif

  const uint first_page = start / PAGE_SIZE;
  split_page_count = (end - 1) / PAGE_SIZE - first_page + 1u;
  split_table = table;
  split_first_page = first_page;
  split_page_0 = tid < split_page_count ? pages[table + first_page + tid] : 0u;  // (stored by fill_split_pages)
  if (ROWS16 != 0u) rows16_split(b, kvh, row_chunk, start, end, len, first_page, tid, sg, lane);
  else columns_split(b, kvh, row_chunk, start, end, len, first_page, tid, sg, lane);
  barrier();

  // Merge the subgroups and write the split's partials (m, l, o); the group's last split merges
  // the splits and stores the output.
  for (uint e = tid; e < ROWS * PSTRIDE4; e += WG) {
    const uint j = e / PSTRIDE4, k4 = e % PSTRIDE4, gr = row_chunk * ROWS + j;
    if (gr >= RM) continue;
    float mx = NEG_INF;
    [[unroll]] for (uint q = 0; q < OSLOTS; ++q) mx = max(mx, MSH_GET((q * ROWS + j) * 2));
    vec4 v = vec4(0.0);
    [[unroll]] for (uint q = 0; q < OSLOTS; ++q) {
      const float mq = MSH_GET((q * ROWS + j) * 2);
      const float a = mq == NEG_INF ? 0.0 : exp(mq - mx);
      if (k4 == 0u) {
        v.y += a * MSH_GET((q * ROWS + j) * 2 + 1);
      } else {
        const uint o = (q * ROWS + j) * DIM + partial_dim4(k4);
        v += a * vec4(OSH_GET(o), OSH_GET(o + 1u), OSH_GET(o + 2u), OSH_GET(o + 3u));
      }
    }
    if (k4 == 0u) v.x = mx;
    part4[partial_index4(b, kvh, gr, split, k4)] = v;
  }
  const uint n = splits_with_tokens(len, pc.chunk), row0 = row_chunk * ROWS;
  const bool last = arrive_last(group_of(b, kvh, row_chunk), n);
  TL_STAMP(3u);
  if (!last) {
    TL_END(split, true, false);
    return;
  }
  merge_splits(b, kvh, row0, n, tid, WG);
  TL_STAMP(4u);
  finish_rows(b, kvh, row0, tid, WG);
  TL_STAMP(5u);
  TL_END(split, true, true);
}
