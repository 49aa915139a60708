// Vulkan failures become tkv::Error naming the call and the VkResult: ErrorCode::device_lost for
// VK_ERROR_DEVICE_LOST, capacity for out-of-memory results, vulkan for the rest.
//
// Fault injection (for tests; off by default): inject_fault() makes a later call checked with
// TKV_VK fail with a chosen VkResult without running it, as the driver would have answered. Off,
// it costs TKV_VK one relaxed atomic load. The environment can arm it for a whole process:
// TKV_INJECT_FAULT=<result>:<after>[:sticky], e.g. device_lost:40:sticky or
// out_of_device_memory:3 (result: device_lost, out_of_device_memory, out_of_host_memory,
// initialization_failed), read once at start-up.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace tkv::vk {

std::string_view result_name(VkResult result);
[[noreturn]] void throw_vk_error(std::string_view call, VkResult result);

inline void check(VkResult result, std::string_view call) {
  if (result != VK_SUCCESS) throw_vk_error(call, result);
}

// Arms the fault: the next `after` TKV_VK calls run normally, the one after that returns `result`
// (an error code) without being made. sticky: every later TKV_VK call fails the same way too,
// as after a real device loss, until clear_fault(). One fault at a time; a new call replaces it.
// Thread-safe.
void inject_fault(VkResult result, uint64_t after, bool sticky = false);
void clear_fault();
// TKV_VK calls failed by injection since the process started.
uint64_t injected_fault_count();
// TKV_VK calls made (or failed by injection) while a fault was armed; lets a test count the
// checked calls of an operation (arm a fault far in the future, run it, read, clear).
uint64_t checked_calls_while_armed();

namespace detail {
extern std::atomic<bool> fault_armed;
// Called only while armed: VK_SUCCESS when this call should run, else the result to report.
VkResult next_fault();

template <class Call>
inline void check_call(Call&& call, std::string_view name) {
  VkResult r = fault_armed.load(std::memory_order_relaxed) ? next_fault() : VK_SUCCESS;
  if (r == VK_SUCCESS) r = call();
  check(r, name);
}
}  // namespace detail

}  // namespace tkv::vk

// TKV_VK(vkCreateBuffer(...)): throws naming "vkCreateBuffer" and the result.
#define TKV_VK(call) ::tkv::vk::detail::check_call([&]() -> VkResult { return (call); }, #call)
