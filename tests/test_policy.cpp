// The dispatch policy: selection is a pure function of the capability record and the shape,
// tested on records written by hand (an H100, an AMD RDNA3, an Intel Arc, Apple through
// MoltenVK, lavapipe); policy files round-trip and malformed ones are clear errors that fall back
// to the defaults; the environment and DecodeOptions override in that order (checked both through
// resolve_request and through a Decoder on whatever device the machine has).
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "attention/policy.hpp"
#include "decode_fixture.hpp"
#include "device_records.hpp"
#include "kvcache/error.hpp"

using namespace tkv;
using namespace tkv::testing;
namespace fs = std::filesystem;

namespace {

DecodeShape llama8b(uint32_t ctx, KvType k = KvType::turbo3, uint32_t batch = 1) {
  return {k, k, 128, 32, 8, batch, 1, ctx};
}

Variant chosen(const DeviceCaps& caps, uint32_t ctx, KvType k = KvType::turbo3) {
  return DispatchPolicy::defaults(caps).choose(llama8b(ctx, k)).request.variant;
}

// Sets (or unsets, with nullptr) an environment variable for a scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Every test starts without overrides in the environment (the caller's shell may have some) and
// with TKV_CACHE_DIR at a private directory, so that no tuned file of this machine interferes.
class PolicyTest : public ::testing::Test {
 protected:
  PolicyTest()
      : dir_(fs::temp_directory_path() / ("tkv-policy-test-" + std::to_string(::getpid()))),
        variant_("TKV_VARIANT", nullptr),
        splits_("TKV_SPLITS", nullptr),
        dpl_("TKV_DPL", nullptr),
        unroll_("TKV_UNROLL", nullptr),
        subgroups_("TKV_SUBGROUPS", nullptr),
        rows16_("TKV_ROWS16", nullptr),
        v_ahead_("TKV_V_AHEAD", nullptr),
        cache_dir_("TKV_CACHE_DIR", dir_.c_str()) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~PolicyTest() override { fs::remove_all(dir_); }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = file(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  fs::path dir_;
  ScopedEnv variant_, splits_, dpl_, unroll_, subgroups_, rows16_, v_ahead_, cache_dir_;
};

void expect_error(const std::function<void()>& call, ErrorCode code, const std::vector<std::string>& needles) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one naming " << needles.front();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& needle : needles) EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A valid file for `caps` with the given rules array (JSON text).
std::string policy_text(const DeviceCaps& caps, const std::string& rules) {
  std::ostringstream o;
  o << R"({"format": "turbokv-policy", "version": 1, "device": {"vendor_id": )" << caps.vendor_id
    << R"(, "device_id": )" << caps.device_id << R"(, "driver_version": )" << caps.driver_version
    << R"(, "name": ")" << caps.name << R"("}, "rules": )" << rules << "}";
  return o.str();
}

}  // namespace

// ---- built-in defaults ----

TEST_F(PolicyTest, NvidiaUsesTheSharedMemoryCodebookAtEveryDepth) {
  // The H200 measurement of 2026-11-22 (streaming kernel): smem fastest at 32K and 128K.
  for (uint32_t ctx : {1u, 512u, 16384u, 65535u, 65536u, 131072u, 1u << 20})
    EXPECT_EQ(chosen(h100(), ctx), Variant::smem) << ctx;
  const auto c = DispatchPolicy::defaults(h100()).choose(llama8b(131072));
  EXPECT_NE(c.reason.find("defaults: NVIDIA"), std::string::npos) << c.reason;
  EXPECT_FALSE(c.variant_forced);
  // The defaults leave the knobs to the plan, and the plan accepts the choice.
  EXPECT_EQ(c.request.splits, 0u);
  EXPECT_EQ(c.request.dims_per_lane, 0u);
  EXPECT_EQ(c.request.unroll, 0u);
  EXPECT_EQ(plan_decode(h100(), llama8b(131072), c.request).variant, Variant::smem);
}

TEST_F(PolicyTest, NvidiaWithTensorCoresUsesTcForEveryKTypeAtEveryDepth) {
  // The H100 measurements of 2026-11-24 (session 5, tile layout): tc faster for every turbo type;
  // of 2026-11-27 (sessions 18, 19): for f16 and q8_0 rows too. Only where the probe found the
  // fragment layout.
  DeviceCaps caps = h100_tensor_cores();
  const auto policy = DispatchPolicy::defaults(caps);
  for (KvType t : kAllTypes) {
    EXPECT_EQ(policy.choose(llama8b(1, t)).request.variant, Variant::tc) << type_name(t);
    EXPECT_EQ(policy.choose(llama8b(4096, t)).request.variant, Variant::tc) << type_name(t);
    EXPECT_EQ(policy.choose(llama8b(32768, t)).request.variant, Variant::tc) << type_name(t);
    EXPECT_EQ(policy.choose(llama8b(131072, t)).request.variant, Variant::tc) << type_name(t);
  }
  EXPECT_EQ(policy.base_variant(), Variant::smem);  // what a shape tc cannot run falls back to
  EXPECT_EQ(plan_decode(caps, llama8b(131072), policy.choose(llama8b(131072)).request).variant, Variant::tc);
  caps.mma_fragment_layout = false;
  EXPECT_EQ(DispatchPolicy::defaults(caps).choose(llama8b(131072)).request.variant, Variant::smem);
}

TEST_F(PolicyTest, AmdIntelAndAppleUseAluAtEveryDepth) {
  for (const auto& caps : {rdna3(), arc(), apple_m2()})
    for (uint32_t ctx : {1u, 4096u, 32767u, 32768u, 131072u}) {
      EXPECT_EQ(chosen(caps, ctx), Variant::alu) << caps.name << " " << ctx;
      EXPECT_EQ(plan_decode(caps, llama8b(ctx), DispatchPolicy::defaults(caps).choose(llama8b(ctx)).request).variant,
                Variant::alu);
    }
  EXPECT_EQ(DispatchPolicy::defaults(rdna3()).source(), "defaults: AMD");
  EXPECT_EQ(DispatchPolicy::defaults(arc()).source(), "defaults: Intel");
  EXPECT_EQ(DispatchPolicy::defaults(apple_m2()).source(), "defaults: Apple (MoltenVK)");
}

TEST_F(PolicyTest, CpuDriversUseAluWhateverTheVendorId) {
  for (const auto& caps : {lavapipe(), swiftshader()}) {
    EXPECT_EQ(DispatchPolicy::defaults(caps).source(), "defaults: CPU driver") << caps.name;
    for (uint32_t ctx : {1u, 32768u, 131072u}) EXPECT_EQ(chosen(caps, ctx), Variant::alu) << caps.name;
  }
  DeviceCaps unknown = rdna3();
  unknown.vendor = Vendor::qualcomm;
  EXPECT_EQ(DispatchPolicy::defaults(unknown).source(), "defaults: other");
  EXPECT_EQ(chosen(unknown, 100), Variant::mag4);
}

TEST_F(PolicyTest, SelectionIsPureAndIgnoresTheEnvironment) {
  const auto policy = DispatchPolicy::defaults(h100());
  const auto a = policy.choose(llama8b(4096));
  ScopedEnv env("TKV_VARIANT", "qlut");
  const auto b = policy.choose(llama8b(4096));
  EXPECT_EQ(a.request.variant, b.request.variant);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(b.request.variant, Variant::smem);
}

TEST_F(PolicyTest, NonTurboTypesSayTheVariantDoesNotApply) {
  const auto c = DispatchPolicy::defaults(h100()).choose(llama8b(100, KvType::f16));
  EXPECT_NE(c.reason.find("do not apply"), std::string::npos) << c.reason;
}

// ---- policy files ----

TEST_F(PolicyTest, FileRoundTrip) {
  std::vector<PolicyRule> rules = {
      {.k_type = KvType::turbo3, .max_context = 8192, .variant = Variant::reglut, .unroll = 8, .note = "1.2x"},
      {.k_type = KvType::turbo3, .min_context = 8192, .variant = Variant::qlut, .splits = 64, .dims_per_lane = 8},
      {.min_context = 100, .max_context = 200, .variant = Variant::smem, .dims_per_lane = 32, .unroll = 1},
      {.k_type = KvType::turbo2, .variant = Variant::tc, .subgroups = 8},
  };
  auto policy = DispatchPolicy::defaults(h100());
  policy.set_rules(rules);
  EXPECT_EQ(policy.source(), "rules set by the caller");
  const std::string path = file("sub/dir/policy.json");  // save creates the directories
  policy.save(path, h100());
  const auto loaded = DispatchPolicy::load(path, h100());
  EXPECT_EQ(loaded.rules(), rules);
  EXPECT_EQ(loaded.source(), "file: " + path);
  // Saved atomically: only the file, no temporary left behind.
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) ++entries, (void)e;
  EXPECT_EQ(entries, 1u);
  // Saving over an existing file replaces it.
  policy.set_rules({rules[0]});
  policy.save(path, h100());
  EXPECT_EQ(DispatchPolicy::load(path, h100()).rules(), std::vector<PolicyRule>{rules[0]});
}

