// Vulkan failures become tkv::Error(ErrorCode::vulkan) naming the call and the VkResult.
#pragma once

#include <vulkan/vulkan.h>

#include <string_view>

namespace tkv::vk {

std::string_view result_name(VkResult result);
[[noreturn]] void throw_vk_error(std::string_view call, VkResult result);

inline void check(VkResult result, std::string_view call) {
  if (result != VK_SUCCESS) throw_vk_error(call, result);
}

}  // namespace tkv::vk

// TKV_VK(vkCreateBuffer(...)): throws naming "vkCreateBuffer" and the result.
#define TKV_VK(call) ::tkv::vk::check((call), #call)
