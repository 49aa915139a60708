// A device's capability record: plain data, no Vulkan handles, so that planning and the dispatch
// policy can be tested on records written by hand (an H100, an RDNA3, lavapipe) without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tkv {

enum class DeviceClass { discrete, integrated, virtual_gpu, cpu, other };
enum class Vendor { nvidia, amd, intel, apple, arm, qualcomm, mesa_cpu, other };

struct MemoryHeap {
  uint64_t size = 0;
  bool device_local = false;
};

struct DeviceCaps {
  uint32_t index = 0;              // position in the instance's enumeration
  std::string name;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  Vendor vendor = Vendor::other;
  DeviceClass device_class = DeviceClass::other;
  std::string driver_name;         // VkPhysicalDeviceDriverProperties::driverName
  std::string driver_info;
  uint32_t driver_version = 0;
  uint32_t api_version = 0;
  std::string pipeline_cache_uuid; // hex; keys the on-disk pipeline cache and policy files

  uint32_t subgroup_size = 0;
  uint32_t min_subgroup_size = 0;
  uint32_t max_subgroup_size = 0;
  bool subgroup_arithmetic = false;
  bool subgroup_shuffle = false;
  uint32_t compute_units = 0;      // SMs / CUs; 0 when the driver does not say
  uint32_t max_shared_memory = 0;  // bytes per workgroup
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_push_constants = 128;  // bytes (Vulkan's minimum)
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_allocation_size = 0;

  bool fp16_arithmetic = false;
  bool int8_arithmetic = false;
  bool storage_16bit = false;
  bool storage_8bit = false;
  bool integer_dot_product = false;
  bool cooperative_matrix = false;      // VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix
  // VK_NV_cooperative_matrix (what Debian's glslc compiles) enabled on the device, with the Vulkan
  // memory model (vulkanMemoryModel, vulkanMemoryModelDeviceScope) that the tc kernels' SPIR-V declares
  bool cooperative_matrix_nv = false;
  // Its fragments are laid out as NVIDIA's mma.m16n8k16 (checked on the device by
  // attention/tensor_probe.cpp; the tc decode variant builds fragments in registers).
  bool mma_fragment_layout = false;
  // The tc pipelines run as KHR matrices whose B fragments are in mma.m16n8k16's own order
  // (Context::coopmat_khr(), after its probe): what the tc kernel's rows16 form needs.
  bool mma_b_native = false;
  std::vector<std::string> cooperative_matrix_shapes;  // NV: "16x8x16 f16*f16+f32 subgroup", ...
  bool push_descriptor = false;
  bool timestamps = false;
  float timestamp_period_ns = 1.0f;

  std::vector<MemoryHeap> heaps;

  uint64_t device_local_bytes() const;
  // The smallest subgroup size a dispatch may get (at least 4): the kernels' register arrays are
  // sized for it.
  uint32_t smallest_subgroup() const;
  // Why this device cannot run the engine ("" when it can).
  std::string unsupported_reason() const;
};

const char* vendor_name(Vendor vendor);
const char* device_class_name(DeviceClass device_class);
Vendor vendor_from_id(uint32_t vendor_id);
std::string api_version_string(uint32_t api_version);

}  // namespace tkv
