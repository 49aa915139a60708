#include "attention/policy.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kvcache/error.hpp"

namespace tkv {
namespace {

using nlohmann::json;

// ======================= Built-in defaults: the table to edit =======================
// One row per vendor or class, matched top to bottom (the CPU row first: a CPU driver's vendor
// id says little about its hardware), each naming the variant for every depth (a depth-dependent
// choice belongs in a policy file's rules, which `turboprof tune` writes).
// The NVIDIA and CPU-driver rows are measured; the others are guesses until `turboprof tune` has
// measured such a device: replace them and say where they come from.
struct DefaultRow {
  const char* label;
  bool cpu;        // matches CPU drivers (device class cpu, or Mesa's lavapipe) whatever the vendor
  Vendor vendor;   // else matches this vendor; Vendor::other: any device (the last row)
  Variant variant;
};

constexpr DefaultRow kDefaultTable[] = {
    // Measured on lavapipe (Mesa 22.3, 2 Xeon cores, 2026-11-25, the tile layout, host-specialized;
    // bench/results/2026-11-25-lavapipe-variants.txt): alu fastest
    // for every turbo type, 25-32% under mag4 at 4K-8K (turbo3 4K: alu 13.1 ms, mag4 17.9, smem 18.1,
    // lut8 18.5).
    {"CPU driver", true, Vendor::other, Variant::alu},
    // Measured on an H200 with the streaming kernel (bench/results/2026-11-22-h200-tuning-log.md,
    // section 9): the codebook in shared memory is fastest for every turbo type at 32K and 128K
    // (turbo3 128K: smem 281 us, alu 319, mag4 346, lut8 542). Again on an H100 with the tile
    // layout and host specialization (2026-11-25, session-6 results, spec-ab.txt): smem 313,
    // reglut 354, mag4 380, alu 418, lut8 539. (Where tc is offered it is the default instead.)
    {"NVIDIA", false, Vendor::nvidia, Variant::smem},
    {"AMD", false, Vendor::amd, Variant::alu},
    {"Intel", false, Vendor::intel, Variant::alu},
    {"Apple (MoltenVK)", false, Vendor::apple, Variant::alu},
    {"other", false, Vendor::other, Variant::mag4},
};
// =====================================================================================

constexpr const char* kFormatTag = "turbokv-policy";
constexpr uint32_t kFormatVersion = 1;
// Dispatch grids are limited to 65535 workgroups per dimension on many devices; the split count
// is one dimension of the decode grid.
constexpr uint32_t kMaxSplits = 65535;

const DefaultRow& default_row(const DeviceCaps& caps) {
  const bool cpu = caps.device_class == DeviceClass::cpu || caps.vendor == Vendor::mesa_cpu;
  for (const auto& row : kDefaultTable) {
    if (row.cpu ? cpu : (!cpu && (row.vendor == caps.vendor || row.vendor == Vendor::other))) return row;
  }
  return kDefaultTable[std::size(kDefaultTable) - 1];
}

bool dpl_valid(uint32_t v) { return v == 0 || v == 4 || v == 8 || v == 16 || v == 32; }
bool unroll_valid(uint32_t v) { return v == 0 || v == 1 || v == 2 || v == 4 || v == 8; }

std::string known_variants() {
  std::string s;
  for (Variant v : kAllVariants) s += (s.empty() ? "" : ", ") + std::string(variant_name(v));
  return s;
}

std::string known_types() {
  std::string s;
  for (KvType t : kAllTypes) s += (s.empty() ? "" : ", ") + std::string(type_name(t));
  return s;
}

// Why a rule cannot be used ("" when it can); shared by files and set_rules.
std::string rule_problem(const PolicyRule& r) {
  if (r.variant == Variant::automatic) return "variant must name an implementation (" + known_variants() + ")";
  if (r.min_context >= r.max_context)
    return "min_context " + std::to_string(r.min_context) + " is not below max_context " +
           std::to_string(r.max_context);
  if (r.splits > kMaxSplits) return "splits " + std::to_string(r.splits) + " is above " + std::to_string(kMaxSplits);
  if (!dpl_valid(r.dims_per_lane))
    return "dims_per_lane " + std::to_string(r.dims_per_lane) + " is not one of 0, 4, 8, 16, 32";
  if (!unroll_valid(r.unroll)) return "unroll " + std::to_string(r.unroll) + " is not one of 0, 1, 2, 4, 8";
  if (!subgroups_valid(r.subgroups)) return "subgroups " + std::to_string(r.subgroups) + " is not one of 0, 4, 6, 8";
  return {};
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%x", v);
  return buf;
}

std::string describe_range(const PolicyRule& r) {
  std::string s = r.k_type ? std::string(type_name(*r.k_type)) : "any K type";
  if (r.min_context == 0 && r.max_context == UINT32_MAX) return s + ", any context";
  if (r.max_context == UINT32_MAX) return s + ", context >= " + std::to_string(r.min_context);
  return s + ", context [" + std::to_string(r.min_context) + ", " + std::to_string(r.max_context) + ")";
}

std::string describe_choice(const PolicyRule& r) {
  std::string s = std::string(variant_name(r.variant));
  if (r.splits) s += ", splits " + std::to_string(r.splits);
  if (r.dims_per_lane) s += ", dims per lane " + std::to_string(r.dims_per_lane);
  if (r.unroll) s += ", unroll " + std::to_string(r.unroll);
  if (r.subgroups) s += ", " + std::to_string(r.subgroups) + " subgroups";
  if (!r.note.empty()) s += " (" + r.note + ")";
  return s;
}

PolicyChoice choice_from(const PolicyRule& r, size_t index, const std::string& source) {
  PolicyChoice c;
  c.request.variant = r.variant;
  c.request.splits = r.splits;
  c.request.dims_per_lane = r.dims_per_lane;
  c.request.unroll = r.unroll;
  c.request.subgroups = r.subgroups;
  c.reason = source + " rule " + std::to_string(index + 1) + " (" + describe_range(r) + "): " + describe_choice(r);
  return c;
}

// ---- reading a file: every check names the file and the place in it ----

[[noreturn]] void bad(const std::string& path, const std::string& what) { fail(ErrorCode::io, path + ": " + what); }

const char* json_kind(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

uint32_t get_u32(const std::string& path, const json& j, const std::string& where) {
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v > UINT32_MAX) bad(path, where + " is " + std::to_string(v) + ", above " + std::to_string(UINT32_MAX));
    return uint32_t(v);
  }
  if (j.is_number_integer()) bad(path, where + " is negative (" + std::to_string(j.get<int64_t>()) + ")");
  if (j.is_number_float()) bad(path, where + " must be a whole number, not " + j.dump());
  bad(path, where + " must be a non-negative integer, not " + json_kind(j));
}

std::string get_string(const std::string& path, const json& j, const std::string& where) {
  if (!j.is_string()) bad(path, where + " must be a string, not " + json_kind(j));
  return j.get<std::string>();
}

const json& member(const std::string& path, const json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) bad(path, where + " has no \"" + key + "\"");
  return *it;
}

