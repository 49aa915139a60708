// The SPIR-V embedded at build time (cmake/EmbedShaders.cmake), looked up by shader file stem.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace tkv::vk {

// Empty span when no shader has that name.
std::span<const uint32_t> find_shader(std::string_view name);

}  // namespace tkv::vk
