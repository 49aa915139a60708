// The dispatch policy: from a device's capability record and a call's shape to the kernel
// choice (dequant variant and tuning knobs); the split count stays the plan's unless the policy
// names one. Pure: tested on capability records written by hand.
//
// Precedence, highest first: an explicit choice in DecodeOptions; the environment
// (TKV_VARIANT=mag4, TKV_SPLITS, TKV_DPL, TKV_UNROLL); a policy file written by
// `turboprof tune` for this device (vendor, device id and driver version must match); the
// built-in defaults per vendor and class (NVIDIA, AMD, Intel, Apple through MoltenVK, CPU
// drivers), one variant per row. The table of defaults is at the top of
// attention/policy.cpp.
//
// Policy file (JSON):
//   {"format": "turbokv-policy", "version": 1,
//    "device": {"vendor_id": 4318, "device_id": 8960, "driver_version": 2363490304, "name": "NVIDIA H100"},
//    "rules": [{"k_type": "turbo3", "min_context": 0, "max_context": 32768, "variant": "mag4",
//               "splits": 0, "dims_per_lane": 0, "unroll": 0, "subgroups": 0,
//               "note": "1.21x over lut8"}, ...]}
// In a rule only "variant" is required: k_type absent means any type, max_context absent means
// no upper bound, the knobs default to 0 (the plan's), "note" is free text for the debug log.
// Unknown keys inside a rule are errors (a misspelt key would silently widen the rule); other
// top-level keys are ignored, so that tools may keep their measurements next to the rules.
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
  uint32_t max_context = UINT32_MAX;   // exclusive; UINT32_MAX: no upper bound
  Variant variant = Variant::mag4;     // never automatic
  uint32_t splits = 0;                 // 0: the plan's
  uint32_t dims_per_lane = 0;          // 0: the plan's; else 4, 8, 16 or 32
  uint32_t unroll = 0;                 // 0: the plan's; else 1, 2, 4 or 8
  uint32_t subgroups = 0;              // 0: the plan's; else 4, 6 or 8 (the tc kernel's workgroups)
  std::string note;                    // why (measurements); shown in the reason

  bool matches(const DecodeShape& shape) const;
  bool operator==(const PolicyRule&) const = default;
};

struct PolicyChoice {
  PlanRequest request;                 // variant and knobs to plan with
  std::string reason;                  // which source and rule decided, for the debug log
  // The variant was named by the environment or the caller rather than by a policy: it is used
  // as given (a policy's variant may be replaced when the plan cannot run it on a shape).
  bool variant_forced = false;
};

class DispatchPolicy {
 public:
  // The built-in defaults for a device (by vendor and class).
  static DispatchPolicy defaults(const DeviceCaps& caps);
  // Reads a policy file (JSON). Throws tkv::Error(io) naming the file and the problem when it is
  // unreadable or malformed, or when its device key does not match `caps`. Shapes no rule of
  // the file covers fall back to the defaults for `caps`.
  static DispatchPolicy load(const std::string& path, const DeviceCaps& caps);
  // The same from JSON text already in memory (fuzzers, embedded policies); `name` stands for
  // the file in messages and in source() ("file: <name>").
  static DispatchPolicy parse(const std::string& text, const DeviceCaps& caps,
                              const std::string& name = "policy text");
  // The policy an engine uses on `caps`: the file at `path` (or the default location when empty)
  // if present and valid, else the defaults; a malformed file is reported through `warning`
  // (set to "" otherwise). A missing file is not a problem: most devices are never tuned.
  static DispatchPolicy for_device(const DeviceCaps& caps, const std::string& path = "",
                                   std::string* warning = nullptr);
  // Where turboprof tune writes, and engines look for, this device's policy file:
  // <TKV_CACHE_DIR, else $XDG_CACHE_HOME/turbokv, else ~/.cache/turbokv>/
  //   policy-<vendor id>-<device id>-<driver version>.json   (ids in hex)
  // "" when none of those variables is set.
  static std::string default_path(const DeviceCaps& caps);

  // The choice for a call (pure; ignores the environment).
  PolicyChoice choose(const DecodeShape& shape) const;
  // Writes the policy as JSON (with its device key), atomically: a temporary file renamed over
  // `path`, so that a reader never sees half a file. Creates the directory. Throws Error(io).
  void save(const std::string& path, const DeviceCaps& caps) const;

  const std::vector<PolicyRule>& rules() const { return rules_; }
  // Replaces the rules (the defaults stay behind them for shapes they do not cover). Throws
  // Error(invalid_argument) for a rule that a file could not hold (automatic variant, knob
  // values outside their sets, an empty context range).
  void set_rules(std::vector<PolicyRule> rules);
  // "defaults: NVIDIA", "file: /path", "rules set by the caller".
  const std::string& source() const { return source_; }
  // The defaults' catch-all variant (the vendor's), for a shape that a chosen variant cannot run.
  Variant base_variant() const { return fallback_.empty() ? Variant::mag4 : fallback_.back().variant; }

 private:
  std::vector<PolicyRule> rules_;
  std::vector<PolicyRule> fallback_;   // the device's defaults, for shapes no rule covers
  std::string source_;
  std::string fallback_source_;
};

// Applies the environment's overrides (TKV_VARIANT, TKV_SPLITS, TKV_DPL, TKV_UNROLL) to a choice;
// a malformed value is an error naming the variable. Unset or empty variables change nothing;
// TKV_VARIANT=auto keeps the policy's variant.
PolicyChoice apply_environment(PolicyChoice choice);

// The tc kernel's subgroups a workgroup that a rule, the environment or a tool may ask for: 0 (the
// plan's), 4, 6 or 8.
bool subgroups_valid(uint32_t v);

}  // namespace tkv
