#include "kvcache/vk/requirements.hpp"

#include <algorithm>
#include <cstring>

namespace tkv::vk {

std::set<std::string> device_extension_names(VkPhysicalDevice pd) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> props(count);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, props.data());
  std::set<std::string> names;
  for (const auto& p : props) names.insert(p.extensionName);
  return names;
}

DeviceRequirements device_requirements(VkPhysicalDevice pd) {
  DeviceRequirements r;
  r.extensions = {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME};
  const auto present = device_extension_names(pd);
  for (const char* name : {VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME,
                           // Compiler statistics of our pipelines (registers, spills): TKV_PIPELINE_STATS=1.
                           VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME,
                           // Tensor cores for the tc decode variant (with its cooperativeMatrix feature).
                           VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,
                           // Pipelines without the driver's bounds checks on storage buffers
                           // (PipelineKey::bounds_checks): the decode kernels' loads.
                           VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME})
    if (present.count(name)) r.optional_extensions.push_back(name);

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &f11;
  f11.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(pd, &supported);
  // Enable only what the kernels use, where present.
  r.shader_int16 = supported.features.shaderInt16;
  r.shader_int64 = supported.features.shaderInt64;
  r.storage_buffer_16bit_access = f11.storageBuffer16BitAccess;
  r.storage_buffer_8bit_access = f12.storageBuffer8BitAccess;
  r.shader_float16 = f12.shaderFloat16;
  r.shader_int8 = f12.shaderInt8;
  r.vulkan_memory_model = f12.vulkanMemoryModel && f12.vulkanMemoryModelDeviceScope;
  return r;
}

bool EnabledDevice::has_extension(const char* name) const {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

EnabledDevice read_device_create_info(const VkDeviceCreateInfo& info) {
  EnabledDevice e;
  for (uint32_t i = 0; i < info.enabledExtensionCount; ++i)
    if (info.ppEnabledExtensionNames && info.ppEnabledExtensionNames[i])
      e.extensions.emplace_back(info.ppEnabledExtensionNames[i]);
  for (uint32_t i = 0; i < info.queueCreateInfoCount; ++i)
    if (info.pQueueCreateInfos) e.queue_families.push_back(info.pQueueCreateInfos[i].queueFamilyIndex);
  auto core = [&](const VkPhysicalDeviceFeatures& f) {
    e.shader_int16 = e.shader_int16 || f.shaderInt16;
    e.shader_int64 = e.shader_int64 || f.shaderInt64;
  };
  if (info.pEnabledFeatures) core(*info.pEnabledFeatures);
  // The pNext chain: every struct starts with sType and pNext.
  for (auto* s = static_cast<const VkBaseInStructure*>(info.pNext); s; s = s->pNext) {
    switch (s->sType) {
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
        core(reinterpret_cast<const VkPhysicalDeviceFeatures2*>(s)->features);
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
        e.storage_buffer_16bit_access = e.storage_buffer_16bit_access ||
                                        reinterpret_cast<const VkPhysicalDeviceVulkan11Features*>(s)->storageBuffer16BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
        e.storage_buffer_16bit_access = e.storage_buffer_16bit_access ||
                                        reinterpret_cast<const VkPhysicalDevice16BitStorageFeatures*>(s)->storageBuffer16BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
        const auto* f = reinterpret_cast<const VkPhysicalDeviceVulkan12Features*>(s);
        e.storage_buffer_8bit_access = e.storage_buffer_8bit_access || f->storageBuffer8BitAccess;
        e.shader_float16 = e.shader_float16 || f->shaderFloat16;
        e.shader_int8 = e.shader_int8 || f->shaderInt8;
        e.vulkan_memory_model = e.vulkan_memory_model || (f->vulkanMemoryModel && f->vulkanMemoryModelDeviceScope);
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES: {
        const auto* f = reinterpret_cast<const VkPhysicalDeviceVulkanMemoryModelFeatures*>(s);
        e.vulkan_memory_model = e.vulkan_memory_model || (f->vulkanMemoryModel && f->vulkanMemoryModelDeviceScope);
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
        e.storage_buffer_8bit_access = e.storage_buffer_8bit_access ||
                                       reinterpret_cast<const VkPhysicalDevice8BitStorageFeatures*>(s)->storageBuffer8BitAccess;
        break;
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES: {
        const auto* f = reinterpret_cast<const VkPhysicalDeviceShaderFloat16Int8Features*>(s);
        e.shader_float16 = e.shader_float16 || f->shaderFloat16;
        e.shader_int8 = e.shader_int8 || f->shaderInt8;
        break;
      }
      case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV:
        e.cooperative_matrix_nv = e.cooperative_matrix_nv ||
                                  reinterpret_cast<const VkPhysicalDeviceCooperativeMatrixFeaturesNV*>(s)->cooperativeMatrix;
        break;
      default:
        break;
    }
  }
  e.cooperative_matrix_nv = e.cooperative_matrix_nv && e.has_extension(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  return e;
}

std::string missing_requirements(const DeviceRequirements& required, const EnabledDevice& enabled) {
  std::string missing;
  auto add = [&](const std::string& what) { missing += (missing.empty() ? "" : "\n") + what; };
  for (const char* name : required.extensions)
    if (!enabled.has_extension(name)) add(std::string("extension ") + name);
  struct Feature {
    bool required, enabled;
    const char* name;
  };
  const Feature features[] = {
      {required.shader_int16, enabled.shader_int16, "VkPhysicalDeviceFeatures::shaderInt16"},
      {required.shader_int64, enabled.shader_int64, "VkPhysicalDeviceFeatures::shaderInt64"},
      {required.storage_buffer_16bit_access, enabled.storage_buffer_16bit_access,
       "VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess"},
      {required.storage_buffer_8bit_access, enabled.storage_buffer_8bit_access,
       "VkPhysicalDeviceVulkan12Features::storageBuffer8BitAccess"},
      {required.shader_float16, enabled.shader_float16, "VkPhysicalDeviceVulkan12Features::shaderFloat16"},
      {required.shader_int8, enabled.shader_int8, "VkPhysicalDeviceVulkan12Features::shaderInt8"},
  };
  for (const auto& f : features)
    if (f.required && !f.enabled) add(std::string("feature ") + f.name);
  return missing;
}

}  // namespace tkv::vk
