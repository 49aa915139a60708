// IEEE 754 binary16 <-> binary32 by bit manipulation, so results do not depend on compiler or
// hardware support for _Float16 / F16C.
#include "kvcache/fp16.hpp"

#include <bit>

namespace tkv {

uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;

  if (exp == 0xffu) {
    if (mant == 0) return static_cast<uint16_t>(sign | 0x7c00u);  // +-inf
    // NaN: keep the top payload bits and force the quiet bit so it never becomes inf.
    return static_cast<uint16_t>(sign | 0x7e00u | (mant >> 13));
  }

  const int e = static_cast<int>(exp) - 127 + 15;  // rebiased exponent
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf

  if (e <= 0) {
    // Half subnormal (or zero). |f| < 2^-25 always rounds to zero (2^-25 itself ties to even 0).
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;  // make the implicit bit explicit
    const uint32_t shift = static_cast<uint32_t>(14 - e);  // 13 for the format + (1 - e)
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;  // may carry into the smallest normal
    return static_cast<uint16_t>(sign | h);
  }

  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  // Round to nearest even; a carry out of the mantissa correctly bumps the exponent (up to inf).
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;

  uint32_t bits;
  if (exp == 0x1fu) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp - 15u + 127u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise the mantissa into a normal float.
    uint32_t e = 127u - 15u + 1u;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace tkv
