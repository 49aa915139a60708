// The C API's boundary: runs a call, turning every exception into a tkv_status and the calling
// thread's last error message. Used by every function of attention/api/capi.cpp (and tested directly).
#pragma once

#include <string>

#include "turbokv/turbokv.h"

namespace turbokv::detail {

// Records `message` as the calling thread's last error and returns `status`.
tkv_status set_error(tkv_status status, const std::string& message) noexcept;

// The status of the exception being handled (call inside a catch block): tkv::Error by its code,
// std::bad_alloc as out of memory, any other exception as internal; sets the last error message,
// prefixed by the C function's name.
tkv_status status_of_current_exception(const char* function) noexcept;

// Runs fn(); returns TKV_SUCCESS, or the status of what it threw.
template <class Fn>
tkv_status guarded(const char* function, Fn&& fn) noexcept {
  try {
    fn();
    return TKV_SUCCESS;
  } catch (...) {
    return status_of_current_exception(function);
  }
}

}  // namespace turbokv::detail
