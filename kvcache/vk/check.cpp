#include "kvcache/vk/check.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
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
  std::string message =
      name + " failed: " + std::string(result_name(result)) + " (" + std::to_string(int(result)) + ")";
  ErrorCode code = ErrorCode::vulkan;
  if (result == VK_ERROR_DEVICE_LOST) {
    code = ErrorCode::device_lost;
    message += ": the device was lost; destroy the objects of this context and create a new one";
  } else if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) {
    code = ErrorCode::capacity;
    message += result == VK_ERROR_OUT_OF_DEVICE_MEMORY ? ": out of device memory" : ": out of host memory";
  }
  fail(code, message);
}

// ---------------------------------------------------------------------------------------------
// Fault injection

namespace detail {
std::atomic<bool> fault_armed{false};
}  // namespace detail

namespace {

struct Fault {
  std::mutex mutex;
  VkResult result = VK_SUCCESS;
  uint64_t remaining = 0;  // calls that still run before the fault
  bool sticky = false;
  bool fired = false;
  uint64_t injected = 0;
  uint64_t calls = 0;
};

Fault& fault() {
  static Fault f;
  return f;
}

// TKV_INJECT_FAULT=<result>:<after>[:sticky], read once when the library is loaded. A malformed
// value is reported on stderr and ignored (a static initializer must not throw).
[[maybe_unused]] const bool kFaultFromEnvironment = [] {
  const char* spec = std::getenv("TKV_INJECT_FAULT");
  if (!spec || !*spec) return false;
  const std::string s(spec);
  const auto colon = s.find(':');
  const std::string what = s.substr(0, colon);
  VkResult result = VK_SUCCESS;
  if (what == "device_lost") result = VK_ERROR_DEVICE_LOST;
  if (what == "out_of_device_memory") result = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  if (what == "out_of_host_memory") result = VK_ERROR_OUT_OF_HOST_MEMORY;
  if (what == "initialization_failed") result = VK_ERROR_INITIALIZATION_FAILED;
  if (result == VK_SUCCESS || colon == std::string::npos) {
    std::fprintf(stderr,
                 "turbokv: ignoring TKV_INJECT_FAULT='%s': not <device_lost|out_of_device_memory|"
                 "out_of_host_memory|initialization_failed>:<after>[:sticky]\n",
                 s.c_str());
    return false;
  }
  const std::string rest = s.substr(colon + 1);
  const auto colon2 = rest.find(':');
  inject_fault(result, std::strtoull(rest.substr(0, colon2).c_str(), nullptr, 10),
               colon2 != std::string::npos && rest.substr(colon2 + 1) == "sticky");
  return true;
}();

}  // namespace

void inject_fault(VkResult result, uint64_t after, bool sticky) {
  if (result >= 0) fail(ErrorCode::invalid_argument, "inject_fault: " + std::string(result_name(result)) +
                                                         " is not an error result");
  Fault& f = fault();
  std::lock_guard lock(f.mutex);
  f.result = result;
  f.remaining = after;
  f.sticky = sticky;
  f.fired = false;
  f.calls = 0;
  detail::fault_armed.store(true, std::memory_order_relaxed);
}

void clear_fault() {
  Fault& f = fault();
  std::lock_guard lock(f.mutex);
  detail::fault_armed.store(false, std::memory_order_relaxed);
  f.result = VK_SUCCESS;
  f.fired = false;
}

uint64_t injected_fault_count() {
  Fault& f = fault();
  std::lock_guard lock(f.mutex);
  return f.injected;
}

uint64_t checked_calls_while_armed() {
  Fault& f = fault();
  std::lock_guard lock(f.mutex);
  return f.calls;
}

VkResult detail::next_fault() {
  Fault& f = fault();
  std::lock_guard lock(f.mutex);
  if (f.result == VK_SUCCESS) return VK_SUCCESS;  // cleared meanwhile
  ++f.calls;
  if (f.fired) {  // only sticky faults stay armed after firing
    ++f.injected;
    return f.result;
  }
  if (f.remaining > 0) {
    --f.remaining;
    return VK_SUCCESS;
  }
  f.fired = true;
  ++f.injected;
  const VkResult r = f.result;
  if (!f.sticky) {
    f.result = VK_SUCCESS;
    fault_armed.store(false, std::memory_order_relaxed);
  }
  return r;
}

}  // namespace tkv::vk
