// What a VkDevice must have enabled for the engine: the one list that Context::create enables on
// a device it creates and that Context::adopt checks on a device the host created, so that both
// paths run the kernels with the same extensions and features.
#pragma once

#include <vulkan/vulkan.h>

#include <set>
#include <string>
#include <vector>

namespace tkv::vk {

struct DeviceRequirements {
  // Extensions that must be enabled (VK_KHR_push_descriptor).
  std::vector<const char*> extensions;
  // Extensions used when enabled and present (subgroup size control, pipeline executable
  // properties for profiling); never required.
  std::vector<const char*> optional_extensions;
  // Features to enable: each is true when the device supports it (the kernels may use it then).
  bool shader_int16 = false;                 // VkPhysicalDeviceFeatures
  bool shader_int64 = false;                 // VkPhysicalDeviceFeatures
  bool storage_buffer_16bit_access = false;  // VkPhysicalDeviceVulkan11Features (always required)
  bool storage_buffer_8bit_access = false;   // VkPhysicalDeviceVulkan12Features
  bool shader_float16 = false;               // VkPhysicalDeviceVulkan12Features
  bool shader_int8 = false;                  // VkPhysicalDeviceVulkan12Features
  // VkPhysicalDeviceVulkan12Features vulkanMemoryModel and vulkanMemoryModelDeviceScope, both
  // where both are present: the tensor-core kernels' SPIR-V declares the Vulkan memory model (at
  // device scope), so the tc variant runs only where they are enabled. Optional.
  bool vulkan_memory_model = false;
};

// Names of the extensions the physical device offers.
std::set<std::string> device_extension_names(VkPhysicalDevice physical_device);

// The requirements for `physical_device` (Vulkan 1.1 queries; no device needed).
DeviceRequirements device_requirements(VkPhysicalDevice physical_device);

// What a device was created with, read from the VkDeviceCreateInfo the host used: the extension
// list and the features of pEnabledFeatures or of the pNext chain (VkPhysicalDeviceFeatures2, the
// Vulkan 1.1/1.2 feature structs, or the older per-feature structs they absorbed).
struct EnabledDevice {
  std::vector<std::string> extensions;
  std::vector<uint32_t> queue_families;
  bool shader_int16 = false, shader_int64 = false, storage_buffer_16bit_access = false,
       storage_buffer_8bit_access = false, shader_float16 = false, shader_int8 = false;
  bool vulkan_memory_model = false;    // vulkanMemoryModel and vulkanMemoryModelDeviceScope, both
  bool cooperative_matrix_nv = false;  // VK_NV_cooperative_matrix and its cooperativeMatrix feature
  bool has_extension(const char* name) const;
};
EnabledDevice read_device_create_info(const VkDeviceCreateInfo& info);

// What `enabled` lacks of `required`, one item per line naming the extension or the feature and
// the struct it belongs to; "" when nothing is missing.
std::string missing_requirements(const DeviceRequirements& required, const EnabledDevice& enabled);

}  // namespace tkv::vk
