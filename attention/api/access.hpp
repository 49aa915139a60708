// The internal objects behind the public handles, for the C API and the tests (not installed).
#pragma once

#include "attention/decoder.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/context.hpp"
#include "turbokv/turbokv.hpp"

namespace turbokv::detail {

struct Access {
  static tkv::vk::Context& context(const Engine& engine) { return engine.context(); }
  static tkv::KvCache& cache(const Cache& cache) { return cache.get(); }
  static tkv::Decoder& decoder(const Decoder& decoder) { return decoder.get(); }
};

}  // namespace turbokv::detail
