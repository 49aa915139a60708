// Turning a lane's stored bits into values inside the decode loop (kvcache/layout.hpp).
//
// The dequant variant (how an index becomes a centroid) and the profile mode (what is read at
// all) are specialization constants of shaders/decode.comp, which extracts each lane's indices
// from its words and calls turbo_centroid: each pipeline carries one implementation.
#ifndef TKV_DEQUANT_GLSL
#define TKV_DEQUANT_GLSL

#define VARIANT_LUT8 0u    // index -> centroid table
#define VARIANT_MAG4 1u    // magnitude table + XOR sign trick
#define VARIANT_ALU 2u     // no table: select tree on the index bits
#define VARIANT_REGLUT 3u  // per row, centroid x scale for every entry precomputed in registers, then indexed
#define VARIANT_QLUT 4u    // K: per query, T[d][c] = q_d * C[c] in shared memory (V as lut8)
#define VARIANT_SMEM 5u    // the codebook read from shared memory

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
  if (variant == VARIANT_MAG4) {
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

// The two full turbo indices of pair-table entry e of decode.comp's smem variant (two elements'
// indices: turbo2 2 + 2 index bits; turbo3 2 + 2 low index bits, then their 2 high bits; turbo4 4 + 4).
uvec2 pair_indices(uint type, uint e) {
  if (type == TYPE_TURBO4) return uvec2(e & 15u, e >> 4);
  if (type == TYPE_TURBO2) return uvec2(e & 3u, (e >> 2) & 3u);
  return uvec2((e & 3u) | (((e >> 4) & 1u) << 2), ((e >> 2) & 3u) | (((e >> 5) & 1u) << 2));
}

// The f16 scale at byte offset `off` of a pool, from the word holding it.
float half_at(uint word, uint off) { return unpackHalf2x16((off & 2u) != 0u ? (word >> 16) : word).x; }

#endif
