#include "attention/variants.hpp"

#include <string>

#include "kvcache/error.hpp"

namespace tkv {

std::string_view variant_name(Variant v) {
  switch (v) {
    case Variant::lut8: return "lut8";
    case Variant::mag4: return "mag4";
    case Variant::alu: return "alu";
    case Variant::reglut: return "reglut";
    case Variant::qlut: return "qlut";
    case Variant::smem: return "smem";
    case Variant::tc: return "tc";
    case Variant::automatic: return "auto";
  }
  return "?";
}

std::string_view mode_name(ProfileMode m) {
  switch (m) {
    case ProfileMode::full: return "0";
    case ProfileMode::zero: return "1";
    case ProfileMode::norm_only: return "2";
    case ProfileMode::no_sign: return "3";
    case ProfileMode::constant: return "4";
  }
  return "?";
}

std::string_view mode_isolates(ProfileMode m) {
  switch (m) {
    case ProfileMode::full: return "the real cost";
    case ProfileMode::zero: return "ceiling: attention with free dequant, no KV reads";
    case ProfileMode::norm_only: return "cost of touching each block";
    case ProfileMode::no_sign: return "index extraction + table, no sign bits";
    case ProfileMode::constant: return "byte traffic without table lookups";
  }
  return "?";
}

Variant parse_variant(std::string_view name) {
  if (name == "auto") return Variant::automatic;
  std::string known = "auto";
  for (Variant v : kAllVariants) {
    if (variant_name(v) == name) return v;
    known += ", " + std::string(variant_name(v));
  }
  fail(ErrorCode::invalid_argument, "unknown variant '" + std::string(name) + "' (known: " + known + ")");
}

ProfileMode parse_mode(std::string_view text) {
  for (ProfileMode m : kAllModes)
    if (mode_name(m) == text) return m;
  static const std::string_view names[] = {"full", "zero", "norm_only", "no_sign", "constant"};
  for (size_t i = 0; i < 5; ++i)
    if (names[i] == text) return ProfileMode(i);
  fail(ErrorCode::invalid_argument, "unknown profile mode '" + std::string(text) + "' (use 0-4)");
}

bool mode_supported(KvType type, ProfileMode mode) {
  return traits(type).is_turbo || mode != ProfileMode::no_sign;
}

bool variant_applies(KvType type) { return traits(type).is_turbo; }

}  // namespace tkv
