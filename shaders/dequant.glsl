// Turning a lane's stored bits into values inside the decode loop (kvcache/layout.hpp).
//
// A lane owns DPL consecutive dims of a row, all inside one scale group. TKV_DEFINE_DEQUANT
// instantiates, for one word array (K or V rows laid out as a page region of REGION_ROWS rows:
// the bits of every row, then their scales) whose type and geometry are specialization constants,
//   PREFIX_load(row, d0, out vec4 v[DPL / 4]) the raw values (before the group's scale), 4 per vec4:
//                                            arrays of vec4 stay in registers where float arrays of
//                                            more than 16 elements went to local memory on NVIDIA
//   PREFIX_scale(region, slot, g)             the group's f16 scale (turbo norm, q8_0 d)
// The dequant variant (how bits become values) and the profile mode (what is read at all) are
// specialization constants too, so each pipeline carries one implementation.
#ifndef TKV_DEQUANT_GLSL
#define TKV_DEQUANT_GLSL

#define VARIANT_LUT8 0u    // index -> centroid table
#define VARIANT_MAG4 1u    // magnitude table + XOR sign trick
#define VARIANT_ALU 2u     // no table: select tree on the index bits
#define VARIANT_REGLUT 3u  // per row, centroid x scale for every entry precomputed in registers, then indexed
#define VARIANT_QLUT 4u    // K: per query, T[d][c] = q_d * C[c] in shared memory (V as lut8)
#define VARIANT_SMEM 5u    // a step's rows dequantized into shared memory, then consumed

#define MODE_FULL 0u      // real dequant
#define MODE_ZERO 1u      // reads nothing, values 0: the ceiling
#define MODE_NORM 2u      // reads the scale only, values = scale
#define MODE_NOSIGN 3u    // reads scale + index bits, skips the sign / high bits (positive half)
#define MODE_CONST 4u     // reads every byte, values = one constant centroid x scale

const float MAG2[2] = float[](0.039994, 0.133462);
const float MAG3[4] = float[](0.021460, 0.065717, 0.117832, 0.190685);
const float MAG4[8] = float[](0.011353, 0.034311, 0.058069, 0.083317, 0.111065, 0.143047, 0.182907, 0.241556);

// Centroid of a full turbo index, one implementation per variant.
float turbo_centroid(uint type, uint variant, uint idx) {
  const uint bits = type == TYPE_TURBO2 ? 2u : type == TYPE_TURBO3 ? 3u : 4u;
  const uint hi = idx >> (bits - 1u);                       // 1: positive half
  const uint low = idx & ((1u << (bits - 1u)) - 1u);
  const uint mi = low ^ (hi != 0u ? 0u : (1u << (bits - 1u)) - 1u);  // magnitude index
  if (variant == VARIANT_MAG4 || variant == VARIANT_SMEM) {
    const float m = type == TYPE_TURBO2 ? MAG2[mi] : type == TYPE_TURBO3 ? MAG3[mi] : MAG4[mi];
    return hi != 0u ? m : -m;
  }
  if (variant == VARIANT_ALU) {
    float m;
    if (type == TYPE_TURBO2) {
      m = (mi & 1u) != 0u ? MAG2[1] : MAG2[0];
    } else if (type == TYPE_TURBO3) {
      const float a = (mi & 1u) != 0u ? MAG3[1] : MAG3[0], b = (mi & 1u) != 0u ? MAG3[3] : MAG3[2];
      m = (mi & 2u) != 0u ? b : a;
    } else {
      const bool b0 = (mi & 1u) != 0u, b1 = (mi & 2u) != 0u;
      const float a = b1 ? (b0 ? MAG4[3] : MAG4[2]) : (b0 ? MAG4[1] : MAG4[0]);
      const float b = b1 ? (b0 ? MAG4[7] : MAG4[6]) : (b0 ? MAG4[5] : MAG4[4]);
      m = (mi & 4u) != 0u ? b : a;
    }
    return uintBitsToFloat(floatBitsToUint(m) | (hi != 0u ? 0u : 0x80000000u));
  }
  return type == TYPE_TURBO2 ? C2[idx] : type == TYPE_TURBO3 ? C3[idx] : C4[idx];
}

