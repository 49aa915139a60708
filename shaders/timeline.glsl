// Phase stamps of a decode workgroup, for turboprof's timeline (attention/timeline.hpp reads
// them): compiled in only where TKV_TIMELINE is defined (the decode*_timeline pipelines), so the
// other kernels are the same code with or without this file.
// Invocation 0 of each workgroup writes the device's real-time clock (VK_KHR_shader_clock) at
// each phase into 8 uvec2 slots per workgroup (x + X (y + Y z) of the dispatch): 0 start,
// 1 prologue done, 2 tiles done, 3 partials written and arrival counted, 4 splits merged,
// 5 end; slot 6: the tc kernel's fused splits that hold new tokens, their new rows quantized
// (invocation 0's subgroup); slot 7 = (flags, split): bit 0 written, bit 1 the split had tokens,
// bit 2 it merged, bit 3 it is the fused append's tail (append_tail.glsl: 1 = the new rows
// quantized and the query rows rotated, 2 = the new tokens attended; split 0).
#ifdef TKV_TIMELINE
#ifdef TKV_FUSED_APPEND
layout(std430, binding = 12) writeonly buffer Timeline { uvec2 timeline[]; };  // (8-11: the new rows, the pools)
#else
layout(std430, binding = 8) writeonly buffer Timeline { uvec2 timeline[]; };
#endif
uint tl_slot(uint phase) {
  const uint wg = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  return wg * 8u + phase;
}
#define TL_STAMP(phase) \
  if (gl_LocalInvocationIndex == 0u) timeline[tl_slot(phase)] = clockRealtime2x32EXT()
#define TL_FLAGS(flags, split) \
  if (gl_LocalInvocationIndex == 0u) timeline[tl_slot(7u)] = uvec2(1u | (flags), split)
#define TL_END(split, had_tokens, merged) TL_FLAGS(((had_tokens) ? 2u : 0u) | ((merged) ? 4u : 0u), split)
#define TL_TAIL_END(merged) TL_FLAGS(2u | ((merged) ? 4u : 0u) | 8u, 0u)
#else
#define TL_STAMP(phase)
#define TL_END(split, had_tokens, merged)
#define TL_TAIL_END(merged)
#endif
