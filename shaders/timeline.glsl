// Phase stamps of a decode workgroup, for turboprof's timeline (attention/timeline.hpp reads
// them): compiled in only where TKV_TIMELINE is defined (the decode_timeline and
// decode_tc_timeline pipelines), so the other kernels are the same code with or without this file.
// Invocation 0 of each workgroup writes the device's real-time clock (VK_KHR_shader_clock) at
// each phase into 8 uvec2 slots per workgroup (x + X (y + Y z) of the dispatch): 0 start,
// 1 prologue done, 2 tiles done, 3 partials written and arrival counted, 4 splits merged,
// 5 end; slot 7 = (flags, split): bit 0 written, bit 1 the split had tokens, bit 2 it merged.
#ifdef TKV_TIMELINE
layout(std430, binding = 8) writeonly buffer Timeline { uvec2 timeline[]; };
uint tl_slot(uint phase) {
  const uint wg = gl_WorkGroupID.x + gl_NumWorkGroups.x * (gl_WorkGroupID.y + gl_NumWorkGroups.y * gl_WorkGroupID.z);
  return wg * 8u + phase;
}
#define TL_STAMP(phase) \
  if (gl_LocalInvocationIndex == 0u) timeline[tl_slot(phase)] = clockRealtime2x32EXT()
#define TL_END(split, had_tokens, merged) \
  if (gl_LocalInvocationIndex == 0u)      \
  timeline[tl_slot(7u)] = uvec2(1u | ((had_tokens) ? 2u : 0u) | ((merged) ? 4u : 0u), split)
#else
#define TL_STAMP(phase)
#define TL_END(split, had_tokens, merged)
#endif
