// Float helpers that reproduce the CPU reference's IEEE rounding where bytes must match.
#ifndef TKV_NUMERIC_GLSL
#define TKV_NUMERIC_GLSL

// a / b rounded to nearest: GLSL division may be off by 2.5 ulp; one Newton step on the
// remainder (exact through fma) gives the correctly rounded quotient for normal operands.
// (div_rn_r: the same, given rb = 1.0 / b, for divisors shared by several quotients.)
float div_rn_r(float a, float b, float rb) {
  precise float q = a * rb;
  precise float r = fma(-q, b, a);
  return fma(r, rb, q);
}
float div_rn(float a, float b) { return div_rn_r(a, b, 1.0 / b); }

// float -> IEEE half bits, round to nearest even (packHalf2x16's rounding is implementation-defined).
uint half_bits_rte(float f) {
  const uint x = floatBitsToUint(f);
  const uint sign = (x >> 16) & 0x8000u;
  const uint ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / inf
  if (ax >= 0x477ff000u) return sign | 0x7c00u;                                 // rounds to inf
  if (ax < 0x38800000u) {                                                       // half subnormal or 0
    // value = ax_float; scale to units of 2^-24 and round to nearest even
    const float v = uintBitsToFloat(ax) * 16777216.0;  // exact: power-of-two scale
    const float fl = floor(v);
    const float frac = v - fl;
    uint m = uint(fl);
    if (frac > 0.5 || (frac == 0.5 && (m & 1u) == 1u)) m += 1u;
    return sign | m;
  }
  // normal: rebias exponent, round 13 dropped mantissa bits to nearest even
  uint h = ((ax - 0x38000000u) >> 13);
  const uint rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)) h += 1u;
  return sign | h;
}

float half_to_float(uint h) { return unpackHalf2x16(h & 0xffffu).x; }

// roundf(): half away from zero (GLSL round() leaves .5 to the implementation). Not
// floor(|v| + 0.5): that addition rounds 0.49999997 up to 1. a - trunc(a) is exact below 2^23.
float round_away(float v) {
  const float a = abs(v), t = trunc(a);
  return sign(v) * (a - t >= 0.5 ? t + 1.0 : t);
}

#endif
