// The Vulkan runtime on whatever device is present (lavapipe in CI).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>

#include "kvcache/error.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/requirements.hpp"
#include "kvcache/vk/shader_registry.hpp"
#include "kvcache/vk/specialize.hpp"
#include "kvcache/vk/timer.hpp"

using namespace tkv;
using namespace tkv::vk;

namespace {

DeviceCaps fake(uint32_t index, const char* name, DeviceClass cls) {
  DeviceCaps c;
  c.index = index;
  c.name = name;
  c.device_class = cls;
  c.api_version = VK_API_VERSION_1_3;
  c.storage_16bit = c.push_descriptor = c.subgroup_arithmetic = c.subgroup_shuffle = true;
  c.subgroup_size = 32;
  return c;
}

}  // namespace

TEST(DeviceSelection, PrefersDiscreteThenIntegratedThenCpu) {
  std::vector<DeviceCaps> d = {fake(0, "llvmpipe", DeviceClass::cpu), fake(1, "Intel Arc", DeviceClass::integrated),
                               fake(2, "NVIDIA H100", DeviceClass::discrete)};
  EXPECT_EQ(select_device(d, ""), 2u);
  d.pop_back();
  EXPECT_EQ(select_device(d, ""), 1u);
  d.pop_back();
  EXPECT_EQ(select_device(d, ""), 0u);
}

TEST(DeviceSelection, ByIndexAndNameAndErrors) {
  std::vector<DeviceCaps> d = {fake(0, "llvmpipe", DeviceClass::cpu), fake(1, "NVIDIA H100", DeviceClass::discrete)};
  EXPECT_EQ(select_device(d, "0"), 0u);
  EXPECT_EQ(select_device(d, "H100"), 1u);
  try {
    select_device(d, "Radeon");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::not_found);
    EXPECT_NE(std::string(e.what()).find("Radeon"), std::string::npos);
  }
  try {
    select_device({}, "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::no_device);
    EXPECT_NE(std::string(e.what()).find("mesa-vulkan-drivers"), std::string::npos);
  }
}

TEST(DeviceSelection, SkipsUnsupportedDevices) {
  auto old = fake(0, "old GPU", DeviceClass::discrete);
  old.storage_16bit = false;
  std::vector<DeviceCaps> d = {old, fake(1, "llvmpipe", DeviceClass::cpu)};
  EXPECT_EQ(select_device(d, ""), 1u);
  EXPECT_THROW(select_device(d, "0"), Error);
}

TEST(VulkanErrors, NameTheCallAndResult) {
  try {
    TKV_VK(VK_ERROR_DEVICE_LOST);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::device_lost);  // its own code: the context is unusable
    EXPECT_NE(std::string(e.what()).find("VK_ERROR_DEVICE_LOST"), std::string::npos);
  }
}

class Runtime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ContextOptions o;
    o.cache_dir = (std::filesystem::temp_directory_path() / "tkv-test-pipelines").string();
    ctx_ = Context::create(o);
  }
  static void TearDownTestSuite() { ctx_.reset(); }
  static std::shared_ptr<Context> ctx_;
};
std::shared_ptr<Context> Runtime::ctx_;

// A host's VkDeviceCreateInfo: the Vulkan memory model (what the tc kernels' SPIR-V declares)
// counts as enabled only with its device scope, from the Vulkan 1.2 struct or its own.
TEST(DeviceRequirements, ReadsTheVulkanMemoryModelFromTheCreateInfo) {
  auto read = [](void* chain) {
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.pNext = chain;
    return read_device_create_info(info).vulkan_memory_model;
  };
  EXPECT_FALSE(read(nullptr));
  VkPhysicalDeviceVulkanMemoryModelFeatures own{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES};
  own.vulkanMemoryModel = VK_TRUE;
  EXPECT_FALSE(read(&own));  // without the device scope
  own.vulkanMemoryModelDeviceScope = VK_TRUE;
  EXPECT_TRUE(read(&own));
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f12.vulkanMemoryModel = f12.vulkanMemoryModelDeviceScope = VK_TRUE;
  EXPECT_TRUE(read(&f12));
  f12.vulkanMemoryModelDeviceScope = VK_FALSE;
  EXPECT_FALSE(read(&f12));
}

TEST_F(Runtime, CapabilityRecordIsFilled) {
  const auto& c = ctx_->caps();
  EXPECT_FALSE(c.name.empty());
  EXPECT_GE(c.subgroup_size, 4u);
  EXPECT_GT(c.max_shared_memory, 0u);
  EXPECT_TRUE(c.storage_16bit);
  EXPECT_FALSE(c.heaps.empty());
  EXPECT_EQ(c.unsupported_reason(), "");
}

TEST_F(Runtime, UploadDownloadRoundTrip) {
  std::vector<uint32_t> data(1000);
  std::iota(data.begin(), data.end(), 7u);
  Buffer b(*ctx_, data.size() * 4, MemoryKind::device);
  upload(*ctx_, b, 0, std::as_bytes(std::span(data)));
  std::vector<uint32_t> back(data.size());
  download(*ctx_, b, 0, std::as_writable_bytes(std::span(back)));
  EXPECT_EQ(back, data);
  EXPECT_THROW(upload(*ctx_, b, 3996, std::as_bytes(std::span(data))), Error);
}

