// VK_NV_cooperative_matrix SPIR-V as VK_KHR_cooperative_matrix SPIR-V. Debian's glslc compiles
// only the NV extension's GLSL; KHR matrices carry their use (A, B or accumulator), so a driver can
// keep a B operand in the MMA's own register order instead of transposing it before every use
// (NVIDIA's driver does that for NV matrices: MOVM instructions in the tc loop, tuning log section
// 16). Each NV matrix type takes its use from its shape: f16 16x16 A, f16 16x8 B, f32 accumulator
// (the shapes decode_tc.comp and coopmat_probe.comp use); loads and stores take a row/column-major
// layout constant for NV's boolean. The context uses it unless TKV_COOPMAT_KHR=0
// (Context::coopmat_khr(), after a probe of the KHR fragments' layout); B fragments are then in mma's own order, which
// decode_tc.comp's B_NATIVE builds (H100: no MOVM left in the tile loop, turbo3 128K -5%).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tkv::vk {

// The rewritten module; empty when `words` uses no NV cooperative matrix. Throws Error
// (invalid_argument) naming the problem where a matrix type's use cannot be told from its shape.
std::vector<uint32_t> coopmat_nv_to_khr(std::span<const uint32_t> words);

}  // namespace tkv::vk
