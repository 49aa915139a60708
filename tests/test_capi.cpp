// The C API (include/turbokv/turbokv.h): a decode driven from C (tests/test_capi_c.c) against the
// C++ API and exact attention; every failure kind as its status code with a message naming the
// problem and the function; no exception across the boundary (bad_alloc and foreign exceptions
// included); the last error per thread; the record path on the host's own Vulkan objects.
#include "turbokv/turbokv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/capi_status.hpp"
#include "attention/reference.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "test_api_host_vulkan.hpp"
#include "turbokv/turbokv.hpp"

extern "C" tkv_status capi_c_decode(uint32_t kv_heads, uint32_t q_heads, uint32_t head_dim, uint32_t tokens,
                                    const float* k, const float* v, const float* q, float* out, const char** step);

using tkv::test::HostBuffer;
using tkv::test::HostVulkan;

namespace {

std::string last_error() { return tkv_last_error(); }

// Expects `status` to be `expected` with a last error containing each of `needles`.
void expect_status(tkv_status status, tkv_status expected, std::initializer_list<std::string> needles) {
  EXPECT_EQ(status, expected) << tkv_status_name(status) << ": " << last_error();
  for (const auto& n : needles)
    EXPECT_NE(last_error().find(n), std::string::npos) << "'" << last_error() << "' lacks '" << n << "'";
}

tkv_cache_config small_config(uint32_t kv_heads, uint64_t capacity) {
  tkv_cache_config c;
  tkv_cache_config_init(&c);
  c.layers = 1;
  c.kv_heads = kv_heads;
  c.head_dim = 64;
  c.page_size = 32;
  c.capacity_tokens = capacity;
  c.max_sequences = 2;
  return c;
}

}  // namespace

// The C caller's output equals the C++ API's on the same data, and exact attention over the
// original rows within f16's rounding of K and V.
TEST(CApi, DecodeFromC) {
  const uint32_t kv_heads = 2, q_heads = 4, dim = 128, tokens = 33;
  std::mt19937 rng(2);
  const auto k = tkv::testing::random_rows(rng, tokens, kv_heads, dim, false);
  const auto v = tkv::testing::random_rows(rng, tokens, kv_heads, dim, false);
  const auto q = tkv::testing::random_rows(rng, 1, q_heads, dim, false);
  std::vector<float> out(q.size(), std::nanf(""));
  const char* step = "";
  ASSERT_EQ(capi_c_decode(kv_heads, q_heads, dim, tokens, k.data(), v.data(), q.data(), out.data(), &step),
            TKV_SUCCESS)
      << step << ": " << last_error();

  auto engine = turbokv::Engine::create();
  turbokv::CacheConfig c;
  c.layers = 1;
  c.kv_heads = kv_heads;
  c.head_dim = dim;
  c.page_size = 16;
  c.capacity_tokens = tokens;
  c.max_sequences = 1;
  turbokv::Cache cache(engine, c);
  turbokv::Decoder decoder(cache, q_heads);
  const auto seq = cache.create_sequence();
  cache.append(seq, 0, tokens, {k.data()}, {v.data()});
  std::vector<float> expected(q.size());
  decoder.decode(0, seq, 1, {q.data(), q.size() * 4}, {expected.data(), expected.size() * 4});
  EXPECT_EQ(out, expected);

  const std::vector<std::vector<float>> ks = {k}, vs = {v};
  const auto exact = tkv::exact_attention(ks, vs, kv_heads, dim, 1, q_heads, q);
  EXPECT_LE(tkv::testing::max_head_error(out, exact, dim), 3e-3);
}

