// The dispatch policy: from a device's capability record and a call's shape to the kernel
// choice (dequant variant and tuning knobs); the split count stays the plan's unless the policy
// names one. Pure: tested on capability records written by hand.
//
// Precedence, highest first: an explicit choice in DecodeOptions; the environment
// (TKV_VARIANT=mag4, TKV_SPLITS, TKV_DPL, TKV_UNROLL); a policy file written by
// `turboprof tune` for this device (vendor, device id and driver version must match); the
// built-in defaults per vendor and class (NVIDIA, AMD, Intel, Apple through MoltenVK, CPU
// drivers), which carry context-depth thresholds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/plan.hpp"
#include "attention/variants.hpp"
#include "kvcache/vk/caps.hpp"

namespace tkv {

// One rule: applies to calls whose K type (or any, when unset) and context depth fall in
// [min_context, max_context) ; the first matching rule of a policy wins.
struct PolicyRule {
  std::optional<KvType> k_type;        // unset: any type
  uint32_t min_context = 0;
  uint32_t max_context = UINT32_MAX;   // exclusive
  Variant variant = Variant::mag4;
  uint32_t splits = 0;                 // 0: the plan's
  uint32_t dims_per_lane = 0;          // 0: the plan's
  uint32_t unroll = 0;                 // 0: the plan's
};

struct PolicyChoice {
  PlanRequest request;                 // variant and knobs to plan with
  std::string reason;                  // which source and rule decided, for the debug log
};

class DispatchPolicy {
 public:
  // The built-in defaults for a device (by vendor and class).
  static DispatchPolicy defaults(const DeviceCaps& caps);
  // Reads a policy file (JSON). Throws tkv::Error(io) naming the file and the problem when it is
  // unreadable or malformed, or when its device key does not match `caps`.
  static DispatchPolicy load(const std::string& path, const DeviceCaps& caps);
  // The policy an engine uses on `caps`: the file at `path` (or the default location when empty)
  // if present and valid, else the defaults; a malformed file is reported through `warning`.
  static DispatchPolicy for_device(const DeviceCaps& caps, const std::string& path = "",
                                   std::string* warning = nullptr);
  // Where turboprof tune writes, and engines look for, this device's policy file:
  // <TKV_CACHE_DIR or ~/.cache/turbokv>/policy-<vendor id>-<device id>-<driver version>.json
  static std::string default_path(const DeviceCaps& caps);

  // The choice for a call (pure; ignores the environment).
  PolicyChoice choose(const DecodeShape& shape) const;
  // Writes the policy as JSON (with its device key).
  void save(const std::string& path, const DeviceCaps& caps) const;

  const std::vector<PolicyRule>& rules() const { return rules_; }
  void set_rules(std::vector<PolicyRule> rules) { rules_ = std::move(rules); }
  const std::string& source() const { return source_; }  // "defaults: NVIDIA", "file: /path"

 private:
  std::vector<PolicyRule> rules_;
  std::string source_;
};

// Applies the environment's overrides (TKV_VARIANT, TKV_SPLITS, TKV_DPL, TKV_UNROLL) to a choice;
// a malformed value is an error naming the variable.
PolicyChoice apply_environment(PolicyChoice choice);

}  // namespace tkv
