#version 450
// Streaming read: every invocation sums uvec4 words of the input with a grid-stride loop and
// writes one word per workgroup, so the read cannot be optimised away. This measures the
// device's read bandwidth (the "read floor" of performance.md) and tests the runtime.
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint count; } pc;  // uvec4 words

shared uint partial[64];

void main() {
  uint acc = 0;
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < pc.count; i += stride) {
    const uvec4 v = src[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  acc = subgroupAdd(acc);
  if (gl_SubgroupInvocationID == 0) partial[gl_SubgroupID] = acc;
  barrier();
  if (gl_LocalInvocationIndex == 0) {
    uint total = 0;
    for (uint s = 0; s < gl_NumSubgroups; ++s) total += partial[s];
    dst[gl_WorkGroupID.x] = total;
  }
}