TEST(CApi, StatusCodesNameTheProblem) {
  tkv_clear_last_error();
  EXPECT_EQ(last_error(), "");
  expect_status(tkv_engine_create(nullptr, nullptr), TKV_ERROR_INVALID_ARGUMENT,
                {"tkv_engine_create", "output handle pointer is NULL"});

  tkv_engine_options options;
  tkv_engine_options_init(&options);
  EXPECT_EQ(options.persist_pipeline_cache, 1);
  options.device = "no-such-device-anywhere";
  tkv_engine* engine = reinterpret_cast<tkv_engine*>(&options);  // must be overwritten with NULL
  expect_status(tkv_engine_create(&options, &engine), TKV_ERROR_NOT_FOUND, {"no-such-device-anywhere"});
  EXPECT_EQ(engine, nullptr);

  ASSERT_EQ(tkv_engine_create(nullptr, &engine), TKV_SUCCESS) << last_error();
  EXPECT_NE(last_error(), "") << "a successful call leaves the last error as it was";
  tkv_device_info info;
  ASSERT_EQ(tkv_engine_get_info(engine, &info), TKV_SUCCESS);
  EXPECT_GT(std::strlen(info.name), 0u);
  EXPECT_EQ(info.adopted, 0);

  tkv_cache* cache = nullptr;
  auto config = small_config(1, 32);
  config.head_dim = 300;
  expect_status(tkv_cache_create(engine, &config, &cache), TKV_ERROR_INVALID_ARGUMENT, {"tkv_cache_create", "300"});
  EXPECT_EQ(cache, nullptr);
  config = small_config(1, 32);
  config.k_type = tkv_kv_type(9);
  expect_status(tkv_cache_create(engine, &config, &cache), TKV_ERROR_INVALID_ARGUMENT, {"unknown KV type 9"});
  expect_status(tkv_cache_create(nullptr, &config, &cache), TKV_ERROR_INVALID_ARGUMENT, {"engine is NULL"});

  config = small_config(1, 32);
  ASSERT_EQ(tkv_cache_create(engine, &config, &cache), TKV_SUCCESS) << last_error();
  uint32_t seq = 0, length = 0;
  ASSERT_EQ(tkv_cache_create_sequence(cache, &seq), TKV_SUCCESS);
  std::vector<float> rows(33 * 64, 0.5f);
  expect_status(tkv_cache_append(cache, seq, 0, 33, rows.data(), TKV_FORMAT_F32, rows.data(), TKV_FORMAT_F32),
                TKV_ERROR_CAPACITY, {"tkv_cache_append", "cache full"});
  rows[70] = INFINITY;
  expect_status(tkv_cache_append(cache, seq, 0, 2, rows.data(), TKV_FORMAT_F32, rows.data(), TKV_FORMAT_F32),
                TKV_ERROR_NUMERIC, {"not finite"});
  expect_status(tkv_cache_append(cache, seq, 0, 1, rows.data(), tkv_format(3), rows.data(), TKV_FORMAT_F32),
                TKV_ERROR_INVALID_ARGUMENT, {"unknown element format 3"});
  expect_status(tkv_cache_length(cache, seq + 1, 0, &length), TKV_ERROR_NOT_FOUND, {"tkv_cache_length", "sequence"});
  expect_status(tkv_cache_length(cache, seq, 0, nullptr), TKV_ERROR_INVALID_ARGUMENT, {"length is NULL"});
  ASSERT_EQ(tkv_cache_append(cache, seq, 0, 1, rows.data(), TKV_FORMAT_F32, rows.data(), TKV_FORMAT_F32), TKV_SUCCESS);
  ASSERT_EQ(tkv_cache_length(cache, seq, TKV_ALL_LAYERS, &length), TKV_SUCCESS);
  EXPECT_EQ(length, 1u);
  tkv_cache_memory memory;
  ASSERT_EQ(tkv_cache_get_memory(cache, &memory), TKV_SUCCESS);
  EXPECT_EQ(memory.capacity_tokens, 32u);
  EXPECT_EQ(memory.free_tokens, 0u);

  tkv_decoder* decoder = nullptr;
  expect_status(tkv_decoder_create(cache, 0, &decoder), TKV_ERROR_INVALID_ARGUMENT, {"query heads"});
  ASSERT_EQ(tkv_decoder_create(cache, 2, &decoder), TKV_SUCCESS);
  std::vector<float> q(2 * 64, 1.0f), out(2 * 64);
  expect_status(tkv_decode(decoder, 0, &seq, 1, 2, q.data(), q.size() * 4, TKV_FORMAT_F32, out.data(), out.size() * 4,
                           TKV_FORMAT_F32, nullptr),
                TKV_ERROR_INVALID_ARGUMENT, {"tkv_decode", "m = 2"});
  expect_status(tkv_decode(decoder, 0, nullptr, 1, 1, q.data(), q.size() * 4, TKV_FORMAT_F32, out.data(),
                           out.size() * 4, TKV_FORMAT_F32, nullptr),
                TKV_ERROR_INVALID_ARGUMENT, {"sequences is NULL"});
  tkv_decode_options decode_options;
  tkv_decode_options_init(&decode_options);
  EXPECT_EQ(decode_options.variant, TKV_VARIANT_AUTOMATIC);
  tkv_plan plan;
  ASSERT_EQ(tkv_decoder_plan(decoder, 0, &seq, 1, 1, &decode_options, &plan), TKV_SUCCESS) << last_error();
  EXPECT_GE(plan.splits, 1u);
  EXPECT_NE(plan.variant, TKV_VARIANT_AUTOMATIC);
  EXPECT_GT(std::strlen(plan.description), 0u);
  ASSERT_EQ(tkv_decode(decoder, 0, &seq, 1, 1, q.data(), q.size() * 4, TKV_FORMAT_F32, out.data(), out.size() * 4,
                       TKV_FORMAT_F32, &decode_options),
            TKV_SUCCESS)
      << last_error();
  // One token: attention returns its V row (all 0.5) for both query heads.
  for (float x : out) EXPECT_NEAR(x, 0.5f, 1e-3f);

  // Destroy in any order; NULL is ignored.
  tkv_engine_destroy(engine);
  tkv_cache_destroy(cache);
  ASSERT_EQ(tkv_decode(decoder, 0, &seq, 1, 1, q.data(), q.size() * 4, TKV_FORMAT_F32, out.data(), out.size() * 4,
                       TKV_FORMAT_F32, nullptr),
            TKV_SUCCESS);
  tkv_decoder_destroy(decoder);
  tkv_engine_destroy(nullptr);
  tkv_cache_destroy(nullptr);
  tkv_decoder_destroy(nullptr);

  EXPECT_STREQ(tkv_status_name(TKV_ERROR_CAPACITY), "TKV_ERROR_CAPACITY");
  EXPECT_STREQ(tkv_status_name(tkv_status(77)), "unknown status");
  EXPECT_GT(std::strlen(tkv_version()), 4u);
  tkv_clear_last_error();
  EXPECT_EQ(last_error(), "");
}

