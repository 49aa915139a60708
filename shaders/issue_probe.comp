#version 450
// Issue-rate probe (turboprof issue): every invocation runs `iters` iterations of a loop whose
// body is BODY copies of 8 independent updates, and writes a word of its result, which the host
// checks against its own. KIND 0: integer updates (shift, shift, xor, add: the integer and logic
// pipes); 1: fp32 fused multiply-adds (the FMA pipes); 4: shift and three-way xor alone (on NVIDIA
// the ALU pipe's SHF and LOP3); 5: integer multiply-adds alone (IMAD, the pipe of the register
// copies the driver writes as IMAD.MOV). Timed over enough warps, the rate of
// updates against the loop's machine code (bench/sass_loop.py) is the rate at which an SM
// issues that kind of instruction, and BODY sets the loop's code size at the same work per
// instruction (docs/targets.md: what holds the tile loop near half the issue rate).
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KIND = 0;
layout(constant_id = 2) const uint BODY = 1;

layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint iters; } pc;

void main() {
  const uint id = gl_GlobalInvocationID.x;
  uint a[8];
  float f[8];
  [[unroll]] for (uint k = 0; k < 8u; ++k) {
    a[k] = id * 8u + k + 1u;
    f[k] = float(k + 1u) + float(id & 1023u) / 1024.0;
  }
  for (uint it = 0; it < pc.iters; ++it) {
    [[unroll]] for (uint b = 0; b < BODY; ++b) {
      [[unroll]] for (uint k = 0; k < 8u; ++k) {
        if (KIND == 0u) a[k] = ((a[k] << 5) ^ (a[k] >> 3)) + (0x9e3779b9u * (b + 1u) + k);
        else if (KIND == 4u) a[k] = a[k] ^ (a[k] >> 3) ^ (0x9e3779b9u * (b + 1u) + k);
        else if (KIND == 5u) a[k] = a[k] * 0x9e3779b1u + a[(k + 1u) % 8u];
        else f[k] = fma(f[k], 0.9990234375, float(b % 7u + 1u) * 0.0009765625);
      }
    }
  }
  uint x = 0u;
  float s = 0.0;
  [[unroll]] for (uint k = 0; k < 8u; ++k) {
    x ^= a[k];
    s += f[k];
  }
  dst[id] = KIND == 1u ? floatBitsToUint(s) : x;
}
