#include "attention/api/capi_status.hpp"

#include <exception>
#include <new>

#include "kvcache/error.hpp"

namespace turbokv::detail {
namespace {

thread_local std::string g_last_error;

tkv_status status_of(tkv::ErrorCode code) {
  switch (code) {
    case tkv::ErrorCode::invalid_argument: return TKV_ERROR_INVALID_ARGUMENT;
    case tkv::ErrorCode::capacity: return TKV_ERROR_CAPACITY;
    case tkv::ErrorCode::not_found: return TKV_ERROR_NOT_FOUND;
    case tkv::ErrorCode::numeric: return TKV_ERROR_NUMERIC;
    case tkv::ErrorCode::vulkan: return TKV_ERROR_VULKAN;
    case tkv::ErrorCode::no_device: return TKV_ERROR_NO_DEVICE;
    case tkv::ErrorCode::io: return TKV_ERROR_IO;
    case tkv::ErrorCode::device_lost: return TKV_ERROR_DEVICE_LOST;
  }
  return TKV_ERROR_INTERNAL;  // a code added to tkv::ErrorCode without a status here
}

}  // namespace

tkv_status set_error(tkv_status status, const std::string& message) noexcept {
  try {
    g_last_error = message;
  } catch (...) {
    g_last_error.clear();  // no memory for the message: the status still says what happened
  }
  return status;
}

tkv_status status_of_current_exception(const char* function) noexcept {
  const std::string prefix = std::string(function) + ": ";
  try {
    throw;
  } catch (const tkv::Error& e) {
    return set_error(status_of(e.code()), prefix + e.what());
  } catch (const std::bad_alloc& e) {
    return set_error(TKV_ERROR_OUT_OF_MEMORY, prefix + "out of host memory (" + e.what() + ")");
  } catch (const std::exception& e) {
    return set_error(TKV_ERROR_INTERNAL, prefix + "unexpected error: " + e.what());
  } catch (...) {
    return set_error(TKV_ERROR_INTERNAL, prefix + "unexpected exception of unknown type");
  }
}

}  // namespace turbokv::detail

extern "C" {

const char* tkv_last_error(void) { return turbokv::detail::g_last_error.c_str(); }
void tkv_clear_last_error(void) { turbokv::detail::g_last_error.clear(); }

const char* tkv_status_name(tkv_status status) {
  switch (status) {
    case TKV_SUCCESS: return "TKV_SUCCESS";
    case TKV_ERROR_INVALID_ARGUMENT: return "TKV_ERROR_INVALID_ARGUMENT";
    case TKV_ERROR_CAPACITY: return "TKV_ERROR_CAPACITY";
    case TKV_ERROR_NOT_FOUND: return "TKV_ERROR_NOT_FOUND";
    case TKV_ERROR_NUMERIC: return "TKV_ERROR_NUMERIC";
    case TKV_ERROR_VULKAN: return "TKV_ERROR_VULKAN";
    case TKV_ERROR_NO_DEVICE: return "TKV_ERROR_NO_DEVICE";
    case TKV_ERROR_IO: return "TKV_ERROR_IO";
    case TKV_ERROR_OUT_OF_MEMORY: return "TKV_ERROR_OUT_OF_MEMORY";
    case TKV_ERROR_INTERNAL: return "TKV_ERROR_INTERNAL";
    case TKV_ERROR_DEVICE_LOST: return "TKV_ERROR_DEVICE_LOST";
  }
  return "unknown status";
}

}  // extern "C"