// The boundary itself: every library error code has its own status, allocation failure and any
// other exception become statuses too, and the message names the function.
TEST(CApi, ExceptionsBecomeStatuses) {
  using turbokv::detail::guarded;
  const std::pair<tkv::ErrorCode, tkv_status> codes[] = {
      {tkv::ErrorCode::invalid_argument, TKV_ERROR_INVALID_ARGUMENT}, {tkv::ErrorCode::capacity, TKV_ERROR_CAPACITY},
      {tkv::ErrorCode::not_found, TKV_ERROR_NOT_FOUND},              {tkv::ErrorCode::numeric, TKV_ERROR_NUMERIC},
      {tkv::ErrorCode::vulkan, TKV_ERROR_VULKAN},                    {tkv::ErrorCode::no_device, TKV_ERROR_NO_DEVICE},
      {tkv::ErrorCode::io, TKV_ERROR_IO},                            {tkv::ErrorCode::device_lost, TKV_ERROR_DEVICE_LOST}};
  for (const auto& [code, status] : codes)
    expect_status(guarded("tkv_x", [&] { tkv::fail(code, "what went wrong"); }), status, {"tkv_x: what went wrong"});
  expect_status(guarded("tkv_y", [] { throw std::bad_alloc(); }), TKV_ERROR_OUT_OF_MEMORY,
                {"tkv_y", "out of host memory"});
  expect_status(guarded("tkv_z", [] { throw std::logic_error("boom"); }), TKV_ERROR_INTERNAL, {"tkv_z", "boom"});
  expect_status(guarded("tkv_w", [] { throw 42; }), TKV_ERROR_INTERNAL, {"tkv_w", "unknown type"});
  EXPECT_EQ(guarded("tkv_v", [] {}), TKV_SUCCESS);
}

TEST(CApi, LastErrorIsPerThread) {
  tkv_clear_last_error();
  expect_status(tkv_cache_create_sequence(nullptr, nullptr), TKV_ERROR_INVALID_ARGUMENT, {"cache is NULL"});
  std::string seen_before, seen_after;
  std::thread other([&] {
    seen_before = tkv_last_error();
    tkv_decoder_destroy(nullptr);
    (void)tkv_cache_truncate(nullptr, 0, 0);
    seen_after = tkv_last_error();
  });
  other.join();
  EXPECT_EQ(seen_before, "");
  EXPECT_NE(seen_after.find("tkv_cache_truncate"), std::string::npos);
  EXPECT_NE(last_error().find("tkv_cache_create_sequence"), std::string::npos) << "another thread's failure leaked";
}