PolicyRule parse_rule(const std::string& path, const json& j, const std::string& where) {
  if (!j.is_object()) bad(path, where + " must be an object, not " + json_kind(j));
  static const char* const keys[] = {"k_type", "min_context", "max_context", "variant", "splits",
                                     "dims_per_lane", "unroll", "subgroups", "note"};
  for (const auto& [key, value] : j.items()) {
    if (std::find_if(std::begin(keys), std::end(keys), [&](const char* k) { return key == k; }) == std::end(keys)) {
      std::string known;
      for (const char* k : keys) known += (known.empty() ? "" : ", ") + std::string(k);
      bad(path, where + ": unknown key \"" + key + "\" (known: " + known + ")");
    }
  }
  PolicyRule r;
  if (j.contains("k_type")) {
    const std::string name = get_string(path, j["k_type"], where + ".k_type");
    bool found = false;
    for (KvType t : kAllTypes)
      if (type_name(t) == name) r.k_type = t, found = true;
    if (!found) bad(path, where + ".k_type: unknown type \"" + name + "\" (known: " + known_types() + ")");
  }
  const std::string vname = get_string(path, member(path, j, "variant", where), where + ".variant");
  bool found = false;
  for (Variant v : kAllVariants)
    if (variant_name(v) == vname) r.variant = v, found = true;
  if (!found) bad(path, where + ".variant: unknown variant \"" + vname + "\" (known: " + known_variants() + ")");
  if (j.contains("min_context")) r.min_context = get_u32(path, j["min_context"], where + ".min_context");
  if (j.contains("max_context")) r.max_context = get_u32(path, j["max_context"], where + ".max_context");
  if (j.contains("splits")) r.splits = get_u32(path, j["splits"], where + ".splits");
  if (j.contains("dims_per_lane")) r.dims_per_lane = get_u32(path, j["dims_per_lane"], where + ".dims_per_lane");
  if (j.contains("unroll")) r.unroll = get_u32(path, j["unroll"], where + ".unroll");
  if (j.contains("subgroups")) r.subgroups = get_u32(path, j["subgroups"], where + ".subgroups");
  if (j.contains("note")) r.note = get_string(path, j["note"], where + ".note");
  if (const auto problem = rule_problem(r); !problem.empty()) bad(path, where + ": " + problem);
  return r;
}

