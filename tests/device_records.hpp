// Capability records of real devices, written by hand, for the tests that plan and choose
// without a GPU (test_plan, test_policy, test_policy_text).
#pragma once

#include "kvcache/vk/caps.hpp"

namespace tkv::testing {

inline DeviceCaps h100() {
  DeviceCaps c;
  c.name = "NVIDIA H100 80GB HBM3";
  c.vendor_id = 0x10de;
  c.device_id = 0x2330;
  c.driver_version = 0x8ce00000;
  c.vendor = Vendor::nvidia;
  c.device_class = DeviceClass::discrete;
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 32;
  c.compute_units = 132;
  c.max_shared_memory = 49152;
  c.fp16_arithmetic = c.integer_dot_product = c.cooperative_matrix = true;
  return c;
}

// The H100 as the tc decode variant needs it: VK_NV_cooperative_matrix enabled, with the 16x8x16
// f16 shape and the fragment layout kvcache/vk/coopmat_probe.cpp found on it (2026-11-22).
inline DeviceCaps h100_tensor_cores() {
  DeviceCaps c = h100();
  c.cooperative_matrix_nv = true;
  c.cooperative_matrix_shapes = {"16x8x16 f16*f16+f16 subgroup", "16x8x16 f16*f16+f32 subgroup"};
  c.mma_fragment_layout = true;
  return c;
}

// The same under KHR matrices (the H100's default since session 13): B fragments in mma's order.
inline DeviceCaps h100_tensor_cores_khr() {
  DeviceCaps c = h100_tensor_cores();
  c.mma_b_native = true;
  return c;
}

inline DeviceCaps rdna3() {
  DeviceCaps c;
  c.name = "AMD Radeon RX 7700 XT (RADV NAVI32)";
  c.vendor_id = 0x1002;
  c.device_id = 0x747e;
  c.driver_version = 0x5c0000;
  c.vendor = Vendor::amd;
  c.device_class = DeviceClass::discrete;
  c.subgroup_size = 64;
  c.min_subgroup_size = 32;
  c.max_subgroup_size = 64;
  c.compute_units = 48;
  c.max_shared_memory = 65536;
  c.fp16_arithmetic = c.integer_dot_product = c.cooperative_matrix = true;
  return c;
}

inline DeviceCaps arc() {
  DeviceCaps c;
  c.name = "Intel(R) Arc(tm) A770 Graphics (DG2)";
  c.vendor_id = 0x8086;
  c.device_id = 0x56a0;
  c.driver_version = 0x5c0000;
  c.vendor = Vendor::intel;
  c.device_class = DeviceClass::discrete;
  c.subgroup_size = 32;
  c.min_subgroup_size = 8;
  c.max_subgroup_size = 32;
  c.compute_units = 32;
  c.max_shared_memory = 65536;
  c.fp16_arithmetic = c.integer_dot_product = true;
  return c;
}

inline DeviceCaps apple_m2() {
  DeviceCaps c;
  c.name = "Apple M2 Max";
  c.vendor_id = 0x106b;
  c.device_id = 0x1a020209;
  c.vendor = Vendor::apple;
  c.device_class = DeviceClass::integrated;
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 32;
  c.max_shared_memory = 32768;
  return c;
}

inline DeviceCaps lavapipe() {
  DeviceCaps c;
  c.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  c.vendor_id = 0x10005;
  c.device_id = 0;
  c.driver_version = 0x5c0001;
  c.vendor = Vendor::mesa_cpu;
  c.device_class = DeviceClass::cpu;
  c.subgroup_size = c.min_subgroup_size = c.max_subgroup_size = 8;
  c.max_shared_memory = 32768;
  return c;
}

inline DeviceCaps swiftshader() {  // a CPU driver whose vendor id is not Mesa's
  DeviceCaps c = lavapipe();
  c.name = "SwiftShader Device (Subzero)";
  c.vendor_id = 0x1ae0;
  c.vendor = Vendor::other;
  return c;
}

}  // namespace tkv::testing
