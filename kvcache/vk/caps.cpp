#include "kvcache/vk/caps.hpp"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <cstring>

namespace tkv {

uint32_t DeviceCaps::smallest_subgroup() const {
  return std::max<uint32_t>(4, min_subgroup_size ? min_subgroup_size : subgroup_size);
}

uint64_t DeviceCaps::device_local_bytes() const {
  uint64_t total = 0;
  for (const auto& heap : heaps)
    if (heap.device_local) total += heap.size;
  return total;
}

std::string DeviceCaps::unsupported_reason() const {
  if (api_version < VK_API_VERSION_1_2) return "needs Vulkan 1.2, device has " + api_version_string(api_version);
  if (!storage_16bit) return "needs storageBuffer16BitAccess";
  if (!push_descriptor) return "needs VK_KHR_push_descriptor";
  if (!subgroup_arithmetic || !subgroup_shuffle) return "needs subgroup arithmetic and shuffle in compute";
  if (subgroup_size < 4) return "needs a subgroup size of at least 4";
  return {};
}

const char* vendor_name(Vendor vendor) {
  switch (vendor) {
    case Vendor::nvidia: return "NVIDIA";
    case Vendor::amd: return "AMD";
    case Vendor::intel: return "Intel";
    case Vendor::apple: return "Apple";
    case Vendor::arm: return "ARM";
    case Vendor::qualcomm: return "Qualcomm";
    case Vendor::mesa_cpu: return "Mesa";
    case Vendor::other: break;
  }
  return "other";
}

const char* device_class_name(DeviceClass device_class) {
  switch (device_class) {
    case DeviceClass::discrete: return "discrete";
    case DeviceClass::integrated: return "integrated";
    case DeviceClass::virtual_gpu: return "virtual";
    case DeviceClass::cpu: return "cpu";
    case DeviceClass::other: break;
  }
  return "other";
}

Vendor vendor_from_id(uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x10DE: return Vendor::nvidia;
    case 0x1002: case 0x1022: return Vendor::amd;
    case 0x8086: return Vendor::intel;
    case 0x106B: return Vendor::apple;
    case 0x13B5: return Vendor::arm;
    case 0x5143: return Vendor::qualcomm;
    case 0x10005: return Vendor::mesa_cpu;
    default: return Vendor::other;
  }
}

std::string api_version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

}  // namespace tkv