std::string device_key(uint32_t vendor_id, uint32_t device_id, uint32_t driver_version, const std::string& name) {
  return "vendor 0x" + hex(vendor_id) + ", device 0x" + hex(device_id) + ", driver 0x" + hex(driver_version) +
         (name.empty() ? "" : " (" + name + ")");
}

std::vector<PolicyRule> parse_policy(const std::string& path, const std::string& text, const DeviceCaps& caps) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) bad(path, "empty file, not a policy");
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    // nlohmann names the byte where parsing stopped; a truncated file ends "unexpected end of input".
    bad(path, std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object()) bad(path, std::string("a policy is a JSON object, this is ") + json_kind(root));
  const json& format = member(path, root, "format", "the policy");
  if (!format.is_string() || format.get<std::string>() != kFormatTag)
    bad(path, "\"format\" is " + format.dump() + ", not \"" + kFormatTag + "\" (not a turbokv policy file)");
  const uint32_t version = get_u32(path, member(path, root, "version", "the policy"), "\"version\"");
  if (version != kFormatVersion)
    bad(path, "version " + std::to_string(version) + " is not the one this build reads (" +
                  std::to_string(kFormatVersion) + ")");

  const json& device = member(path, root, "device", "the policy");
  if (!device.is_object()) bad(path, std::string("\"device\" must be an object, not ") + json_kind(device));
  const uint32_t vendor_id = get_u32(path, member(path, device, "vendor_id", "\"device\""), "device.vendor_id");
  const uint32_t device_id = get_u32(path, member(path, device, "device_id", "\"device\""), "device.device_id");
  const uint32_t driver = get_u32(path, member(path, device, "driver_version", "\"device\""), "device.driver_version");
  const std::string name = device.contains("name") ? get_string(path, device["name"], "device.name") : "";
  // The name is for people; ids and driver version are the key (tuned numbers change with drivers).
  if (vendor_id != caps.vendor_id || device_id != caps.device_id || driver != caps.driver_version)
    bad(path, "written for " + device_key(vendor_id, device_id, driver, name) + ", this device is " +
                  device_key(caps.vendor_id, caps.device_id, caps.driver_version, caps.name));

  const json& rules = member(path, root, "rules", "the policy");
  if (!rules.is_array()) bad(path, std::string("\"rules\" must be an array, not ") + json_kind(rules));
  std::vector<PolicyRule> out;
  for (size_t i = 0; i < rules.size(); ++i) out.push_back(parse_rule(path, rules[i], "rules[" + std::to_string(i) + "]"));
  return out;
}

// ---- environment ----

// The variable's value, or nullopt when unset or empty (`TKV_SPLITS= cmd` means "not set").
std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::optional<uint32_t> env_u32(const char* name, bool (*valid)(uint32_t), const char* allowed) {
  const auto text = env_value(name);
  if (!text) return std::nullopt;
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || !valid(v))
    fail(ErrorCode::invalid_argument, std::string(name) + "='" + *text + "' is not " + allowed);
  return v;
}

}  // namespace

bool PolicyRule::matches(const DecodeShape& shape) const {
  if (k_type && *k_type != shape.k_type) return false;
  return shape.max_context >= min_context && shape.max_context < max_context;
}