// A rule's subgroups reach the plan request (the tc kernel's workgroups); files without the key
// (those of before) read as the plan's, and a saved rule without it writes none.
TEST_F(PolicyTest, SubgroupsFromARule) {
  const std::string path = write("sg.json", policy_text(h100(), R"([
      {"k_type": "turbo3", "max_context": 8192, "variant": "tc", "subgroups": 8},
      {"k_type": "turbo3", "variant": "tc"}])"));
  const auto p = DispatchPolicy::load(path, h100());
  auto c = p.choose(llama8b(4096));
  EXPECT_EQ(c.request.subgroups, 8u);
  EXPECT_NE(c.reason.find("8 subgroups"), std::string::npos) << c.reason;
  EXPECT_EQ(p.choose(llama8b(32768)).request.subgroups, 0u);
  auto policy = DispatchPolicy::defaults(h100());
  policy.set_rules({{.variant = Variant::tc}});
  const std::string saved = file("plain.json");
  policy.save(saved, h100());
  std::ifstream in(saved);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("subgroups"), std::string::npos) << text;
  expect_error([&] { policy.set_rules({{.variant = Variant::tc, .subgroups = 16}}); }, ErrorCode::invalid_argument,
               {"rule 1", "subgroups 16"});
}

TEST_F(PolicyTest, FileRulesMatchInOrderAndFallBackToTheDefaults) {
  const std::string path = write("p.json", policy_text(h100(), R"([
      {"k_type": "turbo3", "max_context": 4096, "variant": "reglut", "note": "measured"},
      {"k_type": "turbo3", "min_context": 0, "variant": "alu", "splits": 12},
      {"variant": "qlut"}])"));
  const auto p = DispatchPolicy::load(path, h100());
  auto c = p.choose(llama8b(4095));
  EXPECT_EQ(c.request.variant, Variant::reglut);
  EXPECT_NE(c.reason.find("file: " + path + " rule 1"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("measured"), std::string::npos) << c.reason;
  c = p.choose(llama8b(4096));
  EXPECT_EQ(c.request.variant, Variant::alu);
  EXPECT_EQ(c.request.splits, 12u);
  EXPECT_EQ(p.choose(llama8b(4096, KvType::turbo4)).request.variant, Variant::qlut);

  // A file that covers only part of the shapes: the rest gets the device's defaults.
  const std::string partial =
      write("partial.json", policy_text(h100(), R"([{"k_type": "turbo4", "variant": "lut8"}])"));
  const auto q = DispatchPolicy::load(partial, h100());
  EXPECT_EQ(q.choose(llama8b(100, KvType::turbo4)).request.variant, Variant::lut8);
  c = q.choose(llama8b(65536, KvType::turbo3));
  EXPECT_EQ(c.request.variant, Variant::smem);
  EXPECT_NE(c.reason.find("no rule for turbo3 at context 65536"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("defaults: NVIDIA"), std::string::npos) << c.reason;
}

TEST_F(PolicyTest, MalformedFilesAreClearErrors) {
  const std::string good_rule = R"([{"variant": "mag4"}])";
  const std::string valid = policy_text(h100(), good_rule);
  ASSERT_NO_THROW(DispatchPolicy::load(write("valid.json", valid), h100()));
  auto rule = [&](const std::string& r) { return policy_text(h100(), "[" + r + "]"); };
  struct Case {
    const char* name;
    std::string text;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"not_json.json", "variant = mag4\n", "not valid JSON"},
      {"truncated.json", valid.substr(0, valid.size() / 2), "not valid JSON"},
      {"empty.json", "  \n", "empty file"},
      {"array.json", "[1, 2]", "a policy is a JSON object"},
      {"tag.json", R"({"format": "llama-policy", "version": 1})", "not \"turbokv-policy\""},
      {"no_tag.json", R"({"version": 1})", "has no \"format\""},
      {"version.json", R"({"format": "turbokv-policy", "version": 2})", "version 2"},
      {"no_device.json", R"({"format": "turbokv-policy", "version": 1, "rules": []})", "has no \"device\""},
      {"no_rules.json", valid.substr(0, valid.find(", \"rules\"")) + "}", "has no \"rules\""},
      {"rules_object.json", policy_text(h100(), "{}"), "\"rules\" must be an array"},
      {"rule_not_object.json", rule("\"mag4\""), "rules[0] must be an object"},
      {"unknown_variant.json", rule(R"({"variant": "lut9"})"), "rules[0].variant: unknown variant \"lut9\""},
      {"auto_variant.json", rule(R"({"variant": "auto"})"), "unknown variant \"auto\""},
      {"no_variant.json", rule(R"({"k_type": "turbo3"})"), "rules[0] has no \"variant\""},
      {"variant_number.json", rule(R"({"variant": 1})"), "rules[0].variant must be a string"},
      {"unknown_type.json", rule(R"({"k_type": "turbo5", "variant": "mag4"})"), "unknown type \"turbo5\""},
      {"unknown_key.json", rule(R"({"varient": "mag4"})"), "unknown key \"varient\""},
      {"negative.json", rule(R"({"variant": "mag4", "min_context": -5})"), "rules[0].min_context is negative (-5)"},
      {"fraction.json", rule(R"({"variant": "mag4", "splits": 2.5})"), "rules[0].splits must be a whole number"},
      {"string_number.json", rule(R"({"variant": "mag4", "unroll": "4"})"), "rules[0].unroll must be a non-negative"},
      {"huge.json", rule(R"({"variant": "mag4", "max_context": 5000000000})"), "above 4294967295"},
      {"dpl.json", rule(R"({"variant": "mag4", "dims_per_lane": 12})"), "dims_per_lane 12 is not one of"},
      {"unroll.json", rule(R"({"variant": "mag4", "unroll": 3})"), "unroll 3 is not one of"},
      {"subgroups.json", rule(R"({"variant": "tc", "subgroups": 5})"), "subgroups 5 is not one of 0, 4, 6, 8"},
      {"splits.json", rule(R"({"variant": "mag4", "splits": 70000})"), "splits 70000 is above 65535"},
      {"range.json", rule(R"({"variant": "mag4", "min_context": 100, "max_context": 100})"),
       "min_context 100 is not below max_context 100"},
      {"second_rule.json", policy_text(h100(), R"([{"variant": "mag4"}, {"variant": "mag4", "unroll": 5}])"),
       "rules[1]: unroll 5"},
      {"device.json", policy_text(rdna3(), good_rule), "written for vendor 0x1002, device 0x747e"},
      {"device_field.json",
       R"({"format": "turbokv-policy", "version": 1, "device": {"vendor_id": "nvidia"}, "rules": []})",
       "device.vendor_id must be a non-negative integer, not a string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write(c.name, c.text);
    expect_error([&] { DispatchPolicy::load(path, h100()); }, ErrorCode::io, {path + ": ", c.needle});
    // The engine's entry point falls back to the defaults and says why.
    std::string warning;
    const auto p = DispatchPolicy::for_device(h100(), path, &warning);
    EXPECT_EQ(p.source(), "defaults: NVIDIA");
    EXPECT_EQ(p.rules(), DispatchPolicy::defaults(h100()).rules());
    EXPECT_NE(warning.find(path), std::string::npos) << warning;
    EXPECT_NE(warning.find(c.needle), std::string::npos) << warning;
    EXPECT_NE(warning.find("using the built-in defaults"), std::string::npos) << warning;
  }
  // The device mismatch names both devices.
  expect_error([&] { DispatchPolicy::load(file("device.json"), h100()); }, ErrorCode::io,
               {"RX 7700 XT", "this device is vendor 0x10de, device 0x2330, driver 0x8ce00000 (NVIDIA H100"});
  // A missing file is an error for load, but the normal case for for_device (no warning).
  expect_error([&] { DispatchPolicy::load(file("missing.json"), h100()); }, ErrorCode::io, {"missing.json: cannot open"});
  std::string warning = "stale";
  EXPECT_EQ(DispatchPolicy::for_device(h100(), file("missing.json"), &warning).source(), "defaults: NVIDIA");
  EXPECT_EQ(warning, "");
}

TEST_F(PolicyTest, SetRulesRejectsWhatAFileCouldNotHold) {
  auto p = DispatchPolicy::defaults(h100());
  expect_error([&] { p.set_rules({{.variant = Variant::automatic}}); }, ErrorCode::invalid_argument, {"rule 1"});
  expect_error([&] { p.set_rules({{.variant = Variant::mag4}, {.variant = Variant::mag4, .dims_per_lane = 2}}); },
               ErrorCode::invalid_argument, {"rule 2", "dims_per_lane 2"});
  expect_error([&] { p.set_rules({{.min_context = 5, .max_context = 4}}); }, ErrorCode::invalid_argument,
               {"min_context 5"});
  EXPECT_EQ(p.source(), "defaults: NVIDIA");  // unchanged by the failed calls
}

TEST_F(PolicyTest, DefaultPathIsPerDeviceAndDriverInTheCacheDirectory) {
  const std::string path = DispatchPolicy::default_path(h100());
  EXPECT_EQ(path, file("policy-10de-2330-8ce00000.json"));
  EXPECT_NE(DispatchPolicy::default_path(rdna3()), path);
  // for_device with no path reads it.
  auto tuned = DispatchPolicy::defaults(h100());
  tuned.set_rules({{.variant = Variant::reglut}});
  tuned.save(path, h100());
  std::string warning;
  const auto p = DispatchPolicy::for_device(h100(), "", &warning);
  EXPECT_EQ(p.source(), "file: " + path);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(p.choose(llama8b(100)).request.variant, Variant::reglut);
  // Another driver version of the same device does not look at it.
  DeviceCaps updated = h100();
  updated.driver_version += 1;
  EXPECT_EQ(DispatchPolicy::for_device(updated, "", &warning).source(), "defaults: NVIDIA");
  EXPECT_EQ(warning, "");
}

// ---- environment ----

TEST_F(PolicyTest, EnvironmentOverridesTheChoice) {
  const auto base = DispatchPolicy::defaults(h100()).choose(llama8b(100));
  EXPECT_EQ(apply_environment(base).request.variant, Variant::smem);  // nothing set: unchanged
  EXPECT_EQ(apply_environment(base).reason, base.reason);
  {
    ScopedEnv v("TKV_VARIANT", "qlut"), s("TKV_SPLITS", "6"), d("TKV_DPL", "32"), u("TKV_UNROLL", "2"),
        g("TKV_SUBGROUPS", "6"), r("TKV_ROWS16", "1"), a("TKV_V_AHEAD", "0");
    const auto c = apply_environment(base);
    EXPECT_EQ(c.request.variant, Variant::qlut);
    EXPECT_TRUE(c.variant_forced);
    EXPECT_EQ(c.request.splits, 6u);
    EXPECT_EQ(c.request.dims_per_lane, 32u);
    EXPECT_EQ(c.request.unroll, 2u);
    EXPECT_EQ(c.request.subgroups, 6u);
    EXPECT_EQ(c.request.rows16, std::optional<bool>(true));
    EXPECT_EQ(c.request.v_ahead, std::optional<bool>(false));
    EXPECT_NE(c.reason.find("environment: TKV_VARIANT=qlut TKV_SPLITS=6 TKV_DPL=32 TKV_UNROLL=2 TKV_SUBGROUPS=6 "
                            "TKV_ROWS16=1 TKV_V_AHEAD=0"),
              std::string::npos)
        << c.reason;
  }
  {  // Empty values and TKV_VARIANT=auto leave the policy's choice.
    ScopedEnv v("TKV_VARIANT", "auto"), s("TKV_SPLITS", "");
    const auto c = apply_environment(base);
    EXPECT_EQ(c.request.variant, Variant::smem);
    EXPECT_FALSE(c.variant_forced);
    EXPECT_EQ(c.request.splits, 0u);
    EXPECT_FALSE(c.request.rows16.has_value());
    EXPECT_FALSE(c.request.v_ahead.has_value());
  }
  {
    ScopedEnv r("TKV_ROWS16", "0");
    EXPECT_EQ(apply_environment(base).request.rows16, std::optional<bool>(false));
  }
}

TEST_F(PolicyTest, MalformedEnvironmentValuesNameTheVariable) {
  const auto base = DispatchPolicy::defaults(h100()).choose(llama8b(100));
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"TKV_VARIANT", "fast"}, {"TKV_SPLITS", "-1"},  {"TKV_SPLITS", "abc"}, {"TKV_SPLITS", "70000"},
      {"TKV_SPLITS", "4 "},    {"TKV_DPL", "12"},     {"TKV_DPL", "0x10"},   {"TKV_UNROLL", "3"},
      {"TKV_UNROLL", "4x"},    {"TKV_SUBGROUPS", "5"}, {"TKV_SUBGROUPS", "16"}, {"TKV_ROWS16", "2"},
      {"TKV_V_AHEAD", "yes"},
  };
  for (const auto& [name, value] : bad) {
    SCOPED_TRACE(std::string(name) + "=" + value);
    ScopedEnv env(name, value);
    expect_error([&] { apply_environment(base); }, ErrorCode::invalid_argument, {name, value});
  }
}

