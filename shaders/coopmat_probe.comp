#version 450
// Where a cooperative-matrix fragment's elements sit (kvcache/vk/coopmat_probe.cpp): loads a
// 16x16 f16 matrix, a 16x8 f16 B matrix and a 16x8 f32 matrix whose values are their own row-major positions and
// writes, per lane, each element's value, i.e. its position. decode_tc.comp builds fragments in
// registers and relies on NVIDIA's mma.m16n8k16 layout, which the host compares with this.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require

layout(local_size_x = 32) in;
layout(std430, binding = 0) writeonly buffer Out { float o[]; };  // per lane: length(A), A[0..7], length(C), C[0..3], length(B), B[0..3]

shared float16_t a[256];
shared float cm[128];

void main() {
  const uint lane = gl_LocalInvocationID.x;
  for (uint i = lane; i < 256u; i += 32u) a[i] = float16_t(float(i));
  for (uint i = lane; i < 128u; i += 32u) cm[i] = float(i);
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> mc;
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> mb;  // B: 16 (k) x 8 (n), row-major positions
  coopMatLoadNV(ma, a, 0, 16, false);
  coopMatLoadNV(mc, cm, 0, 8, false);
  coopMatLoadNV(mb, a, 0, 8, false);
  const uint base = lane * 19u;
  o[base] = float(ma.length());
  for (int i = 0; i < 8; ++i) o[base + 1u + uint(i)] = i < ma.length() ? float(ma[i]) : -1.0;
  o[base + 9u] = float(mc.length());
  for (int i = 0; i < 4; ++i) o[base + 10u + uint(i)] = i < mc.length() ? mc[i] : -1.0;
  o[base + 14u] = float(mb.length());
  for (int i = 0; i < 4; ++i) o[base + 15u + uint(i)] = i < mb.length() ? float(mb[i]) : -1.0;
}
