// Shared by the libFuzzer targets: the entry point's declaration, the one Vulkan context (lavapipe
// when there is no GPU; created once per process, as libFuzzer calls the target many times), and
// the failure of a checked property (a crash libFuzzer records, with the reason on stderr).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "kvcache/vk/context.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tkv::fuzz {

inline std::shared_ptr<vk::Context> context() {
  static std::shared_ptr<vk::Context> ctx = [] {
    vk::ContextOptions o;
    o.cache_dir = (std::filesystem::temp_directory_path() / "tkv-fuzz-pipelines").string();
    o.persist_pipeline_cache = false;  // several fuzzers run at once; none needs it kept
    return vk::Context::create(o);
  }();
  return ctx;
}

[[noreturn]] inline void property_failed(const std::string& what) {
  std::fprintf(stderr, "fuzz property failed: %s\n", what.c_str());
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) property_failed(what);
}

}  // namespace tkv::fuzz
