// Reading the query rows (f32 or f16 elements, the Q_F16 constant) from the Q binding `qw`, which
// the including decode shader declares with Q_F16 before the include.
#ifndef TKV_QUERY_GLSL
#define TKV_QUERY_GLSL

float load_q(uint index) {
  if (Q_F16 != 0) {
    const uint w = qw[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(qw[index]);
}

#endif
