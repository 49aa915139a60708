// Specializing a SPIR-V module on the host before the driver sees it (SPIRV-Tools' optimizer):
// the specialization constants become constants, then loops with constant trip counts are
// unrolled fully and arrays indexed by constants are split into scalars.
//
// Why: a kernel's loop bounds and array sizes are specialization constants (shaders/decode.comp),
// so glslc cannot unroll them at build time, and whether a driver unrolls them after
// specialization is up to the driver. NVIDIA's left some rolled in the scalar decode kernel on
// tiles and kept their arrays in local memory (176-368 bytes per invocation, 3.6-8x slower, H100);
// handing every driver straight-line code with no dynamically indexed arrays removes that
// dependence on each compiler's heuristics.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tkv::vk {

// `words` with spec constants 0..constants.size()-1 set to `constants` (32-bit each) and frozen,
// then folded, unrolled and optimised, and validated. Empty (after a warning naming the shader)
// where the optimizer fails or its output is not valid: the caller then leaves the
// specialization to the driver.
std::vector<uint32_t> specialize_spirv(std::span<const uint32_t> words, std::span<const uint32_t> constants,
                                       const std::string& shader);

// Whether `words` is a valid Vulkan 1.2 SPIR-V module (SPIRV-Tools' validator, ~30 ms for the
// decode kernel): checked before a kept file is handed to the driver.
bool valid_spirv(std::span<const uint32_t> words);

}  // namespace tkv::vk
