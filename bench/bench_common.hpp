// What the Google Benchmark programs share: one Vulkan context per process, environment knobs.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "kvcache/vk/context.hpp"

namespace tkv::bench {

inline std::shared_ptr<vk::Context> context() {
  static auto ctx = vk::Context::create();
  return ctx;
}

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

}  // namespace tkv::bench