DispatchPolicy DispatchPolicy::defaults(const DeviceCaps& caps) {
  const DefaultRow& row = default_row(caps);
  DispatchPolicy p;
  p.source_ = std::string("defaults: ") + row.label;
  p.fallback_source_ = p.source_;
  // Where the tensor-core variant runs (VK_NV_cooperative_matrix with the fragment layout it
  // builds), it is the default for every K type at every depth. Measured on an H100 (llama8b, us
  // per call): turbo2 / turbo3 / turbo4, 2026-11-24 (bench/results/2026-11-24-h100-session5/),
  // tc at 8K 22.6 / 23.6 / 25.6, 32K 37.6 / 39.6 / 47.4, 128K 94.7 / 97.5 / 127.7 against smem's
  // 30.2 / 32.8 / 30.7, 61.7 / 70.0 / 61.7, 184 / 215 / 182; f16, 2026-11-27
  // (bench/results/2026-11-27-session18/run10), scalar kernel / tc: m 1 8K 24.1 / 22.5, 32K
  // 59.4 / 57.6; m 3 32K 181 / 70.2; m 8 32K 369.5 / 107.5; q8_0, the same day
  // (bench/results/2026-11-27-session19/run1): m 1 1K 11.8 / 10.6, 8K 25.7 / 19.2, 32K 53.6 /
  // 45.5; m 2 32K 94.7 / 45.3; m 3 32K 227 / 65.0; m 8 32K 460.5 / 110.4; batch 16 8K 145.9 /
  // 118.4. A shape tc cannot run (say two rotation groups) falls back to the row's variant.
  if (caps.cooperative_matrix_nv && caps.mma_fragment_layout && row.vendor == Vendor::nvidia && !row.cpu)
    p.rules_.push_back({.variant = Variant::tc, .note = "tensor cores, measured on an H100"});
  p.rules_.push_back({.variant = row.variant, .note = "built-in placeholder"});
  p.fallback_ = p.rules_;  // still the defaults after set_rules
  return p;
}

DispatchPolicy DispatchPolicy::load(const std::string& path, const DeviceCaps& caps) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) bad(path, std::string("cannot read: ") + std::strerror(errno));
  return parse(text.str(), caps, path);
}

DispatchPolicy DispatchPolicy::parse(const std::string& text, const DeviceCaps& caps, const std::string& name) {
  DispatchPolicy p;
  try {
    p.rules_ = parse_policy(name, text, caps);
  } catch (const json::exception& e) {  // checks come first; this is a net for nlohmann's own
    bad(name, e.what());
  }
  p.source_ = "file: " + name;
  const DispatchPolicy d = defaults(caps);
  p.fallback_ = d.rules_;
  p.fallback_source_ = d.source_;
  return p;
}

DispatchPolicy DispatchPolicy::for_device(const DeviceCaps& caps, const std::string& path, std::string* warning) {
  if (warning) warning->clear();
  const std::string file = path.empty() ? default_path(caps) : path;
  std::error_code ec;
  if (file.empty() || !std::filesystem::exists(file, ec)) return defaults(caps);
  try {
    return load(file, caps);
  } catch (const Error& e) {
    if (warning) *warning = std::string(e.what()) + "; using the built-in defaults";
    return defaults(caps);
  }
}

std::string DispatchPolicy::default_path(const DeviceCaps& caps) {
  // The same directory as the pipeline cache (kvcache/vk/pipeline.cpp).
  std::string dir;
  if (const char* d = std::getenv("TKV_CACHE_DIR"); d && *d) dir = d;
  else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) dir = std::string(x) + "/turbokv";
  else if (const char* h = std::getenv("HOME"); h && *h) dir = std::string(h) + "/.cache/turbokv";
  if (dir.empty()) return {};
  return dir + "/policy-" + hex(caps.vendor_id) + "-" + hex(caps.device_id) + "-" + hex(caps.driver_version) + ".json";
}

void DispatchPolicy::set_rules(std::vector<PolicyRule> rules) {
  for (size_t i = 0; i < rules.size(); ++i)
    if (const auto problem = rule_problem(rules[i]); !problem.empty())
      fail(ErrorCode::invalid_argument, "policy rule " + std::to_string(i + 1) + ": " + problem);
  rules_ = std::move(rules);
  source_ = "rules set by the caller";
}

PolicyChoice DispatchPolicy::choose(const DecodeShape& shape) const {
  PolicyChoice c;
  bool found = false;
  for (size_t i = 0; i < rules_.size() && !found; ++i)
    if (rules_[i].matches(shape)) c = choice_from(rules_[i], i, source_), found = true;
  if (!found) {
    const std::string miss = source_ + ": no rule for " + std::string(type_name(shape.k_type)) + " at context " +
                             std::to_string(shape.max_context);
    for (size_t i = 0; i < fallback_.size() && !found; ++i)
      if (fallback_[i].matches(shape)) {
        c = choice_from(fallback_[i], i, fallback_source_);
        c.reason = miss + "; " + c.reason;
        found = true;
      }
    if (!found) c.reason = miss + "; the plan's variant";
  }
  if (!variant_applies(shape.k_type) && !variant_applies(shape.v_type))
    c.reason += " [variants do not apply to " + std::string(type_name(shape.k_type)) + "/" +
                std::string(type_name(shape.v_type)) + "]";
  return c;
}