// The 32-bit word at byte offset `byte_off` of an array of uvec4 (16-byte staging stores).
#define TKV_WORD(POOL, byte_off) POOL[(byte_off) >> 4][((byte_off) >> 2) & 3u]

#define TKV_DEFINE_DEQUANT(PREFIX, POOL, TYPE, GROUP, GROUPS, BITS_ROW, REGION_ROWS, DPL, VARIANT, MODE, ZERO)               \
  float PREFIX##_scale(uint region, uint slot, uint g) {                                                         \
    if (TYPE == TYPE_F16 || MODE == MODE_ZERO) return 1.0;                                                       \
    const uint off = region + REGION_ROWS * BITS_ROW + slot * 2u * GROUPS + 2u * g;                                \
    const uint w = TKV_WORD(POOL, off);                                                                          \
    return unpackHalf2x16((off & 2u) != 0u ? (w >> 16) : w).x;                                                   \
  }                                                                                                              \
  /* `row`: byte offset of the row's bits; d0: first dim (a multiple of DPL). */                                 \
  void PREFIX##_load(uint row, uint d0, out vec4 v[DPL4]) { /* DPL4 = DPL / 4, declared by the includer */                                                      \
    if (MODE == MODE_ZERO || (MODE == MODE_NORM && TYPE != TYPE_F16)) {                                        \
      [[unroll]] for (uint i = 0; i < DPL4; ++i) v[i] = vec4(MODE == MODE_NORM ? 1.0 : 0.0);                                       \
      return;                                                                                                    \
    }                                                                                                            \
    if (MODE == MODE_NORM) { /* f16 has no scale: touch one word of the lane's chunk */                           \
      const float h = unpackHalf2x16(TKV_WORD(POOL, row + 2u * d0)).x;                                           \
      [[unroll]] for (uint i = 0; i < DPL4; ++i) v[i] = vec4(h);                                                                   \
      return;                                                                                                    \
    }                                                                                                            \
    if (TYPE == TYPE_F16) {                                                                                      \
      [[unroll]] for (uint i = 0; i < DPL; i += 2) {                                                                        \
        const uint w = TKV_WORD(POOL, row + 2u * (d0 + i));                                                      \
        const vec2 h = unpackHalf2x16(w);                                                                        \
        v[i >> 2][i & 3u] = h.x;                                                                                 \
        v[i >> 2][(i & 3u) + 1u] = h.y;                                                                          \
      }                                                                                                          \
    } else if (TYPE == TYPE_Q8_0) {                                                                              \
      [[unroll]] for (uint i = 0; i < DPL; i += 4) {                                                                        \
        const int w = int(TKV_WORD(POOL, row + d0 + i));                                                         \
        [[unroll]] for (uint k = 0; k < 4; ++k) v[i >> 2][k] = float(bitfieldExtract(w, int(8u * k), 8));                       \
      }                                                                                                          \
    } else {                                                                                                     \
      /* turbo: the lane's low index bits (and turbo3's sign bits) as whole words */                              \
      const uint lbits = TYPE == TYPE_TURBO4 ? 4u : 2u;                                                          \
      const uint g = d0 / GROUP, j0 = d0 % GROUP;                                                                \
      const uint gbase = row + g * (GROUP * (TYPE == TYPE_TURBO3 ? 3u : lbits) / 8u);                            \
      [[unroll]] for (uint i = 0; i < DPL; i += 32u / lbits) {                                                              \
        const uint bit0 = (j0 + i) * lbits;                                                                      \
        const uint word = TKV_WORD(POOL, gbase + (bit0 >> 5) * 4u) >> (bit0 & 31u);                              \
        uint sgn = 0xffffffffu;                                                                                  \
        if (TYPE == TYPE_TURBO3 && MODE != MODE_NOSIGN) {                                                        \
          const uint sbit = j0 + i;                                                                              \
          sgn = TKV_WORD(POOL, gbase + GROUP / 4u + (sbit >> 5) * 4u) >> (sbit & 31u);                           \
        }                                                                                                        \
        const uint n = min(32u / lbits, DPL - i);                                                                \
        [[unroll]] for (uint k = 0; k < n; ++k) {                                                                           \
          uint idx = (word >> (lbits * k)) & ((1u << lbits) - 1u);                                               \
          if (TYPE == TYPE_TURBO3 && MODE != MODE_NOSIGN) idx |= ((sgn >> k) & 1u) << 2;                         \
          if (MODE == MODE_NOSIGN) idx |= TYPE == TYPE_TURBO3 ? 4u : 1u << (lbits - 1u);                          \
          const uint top = TYPE == TYPE_TURBO2 ? 3u : TYPE == TYPE_TURBO3 ? 7u : 15u;                            \
          if (VARIANT == VARIANT_QLUT || VARIANT == VARIANT_REGLUT) { /* they consume the index itself */        \
            v[(i + k) >> 2][(i + k) & 3u] = float(MODE == MODE_CONST ? top | (idx & ZERO) : idx);                                     \
          } else if (MODE == MODE_CONST) {                                                                       \
            v[(i + k) >> 2][(i + k) & 3u] = turbo_centroid(TYPE, VARIANT_LUT8, top) + float(idx & ZERO);                              \
          } else {                                                                                               \
            v[(i + k) >> 2][(i + k) & 3u] = turbo_centroid(TYPE, VARIANT, idx);                                                       \
          }                                                                                                      \
        }                                                                                                        \
      }                                                                                                          \
      return;                                                                                                    \
    }                                                                                                            \
    if (MODE == MODE_CONST)                                                                                      \
      [[unroll]] for (uint i = 0; i < DPL4; ++i) v[i] = vec4(1.0) + vec4(floatBitsToUint(v[i]) & uvec4(ZERO));                           \
  }

