#include "kvcache/vk/check.hpp"

#include <string>

#include "kvcache/error.hpp"

namespace tkv::vk {

std::string_view result_name(VkResult result) {
  switch (result) {
#define TKV_CASE(r) \
  case r:           \
    return #r;
    TKV_CASE(VK_SUCCESS)
    TKV_CASE(VK_NOT_READY)
    TKV_CASE(VK_TIMEOUT)
    TKV_CASE(VK_EVENT_SET)
    TKV_CASE(VK_EVENT_RESET)
    TKV_CASE(VK_INCOMPLETE)
    TKV_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    TKV_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TKV_CASE(VK_ERROR_INITIALIZATION_FAILED)
    TKV_CASE(VK_ERROR_DEVICE_LOST)
    TKV_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    TKV_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    TKV_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    TKV_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    TKV_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    TKV_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    TKV_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TKV_CASE(VK_ERROR_FRAGMENTED_POOL)
    TKV_CASE(VK_ERROR_UNKNOWN)
    TKV_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    TKV_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    TKV_CASE(VK_ERROR_FRAGMENTATION)
    TKV_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    TKV_CASE(VK_PIPELINE_COMPILE_REQUIRED)
#undef TKV_CASE
    default:
      return "VK_RESULT_UNKNOWN";
  }
}

void throw_vk_error(std::string_view call, VkResult result) {
  std::string name(call);
  if (auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
  fail(result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY
           ? ErrorCode::capacity
           : ErrorCode::vulkan,
       name + " failed: " + std::string(result_name(result)) + " (" + std::to_string(int(result)) + ")");
}

}  // namespace tkv::vk