namespace {

// The XOR of `words` random words, computed by the stream_read shader at workgroup size `local`.
void expect_stream_read_xor(Context& ctx, bool host_specialize, uint32_t local = 64) {
  std::mt19937 rng(1);
  const uint32_t words = 4 * 4096;
  std::vector<uint32_t> data(words);
  for (auto& w : data) w = rng();
  Buffer src(ctx, words * 4, MemoryKind::device);
  upload(ctx, src, 0, std::as_bytes(std::span(data)));
  const uint32_t groups = 16;
  Buffer dst(ctx, groups * 4, MemoryKind::readback);
  const auto& p = ctx.pipelines().get({"stream_read", {local}, 2, 4, 0, host_specialize});
  TimestampPool timer(ctx, 2);
  ctx.run([&](Recorder& r) {
    timer.reset(r);
    timer.write(r, 0);
    const uint32_t count = words / 4;
    r.bind(p, {src, dst}, count);
    r.dispatch(groups);
    timer.write(r, 1);
    r.host_barrier();
  });
  std::vector<uint32_t> out(groups);
  download(ctx, dst, 0, std::as_writable_bytes(std::span(out)));
  uint32_t gpu = 0, cpu = 0;
  for (uint32_t w : out) gpu ^= w;
  for (uint32_t w : data) cpu ^= w;
  EXPECT_EQ(gpu, cpu);
  auto ns = timer.read_ns();
  EXPECT_GE(ns[1], ns[0]);
  // The same key returns the same pipeline; another constant builds another.
  EXPECT_EQ(&p, &ctx.pipelines().get({"stream_read", {local}, 2, 4, 0, host_specialize}));
  const size_t before = ctx.pipelines().size();
  ctx.pipelines().get({"stream_read", {local / 2}, 2, 4, 0, host_specialize});
  EXPECT_EQ(ctx.pipelines().size(), before + 1);
}

}  // namespace

TEST_F(Runtime, StreamReadShaderComputesTheSameXorAsTheCpu) { expect_stream_read_xor(*ctx_, false); }

// Specialized on the host, the shader keeps its workgroup size (a spec constant: were it lost, the
// grid-stride loop would cover other words and the XOR would differ).
TEST_F(Runtime, HostSpecializedShaderComputesTheSameXor) { expect_stream_read_xor(*ctx_, true); }

// The host-specialized SPIR-V is kept in the cache directory; a corrupt file is made again.
TEST_F(Runtime, HostSpecializedShadersAreKeptAndCorruptOnesMadeAgain) {
  const PipelineKey key{"stream_read", {40}, 2, 4, 0, true};
  const std::string file = ctx_->pipelines().specialized_file(key);
  ASSERT_FALSE(file.empty());
  std::filesystem::remove(file);
  expect_stream_read_xor(*ctx_, true, 40);
  ASSERT_TRUE(std::filesystem::exists(file));
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size / 2);  // truncate
  ContextOptions o;
  o.cache_dir = std::filesystem::path(ctx_->pipelines().cache_file()).parent_path().string();
  auto ctx2 = Context::create(o);
  EXPECT_EQ(ctx2->pipelines().specialized_file(key), file);
  expect_stream_read_xor(*ctx2, true, 40);  // warns, specializes again, computes the same XOR
  EXPECT_EQ(std::filesystem::file_size(file), size);
}

TEST(Specialize, ConstantsBecomeConstantsAndBrokenModulesFallBack) {
  // stream_read's one spec constant (id 0) is its workgroup size.
  const std::vector<uint32_t> constants = {48};
  const auto out = specialize_spirv(find_shader("stream_read"), constants, "stream_read");
  ASSERT_FALSE(out.empty());
  bool spec_left = false, has_48 = false;
  for (size_t i = 5; i < out.size();) {
    const uint32_t n = out[i] >> 16, op = out[i] & 0xffffu;
    ASSERT_GT(n, 0u);
    if ((op >= 48 && op <= 52) || (op == 71 && out[i + 2] == 1)) spec_left = true;  // OpSpecConstant*, SpecId
    if (op == 43 && n == 4 && out[i + 3] == 48) has_48 = true;                      // OpConstant 48
    i += n;
  }
  EXPECT_FALSE(spec_left);
  EXPECT_TRUE(has_48);
  // Not SPIR-V: the optimizer refuses it, and the caller falls back to the driver (empty result).
  const std::vector<uint32_t> junk = {0x07230203, 0x00010500, 0, 8, 0, 0xdeadbeef, 1, 2};
  EXPECT_TRUE(specialize_spirv(junk, constants, "junk").empty());
}

TEST_F(Runtime, UnknownShaderAndWrongBindingsAreErrors) {
  EXPECT_THROW(ctx_->pipelines().get({"no_such_shader", {}, 1, 0}), Error);
  const auto& p = ctx_->pipelines().get({"stream_read", {64}, 2, 4});
  Buffer b(*ctx_, 64, MemoryKind::device);
  EXPECT_THROW(ctx_->run([&](Recorder& r) { r.bind(p, {b}, uint32_t(1)); }), Error);
}

TEST_F(Runtime, PipelineCacheIsPersistedAndCorruptFilesAreIgnored) {
  ctx_->pipelines().save();
  const std::string file = ctx_->pipelines().cache_file();
  ASSERT_FALSE(file.empty());
  ASSERT_TRUE(std::filesystem::exists(file));
  std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);  // truncate
  ContextOptions o;
  o.cache_dir = std::filesystem::path(file).parent_path().string();
  auto ctx2 = Context::create(o);  // must not crash; warns and starts empty
  const auto& p = ctx2->pipelines().get({"stream_read", {64}, 2, 4});
  EXPECT_NE(p.pipeline, VK_NULL_HANDLE);
}

TEST(Validation, TheLayerIsOnWhenAsked) {
  // scripts/test.sh runs the suite with TKV_VALIDATION=1: the instance must then really have the
  // layer, or "zero validation messages" would prove nothing.
  const char* v = std::getenv("TKV_VALIDATION");
  if (!v || std::string(v) == "0") GTEST_SKIP() << "TKV_VALIDATION is not set";
  auto instance = Instance::create();
  EXPECT_TRUE(instance->validation_enabled());
}