// One element's raw value (before the scale), for the smem variant's strided producers.
#define TKV_DEFINE_RAW(PREFIX, POOL, TYPE, GROUP)                                                        \
  float PREFIX##_raw(uint row, uint d) {                                                                  \
    if (TYPE == TYPE_F16) {                                                                               \
      const uint off = row + 2u * d;                                                                      \
      const uint w = TKV_WORD(POOL, off);                                                                 \
      return unpackHalf2x16((off & 2u) != 0u ? (w >> 16) : w).x;                                          \
    }                                                                                                     \
    if (TYPE == TYPE_Q8_0) {                                                                              \
      const uint off = row + d;                                                                           \
      return float(bitfieldExtract(int(TKV_WORD(POOL, off)), int(8u * (off & 3u)), 8));                   \
    }                                                                                                     \
    const uint g = d / GROUP, j = d % GROUP;                                                              \
    if (TYPE == TYPE_TURBO2) {                                                                            \
      const uint bit = 2u * j;                                                                            \
      const uint w = TKV_WORD(POOL, row + g * (GROUP / 4u) + (bit >> 5) * 4u);                            \
      return turbo_centroid(TYPE, VARIANT_MAG4, (w >> (bit & 31u)) & 3u);                                 \
    }                                                                                                     \
    if (TYPE == TYPE_TURBO4) {                                                                            \
      const uint bit = 4u * j;                                                                            \
      const uint w = TKV_WORD(POOL, row + g * (GROUP / 2u) + (bit >> 5) * 4u);                            \
      return turbo_centroid(TYPE, VARIANT_MAG4, (w >> (bit & 31u)) & 15u);                                \
    }                                                                                                     \
    const uint base = row + g * (3u * GROUP / 8u);                                                        \
    const uint lo = (TKV_WORD(POOL, base + ((2u * j) >> 5) * 4u) >> ((2u * j) & 31u)) & 3u;               \
    const uint hi = (TKV_WORD(POOL, base + GROUP / 4u + (j >> 5) * 4u) >> (j & 31u)) & 1u;                \
    return turbo_centroid(TYPE, VARIANT_MAG4, lo | (hi << 2));                                            \
  }

#endif