void DispatchPolicy::save(const std::string& path, const DeviceCaps& caps) const {
  // Keys in the order people read them (nlohmann's json would sort them).
  using ojson = nlohmann::ordered_json;
  ojson rules = ojson::array();
  for (const auto& r : rules_) {
    ojson j;
    if (r.k_type) j["k_type"] = std::string(type_name(*r.k_type));
    j["min_context"] = r.min_context;
    if (r.max_context != UINT32_MAX) j["max_context"] = r.max_context;
    j["variant"] = std::string(variant_name(r.variant));
    j["splits"] = r.splits;
    j["dims_per_lane"] = r.dims_per_lane;
    j["unroll"] = r.unroll;
    if (r.subgroups) j["subgroups"] = r.subgroups;  // (absent: the plan's; files of before read the same)
    if (!r.note.empty()) j["note"] = r.note;
    rules.push_back(std::move(j));
  }
  ojson root;
  root["format"] = kFormatTag;
  root["version"] = kFormatVersion;
  root["device"] = {{"vendor_id", caps.vendor_id},
                    {"device_id", caps.device_id},
                    {"driver_version", caps.driver_version},
                    {"name", caps.name}};
  root["rules"] = std::move(rules);
  const std::string text = root.dump(2) + "\n";

  namespace fs = std::filesystem;
  std::error_code ec;
  if (const fs::path dir = fs::path(path).parent_path(); !dir.empty()) {
    fs::create_directories(dir, ec);
    if (ec) bad(path, "cannot create directory " + dir.string() + ": " + ec.message());
  }
  // Temp name per process: two tuners writing at once each rename a whole file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) bad(path, "cannot write " + tmp + ": " + std::strerror(errno));
    out << text;
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      bad(path, "cannot write " + tmp + ": " + std::strerror(errno));
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    bad(path, "cannot rename " + tmp + " over it: " + ec.message());
  }
}

PolicyChoice apply_environment(PolicyChoice choice) {
  std::string changed;
  if (const auto text = env_value("TKV_VARIANT"); text && *text != "auto") {
    Variant v;
    try {
      v = parse_variant(*text);
    } catch (const Error& e) {
      fail(ErrorCode::invalid_argument, std::string("TKV_VARIANT: ") + e.what());
    }
    choice.request.variant = v;
    choice.variant_forced = true;
    changed += " TKV_VARIANT=" + *text;
  }
  if (const auto v = env_u32("TKV_SPLITS", [](uint32_t x) { return x <= kMaxSplits; },
                             "a split count from 0 (the plan's) to 65535")) {
    choice.request.splits = *v;
    changed += " TKV_SPLITS=" + std::to_string(*v);
  }
  if (const auto v = env_u32("TKV_DPL", dpl_valid, "one of 0, 4, 8, 16, 32")) {
    choice.request.dims_per_lane = *v;
    changed += " TKV_DPL=" + std::to_string(*v);
  }
  if (const auto v = env_u32("TKV_UNROLL", unroll_valid, "one of 0, 1, 2, 4, 8")) {
    choice.request.unroll = *v;
    changed += " TKV_UNROLL=" + std::to_string(*v);
  }
  if (const auto v = env_u32("TKV_SUBGROUPS", subgroups_valid, "one of 0, 4, 6, 8")) {
    choice.request.subgroups = *v;
    changed += " TKV_SUBGROUPS=" + std::to_string(*v);
  }
  if (const auto v = env_u32("TKV_ROWS16", [](uint32_t x) { return x <= 1; }, "0 or 1")) {
    choice.request.rows16 = *v == 1;
    changed += " TKV_ROWS16=" + std::to_string(*v);
  }
  if (const auto v = env_u32("TKV_V_AHEAD", [](uint32_t x) { return x <= 1; }, "0 or 1")) {
    choice.request.v_ahead = *v == 1;
    changed += " TKV_V_AHEAD=" + std::to_string(*v);
  }
  if (!changed.empty()) choice.reason += "; environment:" + changed;
  return choice;
}

bool subgroups_valid(uint32_t v) { return v == 0 || v == 4 || v == 6 || v == 8; }

}  // namespace tkv
