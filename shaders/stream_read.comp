#version 450
// Streaming read: every invocation XORs uvec4 words of the input with a grid-stride loop, four
// independent loads in flight per iteration, and each workgroup writes one word, so the read
// cannot be optimised away. This measures the device's read bandwidth (the "read floor" of
// performance.md) and tests the runtime.
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint count; } pc;  // uvec4 words

shared uint partial[64];

void main() {
  uvec4 acc = uvec4(0);
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  uint i = gl_GlobalInvocationID.x;
  for (; i + 3 * stride < pc.count; i += 4 * stride) {
    const uvec4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    acc ^= a ^ b ^ c ^ d;
  }
  for (; i < pc.count; i += stride) acc ^= src[i];
  uint x = acc.x ^ acc.y ^ acc.z ^ acc.w;
  x = subgroupXor(x);
  if (gl_SubgroupInvocationID == 0) partial[gl_SubgroupID] = x;
  barrier();
  if (gl_LocalInvocationIndex == 0) {
    uint total = 0;
    for (uint s = 0; s < gl_NumSubgroups; ++s) total ^= partial[s];
    dst[gl_WorkGroupID.x] = total;
  }
}
