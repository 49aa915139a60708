// Fuzz target: the dispatch-policy parser (attention/policy.hpp, DispatchPolicy::parse) fed JSON
// text, against a fixed capability record (no GPU needed: vendor 0x10de, device 0x2330, driver
// 0x1; the seed corpus carries this key so that mutations reach the rules).
// Properties: parse either throws tkv::Error(io) or gives a policy whose every rule set_rules
// accepts, whose choose() answers for every K type at a few depths, and which survives a
// save/load round trip unchanged.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "attention/policy.hpp"
#include "fuzz_common.hpp"
#include "kvcache/error.hpp"

using namespace tkv;

namespace {

const DeviceCaps& caps() {
  static const DeviceCaps c = [] {
    DeviceCaps d;
    d.name = "fuzz device";
    d.vendor_id = 0x10de;
    d.device_id = 0x2330;
    d.driver_version = 0x1;
    d.vendor = Vendor::nvidia;
    d.device_class = DeviceClass::discrete;
    return d;
  }();
  return c;
}

// A directory of this process for the save/load round trip, removed at exit.
struct Scratch {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tkv-fuzz-policy-" + std::to_string(::getpid()));
  std::string path = (dir / "policy.json").string();
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

const std::string& scratch_path() {
  static const Scratch scratch;
  return scratch.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  DispatchPolicy policy;
  try {
    policy = DispatchPolicy::parse(text, caps(), "fuzz input");
  } catch (const Error& e) {
    fuzz::check(e.code() == ErrorCode::io, std::string("parse: not an io error: ") + e.what());
    return 0;
  }
  DispatchPolicy copy = DispatchPolicy::defaults(caps());
  try {
    copy.set_rules(policy.rules());
  } catch (const Error& e) {
    fuzz::property_failed(std::string("a parsed rule is one set_rules refuses: ") + e.what());
  }
  for (KvType k : kAllTypes)
    for (uint32_t depth : {1u, 4096u, 65536u, 1u << 20, 0xffffffffu}) {
      DecodeShape shape;
      shape.k_type = k;
      shape.max_context = depth;
      const PolicyChoice choice = policy.choose(shape);
      fuzz::check(!choice.reason.empty(), "choose gave no reason");
    }
  policy.save(scratch_path(), caps());
  const DispatchPolicy again = DispatchPolicy::load(scratch_path(), caps());
  fuzz::check(again.rules() == policy.rules(), "the rules changed through save and load");
  return 0;
}
