// DispatchPolicy::parse: a policy from JSON text in memory (the fuzzers' entry point) reads as
// the same text does from a file, and its errors name the name given for the text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attention/policy.hpp"
#include "device_records.hpp"
#include "kvcache/error.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

const char* kText = R"({"format": "turbokv-policy", "version": 1,
  "device": {"vendor_id": 4318, "device_id": 9008, "driver_version": 2363490304},
  "rules": [{"k_type": "turbo3", "max_context": 4096, "variant": "reglut", "unroll": 8, "note": "1.1x"},
            {"variant": "smem", "dims_per_lane": 16}]})";

TEST(PolicyText, ParseEqualsLoadOfTheSameText) {
  const auto dir = std::filesystem::temp_directory_path() / ("tkv-policy-text-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "p.json").string();
  std::ofstream(path, std::ios::binary) << kText;
  const auto from_file = DispatchPolicy::load(path, h100());
  const auto from_text = DispatchPolicy::parse(kText, h100(), "embedded");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(from_text.rules(), from_file.rules());
  ASSERT_EQ(from_text.rules().size(), 2u);
  EXPECT_EQ(from_text.rules()[0].variant, Variant::reglut);
  EXPECT_EQ(from_text.source(), "file: embedded");
  DecodeShape shape;
  shape.k_type = KvType::turbo3;
  shape.max_context = 100;
  EXPECT_EQ(from_text.choose(shape).request.variant, Variant::reglut);
  EXPECT_EQ(from_text.choose(shape).request.unroll, 8u);
}

TEST(PolicyText, ErrorsNameTheText) {
  struct Case {
    std::string text, needle;
  };
  const Case cases[] = {
      {"", "embedded: empty file"},
      {"{\"format\": ", "embedded: not valid JSON"},
      {"[1, 2]", "embedded: a policy is a JSON object"},
      {std::string(kText).replace(std::string(kText).find("9008"), 4, "9009"), "embedded: written for"},
  };
  for (const auto& c : cases) {
    try {
      (void)DispatchPolicy::parse(c.text, h100(), "embedded");
      ADD_FAILURE() << "no error for " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::io) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
    }
  }
}

}  // namespace
