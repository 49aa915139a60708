#version 450
// The issue-rate probe with tensor-core MMAs (turboprof issue --kinds mma,mix; needs
// VK_NV_cooperative_matrix): every subgroup runs `iters` iterations of a loop whose body is BODY
// copies of INTS independent integer updates a thread (issue_probe.comp's: shift, shift, xor,
// add) and MMAS independent 16x8x16 f16 MMAs into f32 accumulators, one per accumulator, so that
// the rate of a loop that mixes MMAs into plain work can be set beside the plain work's
// (docs/targets.md: the tile loop runs near half the issue rate). A and B hold 1/16 everywhere,
// so each MMA adds 16/256 = 1/16 to each accumulator element, exactly; each invocation writes
// its integer result and the sum of its accumulators' first elements, which the host checks.
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint INTS = 8;  // integer updates a body copy: 0 or 8
layout(constant_id = 2) const uint BODY = 1;
layout(constant_id = 3) const uint MMAS = 2;  // MMAs a body copy: 1-8

layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint iters; } pc;

shared float16_t ones[16 * 16];

void main() {
  const uint id = gl_GlobalInvocationID.x;
  for (uint i = gl_LocalInvocationIndex; i < 256u; i += gl_WorkGroupSize.x) ones[i] = float16_t(0.0625);
  barrier();
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a;
  fcoopmatNV<16, gl_ScopeSubgroup, 16, 8> b;
  coopMatLoadNV(a, ones, 0, 16, false);
  coopMatLoadNV(b, ones, 0, 8, false);
  fcoopmatNV<32, gl_ScopeSubgroup, 16, 8> c[8];
  uint v[8];
  [[unroll]] for (uint k = 0; k < 8u; ++k) {
    c[k] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 8>(float(k));
    v[k] = id * 8u + k + 1u;
  }
  for (uint it = 0; it < pc.iters; ++it) {
    [[unroll]] for (uint bc = 0; bc < BODY; ++bc) {
      [[unroll]] for (uint k = 0; k < 8u; ++k)
        if (k < INTS) v[k] = ((v[k] << 5) ^ (v[k] >> 3)) + (0x9e3779b9u * (bc + 1u) + k);
      [[unroll]] for (uint k = 0; k < 8u; ++k)
        if (k < MMAS) c[k] = coopMatMulAddNV(a, b, c[k]);
    }
  }
  uint x = 0u;
  float s = 0.0;
  [[unroll]] for (uint k = 0; k < 8u; ++k) {
    x ^= v[k];
    s += c[k][0];
  }
  dst[2u * id] = x;
  dst[2u * id + 1u] = floatBitsToUint(s);
}
