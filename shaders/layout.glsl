// The device layout of kvcache/layout.hpp, from specialization constants the host derives from
// RowLayout / PageLayout (one source of truth: the host computes, the shader only reads).
// A shader that includes this declares, before the include, the constant ids it uses via
// TKV_LAYOUT_ID_BASE (first of 8 consecutive ids) and a prefix-free set of names.
#ifndef TKV_LAYOUT_GLSL
#define TKV_LAYOUT_GLSL

#define TYPE_F16 0u
#define TYPE_Q8_0 1u
#define TYPE_TURBO2 2u
#define TYPE_TURBO3 3u
#define TYPE_TURBO4 4u

// Turbo tiles (kvcache/layout.hpp): 16 tokens in the order of the m16n8k16 fragments. Element
// (token t of the tile, dim d) is element .z of pair .y of lane .x (K pairs: two dims of a token;
// V pairs: one dim of two tokens).
uvec3 tile_slot(bool is_k, uint t, uint d) {
  const uint blk = d / 16u, dd = d % 16u;
  if (is_k) return uvec3(4u * (t % 8u) + (dd % 8u) / 2u, 4u * blk + 2u * (t / 8u) + dd / 8u, dd % 2u);
  return uvec3(4u * (dd % 8u) + (t % 8u) / 2u, 4u * blk + 2u * (dd / 8u) + t / 8u, t % 2u);
}
// Magnitude index and negative flag of a reference index (bits: the type's index bits).
uvec2 mag_sign(uint idx, uint bits) {
  const uint half_ = 1u << (bits - 1u);
  return idx < half_ ? uvec2(half_ - 1u - idx, 1u) : uvec2(idx - half_, 0u);
}
// The reference index of a magnitude index and negative flag.
uint index_of(uint mi, uint negative, uint bits) {
  const uint half_ = 1u << (bits - 1u);
  return negative != 0u ? half_ - 1u - mi : half_ + mi;
}

#endif