// ---- precedence: options > environment > file > defaults ----

TEST_F(PolicyTest, PrecedenceThroughResolveRequest) {
  const DecodeShape shape = llama8b(1000);
  auto policy = DispatchPolicy::defaults(h100());
  DecodeOptions options;
  auto c = resolve_request(policy, shape, options);
  EXPECT_EQ(c.request.variant, Variant::smem);  // defaults
  EXPECT_EQ(c.request.splits, 0u);

  policy.set_rules({{.variant = Variant::lut8, .splits = 4, .dims_per_lane = 8, .unroll = 1}});
  c = resolve_request(policy, shape, options);
  EXPECT_EQ(c.request.variant, Variant::lut8);  // file over defaults
  EXPECT_EQ(c.request.splits, 4u);
  EXPECT_EQ(c.request.dims_per_lane, 8u);
  EXPECT_FALSE(c.variant_forced);

  ScopedEnv v("TKV_VARIANT", "alu"), s("TKV_SPLITS", "8");
  c = resolve_request(policy, shape, options);
  EXPECT_EQ(c.request.variant, Variant::alu);  // environment over file
  EXPECT_EQ(c.request.splits, 8u);
  EXPECT_EQ(c.request.dims_per_lane, 8u);  // not set in the environment: still the file's
  EXPECT_TRUE(c.variant_forced);

  options.variant = Variant::reglut;
  options.splits = 16;
  options.unroll = 4;
  options.profile_mode = ProfileMode::norm_only;
  c = resolve_request(policy, shape, options);
  EXPECT_EQ(c.request.variant, Variant::reglut);  // options over environment
  EXPECT_EQ(c.request.splits, 16u);
  EXPECT_EQ(c.request.unroll, 4u);
  EXPECT_EQ(c.request.dims_per_lane, 8u);
  EXPECT_EQ(c.request.mode, ProfileMode::norm_only);
  EXPECT_NE(c.reason.find("rules set by the caller rule 1"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("environment: TKV_VARIANT=alu TKV_SPLITS=8"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("options: variant reglut splits 16 unroll 4"), std::string::npos) << c.reason;
}

// Decoder tests need a device (lavapipe will do). The shared context is created before the
// fixture points TKV_CACHE_DIR at its private directory: the context's pipeline cache outlives
// every test and belongs in the usual place, not in a directory each test deletes.
class PolicyDecoder : public PolicyTest {
 protected:
  static void SetUpTestSuite() { shared_context(); }
};

// The same precedence through a Decoder (plans only), then one decode with the file's choice.
TEST_F(PolicyDecoder, PlansWithItsPolicy) {
  DecodeCase dc;
  dc.lengths = {128};
  auto f = fill_cache(dc);
  const auto& caps = f.cache->context().caps();
  Decoder dec(*f.cache, dc.kv_heads * dc.ratio);
  DecodeShape shape{dc.k_type, dc.v_type, dc.head_dim, dc.kv_heads * dc.ratio, dc.kv_heads, 1, 1, 128};
  shape.page_size = f.cache->config().page_size;
  // The plan may adjust knobs to the device (unroll to the page, dims per lane to the subgroup):
  // a Decoder's plan must equal plan_decode's for the request the precedence gives.
  auto expect_plan = [&](const DecodePlan& p, const PlanRequest& request, const char* what) {
    SCOPED_TRACE(what);
    const DecodePlan want = plan_decode(caps, shape, request);
    if (request.variant != Variant::automatic) {
      EXPECT_EQ(p.variant, request.variant);
    }
    EXPECT_EQ(p.variant, want.variant);
    EXPECT_EQ(p.splits, want.splits);
    EXPECT_EQ(p.chunk, want.chunk);
    EXPECT_EQ(p.dims_per_lane, want.dims_per_lane);
    EXPECT_EQ(p.unroll, want.unroll);
    EXPECT_EQ(p.mode, want.mode);
  };

  const auto defaults = DispatchPolicy::defaults(caps);
  EXPECT_EQ(dec.policy().source(), defaults.source());
  auto p = dec.plan(0, f.seqs, 1);
  expect_plan(p, defaults.choose(shape).request, "defaults");
  EXPECT_NE(p.reason.find(defaults.source()), std::string::npos) << p.reason;

  const std::string path = write("decoder.json", policy_text(caps, R"([{"variant": "lut8", "splits": 3,
      "dims_per_lane": 32, "unroll": 2}])"));
  dec.set_policy(DispatchPolicy::load(path, caps));
  p = dec.plan(0, f.seqs, 1);
  expect_plan(p, {.splits = 3, .variant = Variant::lut8, .dims_per_lane = 32, .unroll = 2}, "file");
  EXPECT_NE(p.describe().find("file: " + path), std::string::npos) << p.describe();

  {
    ScopedEnv v("TKV_VARIANT", "alu"), s("TKV_SPLITS", "2");
    p = dec.plan(0, f.seqs, 1);
    expect_plan(p, {.splits = 2, .variant = Variant::alu, .dims_per_lane = 32, .unroll = 2}, "environment");
    DecodeOptions o;
    o.variant = Variant::reglut;
    o.unroll = 1;
    o.profile_mode = ProfileMode::zero;
    p = dec.plan(0, f.seqs, 1, o);
    expect_plan(p, {.splits = 2, .variant = Variant::reglut, .mode = ProfileMode::zero, .dims_per_lane = 32, .unroll = 1},
                "options");
    ScopedEnv bad("TKV_DPL", "7");
    expect_error([&] { dec.plan(0, f.seqs, 1); }, ErrorCode::invalid_argument, {"TKV_DPL='7'"});
  }

  // The policy's choice is what runs: the output is exact with the file's variant and knobs.
  const auto q = random_queries(dc);
  std::vector<float> out(q.size());
  dec.decode(0, f.seqs, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4});
  const auto ref = reference_decode(*f.cache, 0, f.seqs, 1, dc.kv_heads * dc.ratio, q);
  EXPECT_LT(max_head_error(out, ref, dc.head_dim), 1e-4);
}

TEST_F(PolicyDecoder, WarnsAboutAMalformedFileAndUsesTheDefaults) {
  DecodeCase dc;
  dc.lengths = {16};
  auto f = fill_cache(dc);
  const auto& caps = f.cache->context().caps();
  const std::string path = DispatchPolicy::default_path(caps);
  ASSERT_EQ(path.rfind(dir_.string(), 0), 0u) << path;
  write(fs::path(path).filename().string(), "{\"format\": \"turbokv-policy\", \"vers");

  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  auto logger = spdlog::default_logger();
  logger->sinks().push_back(sink);
  const Decoder dec(*f.cache, dc.kv_heads * dc.ratio);
  logger->sinks().pop_back();

  EXPECT_EQ(dec.policy().source(), DispatchPolicy::defaults(caps).source());
  bool warned = false;
  for (const auto& line : sink->last_formatted())
    warned |= line.find("warning") != std::string::npos && line.find(path) != std::string::npos &&
              line.find("not valid JSON") != std::string::npos;
  EXPECT_TRUE(warned) << "no warning naming " << path;
}
