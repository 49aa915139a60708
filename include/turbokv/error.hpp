// turbokv's one exception type. Every failure the library reports is a tkv::Error whose code says
// what kind of problem it is and whose message names it ("decode: layer 40 is out of range (the
// cache has 32)"). Allocation failure surfaces as std::bad_alloc. The C API (turbokv.h) maps both
// to status codes; nothing crosses it as an exception.
//
// Part of the installed public API; the library's own sources reach it through kvcache/error.hpp.
#pragma once

#include <stdexcept>
#include <string>

namespace tkv {

enum class ErrorCode {
  invalid_argument,   // bad shapes, unknown names, out-of-range values
  capacity,           // the cache or a buffer has no room
  not_found,          // unknown sequence or device
  numeric,            // NaN / Inf in input rows
  vulkan,             // a Vulkan call failed (message names the call and the VkResult)
  no_device,          // no Vulkan device present
  io,                 // file reading / writing / parsing
  device_lost,        // VK_ERROR_DEVICE_LOST: the context is unusable; destroy its objects, make a new one
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

[[noreturn]] inline void fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

}  // namespace tkv

// The public C++ API (turbokv/turbokv.hpp) lives in namespace turbokv and throws these.
namespace turbokv {
using tkv::Error;
using tkv::ErrorCode;
}  // namespace turbokv