// The record path through the C API on the host's own Vulkan objects: equal to the host path.
TEST(CApi, AdoptedEngineRecordsIntoHostCommandBuffer) {
  auto host = std::make_unique<HostVulkan>();
  {
    const auto d = host->device_handles();
    tkv_device_requirements req;
    ASSERT_EQ(tkv_get_device_requirements(d.instance, d.physical_device, &req), TKV_SUCCESS) << last_error();
    ASSERT_EQ(req.extension_count, 1u);
    EXPECT_STREQ(req.extensions[0], VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    EXPECT_EQ(req.storage_buffer_16bit_access, VK_TRUE);

    const tkv_vulkan_device device = {d.instance, d.instance_api_version, d.physical_device, d.device,
                                      d.create_info, d.queue, d.queue_family_index};
    tkv_engine* engine = nullptr;
    ASSERT_EQ(tkv_engine_adopt(&device, nullptr, &engine), TKV_SUCCESS) << last_error();
    tkv_device_info info;
    ASSERT_EQ(tkv_engine_get_info(engine, &info), TKV_SUCCESS);
    EXPECT_EQ(info.adopted, 1);
    tkv_vulkan_device broken = device;
    broken.create_info = nullptr;
    tkv_engine* refused = nullptr;
    expect_status(tkv_engine_adopt(&broken, nullptr, &refused), TKV_ERROR_INVALID_ARGUMENT, {"VkDeviceCreateInfo"});
    EXPECT_EQ(refused, nullptr);

    const uint32_t kv_heads = 2, q_heads = 4, tokens = 21, dim = 64;
    auto config = small_config(kv_heads, 64);
    config.k_type = TKV_KV_TURBO3;
    config.v_type = TKV_KV_TURBO4;
    tkv_cache *cache = nullptr, *twin = nullptr;
    ASSERT_EQ(tkv_cache_create(engine, &config, &cache), TKV_SUCCESS) << last_error();
    ASSERT_EQ(tkv_cache_create(engine, &config, &twin), TKV_SUCCESS) << last_error();
    tkv_decoder *decoder = nullptr, *twin_decoder = nullptr;
    ASSERT_EQ(tkv_decoder_create(cache, q_heads, &decoder), TKV_SUCCESS);
    ASSERT_EQ(tkv_decoder_create(twin, q_heads, &twin_decoder), TKV_SUCCESS);
    uint32_t seq = 0, twin_seq = 0;
    ASSERT_EQ(tkv_cache_create_sequence(cache, &seq), TKV_SUCCESS);
    ASSERT_EQ(tkv_cache_create_sequence(twin, &twin_seq), TKV_SUCCESS);

    std::mt19937 rng(4);
    const auto k = tkv::testing::random_rows(rng, tokens, kv_heads, dim, true);
    const auto v = tkv::testing::random_rows(rng, tokens, kv_heads, dim, false);
    const auto q = tkv::testing::random_rows(rng, 1, q_heads, dim, false);
    HostBuffer rows = host->buffer(k.size() * 8 + 1024, true), out = host->buffer(q.size() * 4 + 512, true);
    std::memcpy(rows.mapped, k.data(), k.size() * 4);  // host writes before the submission: no barrier needed
    std::memcpy(static_cast<char*>(rows.mapped) + k.size() * 4, v.data(), v.size() * 4);
    const VkDeviceSize q_at = (k.size() + v.size()) * 4;
    std::memcpy(static_cast<char*>(rows.mapped) + q_at, q.data(), q.size() * 4);

    VkCommandBuffer cmd = host->begin();
    const tkv_device_span ks = {rows.buffer, 0, k.size() * 4, TKV_FORMAT_F32};
    const tkv_device_span vs = {rows.buffer, k.size() * 4, v.size() * 4, TKV_FORMAT_F32};
    ASSERT_EQ(tkv_cache_record_append(cache, cmd, seq, 0, tokens, &ks, &vs), TKV_SUCCESS) << last_error();
    const tkv_device_span short_k = {rows.buffer, 0, 64, TKV_FORMAT_F32};
    expect_status(tkv_cache_record_append(cache, cmd, seq, 0, tokens, &short_k, &vs), TKV_ERROR_INVALID_ARGUMENT,
                  {"tkv_cache_record_append", "holds 64 bytes"});
    const tkv_device_span qs = {rows.buffer, q_at, q.size() * 4, TKV_FORMAT_F32};
    const tkv_device_span os = {out.buffer, 260, q.size() * 4, TKV_FORMAT_F32};
    ASSERT_EQ(tkv_decoder_record(decoder, cmd, 0, &seq, 1, 1, &qs, &os, nullptr), TKV_SUCCESS) << last_error();
    HostVulkan::host_read_barrier(cmd);
    host->submit_and_wait(cmd);
    std::vector<float> recorded(q.size());
    std::memcpy(recorded.data(), static_cast<char*>(out.mapped) + 260, q.size() * 4);

    ASSERT_EQ(tkv_cache_append(twin, twin_seq, 0, tokens, k.data(), TKV_FORMAT_F32, v.data(), TKV_FORMAT_F32),
              TKV_SUCCESS);
    std::vector<float> expected(q.size());
    ASSERT_EQ(tkv_decode(twin_decoder, 0, &twin_seq, 1, 1, q.data(), q.size() * 4, TKV_FORMAT_F32, expected.data(),
                         expected.size() * 4, TKV_FORMAT_F32, nullptr),
              TKV_SUCCESS);
    EXPECT_EQ(recorded, expected);

    tkv_decoder_destroy(decoder);
    tkv_decoder_destroy(twin_decoder);
    tkv_cache_destroy(cache);
    tkv_cache_destroy(twin);
    tkv_engine_destroy(engine);
  }
  HostVulkan::destroy_expecting_no_messages(host);
}
