// Reading one stored element of a cache row (kvcache/layout.hpp) without its group scale, and a
// group's scale. TKV_DEFINE_DEQUANT instantiates the functions for one pool (K or V), whose
// type and row geometry are specialization constants, so the driver folds the other types away.
#ifndef TKV_DEQUANT_GLSL
#define TKV_DEQUANT_GLSL

// The byte at `off` of a word-addressed pool.
#define TKV_BYTE(POOL, off) ((POOL[(off) >> 2] >> (8u * ((off) & 3u))) & 0xffu)

#define TKV_DEFINE_DEQUANT(PREFIX, POOL, TYPE, GROUP, GROUPS, BITS_ROW)                                  \
  /* Element d of the row whose bits start at byte `row`, before the group scale. */                 \
  float PREFIX##_raw(uint row, uint d) {                                                              \
    if (TYPE == TYPE_F16) {                                                                           \
      const uint off = row + 2u * d;                                                                  \
      const uint w = POOL[off >> 2];                                                                  \
      return unpackHalf2x16((off & 2u) != 0u ? (w >> 16) : w).x;                                      \
    }                                                                                                 \
    if (TYPE == TYPE_Q8_0) {                                                                          \
      const uint off = row + d;                                                                       \
      return float(bitfieldExtract(int(POOL[off >> 2]), int(8u * (off & 3u)), 8));                    \
    }                                                                                                 \
    if (TYPE == TYPE_TURBO2) {                                                                        \
      const uint b = TKV_BYTE(POOL, row + (d >> 2));                                                  \
      return C2[(b >> (2u * (d & 3u))) & 3u];                                                         \
    }                                                                                                 \
    if (TYPE == TYPE_TURBO4) {                                                                        \
      const uint b = TKV_BYTE(POOL, row + (d >> 1));                                                  \
      return C4[(b >> (4u * (d & 1u))) & 15u];                                                        \
    }                                                                                                 \
    /* turbo3: per group, G/4 bytes of low 2 bits then G/8 bytes of high bits */                     \
    const uint g = d / GROUP, j = d % GROUP;                                                          \
    const uint base = row + g * (3u * GROUP / 8u);                                                    \
    const uint lo = (TKV_BYTE(POOL, base + (j >> 2)) >> (2u * (j & 3u))) & 3u;                        \
    const uint hi = (TKV_BYTE(POOL, base + GROUP / 4u + (j >> 3)) >> (j & 7u)) & 1u;                  \
    return C3[lo | (hi << 2)];                                                                        \
  }                                                                                                   \
  /* The f16 scale of group g of the row in `slot` of the region starting at byte `region`. */        \
  float PREFIX##_scale(uint region, uint page_size, uint slot, uint g) {                              \
    if (TYPE == TYPE_F16) return 1.0;                                                                 \
    const uint off = region + page_size * BITS_ROW + slot * 2u * GROUPS + 2u * g;                     \
    const uint w = POOL[off >> 2];                                                                    \
    return unpackHalf2x16((off & 2u) != 0u ? (w >> 16) : w).x;                                        \
  }

#endif
