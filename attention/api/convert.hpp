// Conversions between the public value types (include/turbokv/types.hpp) and the internal ones,
// each checking that an enum value from the caller (possibly through the C API) is one we know.
#pragma once

#include <string>

#include "attention/decoder.hpp"
#include "attention/variants.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/types.hpp"
#include "turbokv/types.hpp"

namespace turbokv::detail {

inline tkv::KvType to_internal(KvType type, const char* what) {
  if (uint32_t(type) > uint32_t(KvType::turbo4))
    tkv::fail(tkv::ErrorCode::invalid_argument,
              std::string(what) + ": unknown KV type " + std::to_string(uint32_t(type)) + " (0..4: f16, q8_0, turbo2, turbo3, turbo4)");
  return tkv::KvType(uint32_t(type));
}

inline void check_format(Format format, const char* what) {
  if (format != Format::f32 && format != Format::f16)
    tkv::fail(tkv::ErrorCode::invalid_argument,
              std::string(what) + ": unknown element format " + std::to_string(uint32_t(format)) + " (0: f32, 1: f16)");
}
inline tkv::RowFormat row_format(Format format, const char* what) {
  check_format(format, what);
  return tkv::RowFormat(uint32_t(format));
}
inline tkv::TensorFormat tensor_format(Format format, const char* what) {
  check_format(format, what);
  return tkv::TensorFormat(uint32_t(format));
}

inline tkv::Variant to_internal(Variant variant) {
  if (variant == Variant::automatic) return tkv::Variant::automatic;
  for (tkv::Variant v : tkv::kAllVariants)
    if (uint32_t(v) == uint32_t(variant)) return v;
  tkv::fail(tkv::ErrorCode::invalid_argument, "decode options: unknown variant " + std::to_string(uint32_t(variant)) +
                                                  " (0..6 or 255 for automatic)");
}

inline tkv::CacheConfig to_internal(const CacheConfig& c) {
  tkv::CacheConfig r;
  r.layers = c.layers;
  r.kv_heads = c.kv_heads;
  r.head_dim = c.head_dim;
  r.k_type = to_internal(c.k_type, "cache config k_type");
  r.v_type = to_internal(c.v_type, "cache config v_type");
  r.page_size = c.page_size;
  r.capacity_tokens = c.capacity_tokens;
  r.max_sequences = c.max_sequences;
  return r;
}

inline tkv::DecodeOptions to_internal(const DecodeOptions& o) {
  tkv::DecodeOptions r;
  r.scale = o.scale;
  r.softcap = o.softcap;
  r.window = o.window;
  r.splits = o.splits;
  r.variant = to_internal(o.variant);
  r.fusion = tkv::AppendFusion(uint32_t(o.fusion));  // (record_append_decode checks the value)
  return r;
}

}  // namespace turbokv::detail
