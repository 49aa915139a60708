// The new rows of a fused append-decode call (kernels compiled with TKV_FUSED_APPEND): their
// bindings, and each one's quantization by one subgroup (quantize_row.glsl, included here). The
// scalar kernel's tail workgroups (append_tail.glsl) and the tc kernel's splits that hold new
// tokens (decode_tc.comp) quantize them with this one code.
//
// Needs, before inclusion: what quantize_row.glsl needs (the pool writes qr_pool_and / _or /
// _store / _store16, QR_COPIES, QR_MIN_SUBGROUP); the constants HEAD_DIM, KV_HEADS, M, K_NEW_F16,
// V_NEW_F16; the push constants pc.k_new, pc.v_new (elements to the new rows).
#ifndef TKV_NEW_ROWS_GLSL
#define TKV_NEW_ROWS_GLSL

// The new rows: [batch][M][KV_HEADS][HEAD_DIM] each, f32 or f16.
layout(std430, binding = 8) readonly buffer NewK { uint new_k[]; };
layout(std430, binding = 9) readonly buffer NewV { uint new_v[]; };

#include "quantize_row.glsl"

float new_row_element(bool is_v, uint index) {
  if (is_v ? V_NEW_F16 != 0u : K_NEW_F16 != 0u) {
    const uint w = is_v ? new_v[index >> 1] : new_k[index >> 1];
    return unpackHalf2x16((index & 1u) != 0u ? (w >> 16) : w).x;
  }
  return uintBitsToFloat(is_v ? new_v[index] : new_k[index]);
}

// New token i's row of one side (of sequence b, KV head kvh) quantized in the calling subgroup's
// registers (qr_quantize_regs; each lane loads the elements it quantizes): its codes, values and
// scale bits.
void quantize_new_row_regs(RowShape s, uint b, uint kvh, uint i, out uint code[QR_REGS], out float c[QR_REGS],
                           out float v[QR_REGS]) {
  const uint src = (s.is_v ? pc.v_new : pc.k_new) + ((b * M + i) * KV_HEADS + kvh) * HEAD_DIM;
  const uint lane = gl_SubgroupInvocationID;
  float x[QR_REGS];
  [[unroll]] for (uint k = 0; k < QR_REGS; ++k) {
    const uint e = lane + QR_W * k;
    x[k] = lane < QR_W && e < s.stored_dim && e < HEAD_DIM ? new_row_element(s.is_v, src + e) : 0.0;
  }
  qr_quantize_regs(s, x, code, c, v);
}
// The same into the subgroup `w`'s copy of the quantizer's arrays (qr_quantize_store).
void quantize_new_row(RowShape s, QrWork w, uint b, uint kvh, uint i) {
  float c[QR_REGS], v[QR_REGS];
  uint code[QR_REGS];
  quantize_new_row_regs(s, b, kvh, i, code, c, v);
  qr_quantize_store(s, w, c, code, v);
}

#endif
