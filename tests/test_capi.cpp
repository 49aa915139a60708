// The C API (include/turbokv/turbokv.h): a decode driven from C (tests/test_capi_c.c) against the
// C++ API and exact attention; every failure kind as its status code with a message naming the
// problem and the function; no exception across the boundary (bad_alloc and foreign exceptions
// included); the last error per thread; the record path on the host's own Vulkan objects; cache
// files (save, inspect, load with the caller's id array).
#include "turbokv/turbokv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "attention/api/capi_status.hpp"
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

    // One more token appended and decoded by one call (fused: the new token's attention is its
    // own split, merged with the others): the twin's append and decode, to float rounding.
    const auto k1 = tkv::testing::random_rows(rng, 1, kv_heads, dim, true);
    const auto v1 = tkv::testing::random_rows(rng, 1, kv_heads, dim, false);
    HostBuffer rows1 = host->buffer((k1.size() + v1.size()) * 4 + 256, true);
    std::memcpy(rows1.mapped, k1.data(), k1.size() * 4);
    std::memcpy(static_cast<char*>(rows1.mapped) + k1.size() * 4, v1.data(), v1.size() * 4);
    const tkv_device_span k1s = {rows1.buffer, 0, k1.size() * 4, TKV_FORMAT_F32};
    const tkv_device_span v1s = {rows1.buffer, k1.size() * 4, v1.size() * 4, TKV_FORMAT_F32};
    cmd = host->begin();
    ASSERT_EQ(tkv_decoder_record_append_decode(decoder, cmd, 0, &seq, 1, 1, &k1s, &v1s, &qs, &os, nullptr), TKV_SUCCESS)
        << last_error();
    expect_status(tkv_decoder_record_append_decode(decoder, cmd, 0, &seq, 1, 1, &short_k, &v1s, &qs, &os, nullptr),
                  TKV_ERROR_INVALID_ARGUMENT, {"tkv_decoder_record_append_decode", "K rows hold 64 bytes"});
    HostVulkan::host_read_barrier(cmd);
    host->submit_and_wait(cmd);
    std::memcpy(recorded.data(), static_cast<char*>(out.mapped) + 260, q.size() * 4);
    ASSERT_EQ(tkv_cache_append(twin, twin_seq, 0, 1, k1.data(), TKV_FORMAT_F32, v1.data(), TKV_FORMAT_F32), TKV_SUCCESS);
    ASSERT_EQ(tkv_decode(twin_decoder, 0, &twin_seq, 1, 1, q.data(), q.size() * 4, TKV_FORMAT_F32, expected.data(),
                         expected.size() * 4, TKV_FORMAT_F32, nullptr),
              TKV_SUCCESS);
    ASSERT_EQ(recorded.size(), expected.size());
    for (size_t i = 0; i < recorded.size(); ++i) EXPECT_NEAR(recorded[i], expected[i], 1e-5f) << i;

    tkv_decoder_destroy(decoder);
    tkv_decoder_destroy(twin_decoder);
    tkv_cache_destroy(cache);
    tkv_cache_destroy(twin);
    tkv_engine_destroy(engine);
  }
  HostVulkan::destroy_expecting_no_messages(host);
}

// ---- Cache files through the C API

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tkv-capi-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Removes the files it names at the end of the test.
struct Cleanup {
  std::vector<std::string> paths;
  ~Cleanup() {
    std::error_code ec;
    for (const auto& p : paths) std::filesystem::remove(p, ec);
  }
};

// Decode of one query per head for `seq` on layer 0.
std::vector<float> decode_one(tkv_decoder* decoder, uint32_t seq, const std::vector<float>& q) {
  std::vector<float> out(q.size(), std::nanf(""));
  EXPECT_EQ(tkv_decode(decoder, 0, &seq, 1, 1, q.data(), q.size() * 4, TKV_FORMAT_F32, out.data(), out.size() * 4,
                       TKV_FORMAT_F32, nullptr),
            TKV_SUCCESS)
      << last_error();
  return out;
}

}  // namespace

// Save, inspect, load: the loaded sequences decode exactly as the saved ones, and saving them
// again gives the same bytes (the reference rows round-trip bit for bit). Too small an id array,
// a corrupt file and bad arguments are statuses with messages, and leave the cache as it was.
TEST(CApi, CacheFiles) {
  Cleanup files;
  const std::string path = temp_path("two.tkv"), again = temp_path("again.tkv"), corrupt = temp_path("corrupt.tkv");
  files.paths = {path, again, corrupt};
  tkv_engine* engine = nullptr;
  ASSERT_EQ(tkv_engine_create(nullptr, &engine), TKV_SUCCESS) << last_error();
  const uint32_t kv_heads = 2, q_heads = 4, dim = 64;
  auto config = small_config(kv_heads, 256);
  config.k_type = TKV_KV_TURBO3;
  config.v_type = TKV_KV_Q8_0;
  config.max_sequences = 4;
  tkv_cache *source = nullptr, *target = nullptr;
  ASSERT_EQ(tkv_cache_create(engine, &config, &source), TKV_SUCCESS) << last_error();
  // The same page size, so the same decode plan and bit-equal outputs (test_api loads into
  // another page size).
  ASSERT_EQ(tkv_cache_create(engine, &config, &target), TKV_SUCCESS) << last_error();
  tkv_decoder *source_decoder = nullptr, *target_decoder = nullptr;
  ASSERT_EQ(tkv_decoder_create(source, q_heads, &source_decoder), TKV_SUCCESS);
  ASSERT_EQ(tkv_decoder_create(target, q_heads, &target_decoder), TKV_SUCCESS);

  std::mt19937 rng(21);
  uint32_t seqs[2];
  const uint32_t lengths[2] = {45, 7};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(tkv_cache_create_sequence(source, &seqs[i]), TKV_SUCCESS);
    const auto k = tkv::testing::random_rows(rng, lengths[i], kv_heads, dim, true);
    const auto v = tkv::testing::random_rows(rng, lengths[i], kv_heads, dim, false);
    ASSERT_EQ(tkv_cache_append(source, seqs[i], 0, lengths[i], k.data(), TKV_FORMAT_F32, v.data(), TKV_FORMAT_F32),
              TKV_SUCCESS);
  }
  ASSERT_EQ(tkv_cache_save(source, seqs, 2, path.c_str()), TKV_SUCCESS) << last_error();

  tkv_cache_file_info info;
  ASSERT_EQ(tkv_cache_file_inspect(path.c_str(), &info), TKV_SUCCESS) << last_error();
  EXPECT_EQ(info.version, 1u);
  EXPECT_EQ(info.k_type, TKV_KV_TURBO3);
  EXPECT_EQ(info.v_type, TKV_KV_Q8_0);
  EXPECT_EQ(info.head_dim, dim);
  EXPECT_EQ(info.kv_heads, kv_heads);
  EXPECT_EQ(info.layers, 1u);
  EXPECT_EQ(info.sequence_count, 2u);
  EXPECT_EQ(info.tokens, 45u + 7u);
  EXPECT_EQ(info.file_bytes, std::filesystem::file_size(path));

  // An array of one for a file of two: TKV_ERROR_CAPACITY, *count says how many it needs, and
  // the cache is untouched (the first free slot is still the first id a load hands out).
  tkv_cache_memory memory_before, memory;
  ASSERT_EQ(tkv_cache_get_memory(target, &memory_before), TKV_SUCCESS);
  uint32_t ids[4] = {99, 99, 99, 99}, count = 77;
  expect_status(tkv_cache_load(target, path.c_str(), ids, 1, &count), TKV_ERROR_CAPACITY,
                {"tkv_cache_load", "holds 2 sequences", "room for 1", "nothing was loaded"});
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(ids[0], 99u);
  ASSERT_EQ(tkv_cache_get_memory(target, &memory), TKV_SUCCESS);
  EXPECT_EQ(memory.free_tokens, memory_before.free_tokens);

  // A corrupt file: TKV_ERROR_IO, nothing loaded.
  std::string bytes = file_bytes(path);
  bytes[bytes.size() / 2] ^= 0x01;
  std::ofstream(corrupt, std::ios::binary) << bytes;
  count = 77;
  expect_status(tkv_cache_load(target, corrupt.c_str(), ids, 4, &count), TKV_ERROR_IO, {"tkv_cache_load", "corrupt"});
  EXPECT_EQ(count, 0u);
  expect_status(tkv_cache_file_inspect(corrupt.c_str(), &info), TKV_ERROR_IO, {"corrupt"});
  EXPECT_EQ(info.sequence_count, 0u);
  ASSERT_EQ(tkv_cache_get_memory(target, &memory), TKV_SUCCESS);
  EXPECT_EQ(memory.free_tokens, memory_before.free_tokens);

  // Bad arguments.
  expect_status(tkv_cache_load(target, nullptr, ids, 4, &count), TKV_ERROR_INVALID_ARGUMENT, {"path is NULL"});
  expect_status(tkv_cache_load(target, path.c_str(), ids, 4, nullptr), TKV_ERROR_INVALID_ARGUMENT, {"count is NULL"});
  expect_status(tkv_cache_load(target, path.c_str(), nullptr, 4, &count), TKV_ERROR_INVALID_ARGUMENT,
                {"sequences is NULL"});
  expect_status(tkv_cache_save(source, nullptr, 2, again.c_str()), TKV_ERROR_INVALID_ARGUMENT, {"sequences is NULL"});
  const uint32_t unknown = seqs[1] + 1;
  expect_status(tkv_cache_save(source, &unknown, 1, again.c_str()), TKV_ERROR_NOT_FOUND,
                {"tkv_cache_save", "does not exist"});
  EXPECT_FALSE(std::filesystem::exists(again));
  expect_status(tkv_cache_file_inspect(temp_path("missing.tkv").c_str(), &info), TKV_ERROR_IO, {"missing.tkv"});

  // Exactly the room it needs: loads, in the file's order.
  ASSERT_EQ(tkv_cache_load(target, path.c_str(), ids, 2, &count), TKV_SUCCESS) << last_error();
  ASSERT_EQ(count, 2u);
  for (int i = 0; i < 2; ++i) {
    uint32_t length = 0;
    ASSERT_EQ(tkv_cache_length(target, ids[i], 0, &length), TKV_SUCCESS);
    EXPECT_EQ(length, lengths[i]);
    const auto q = tkv::testing::random_rows(rng, 1, q_heads, dim, false);
    EXPECT_EQ(decode_one(target_decoder, ids[i], q), decode_one(source_decoder, seqs[i], q)) << "sequence " << i;
  }
  ASSERT_EQ(tkv_cache_save(target, ids, 2, again.c_str()), TKV_SUCCESS) << last_error();
  EXPECT_TRUE(file_bytes(again) == file_bytes(path)) << "the re-saved file differs";
  // save_all of the target holds the same two sequences (the only live ones), in slot order.
  ASSERT_EQ(tkv_cache_save_all(target, again.c_str()), TKV_SUCCESS) << last_error();
  ASSERT_EQ(tkv_cache_file_inspect(again.c_str(), &info), TKV_SUCCESS);
  EXPECT_EQ(info.sequence_count, 2u);

  // A second load takes the last two slots (an array as large as the free slots: no inspection
  // first); a third finds no slot: TKV_ERROR_CAPACITY, nothing loaded.
  uint32_t more[2];
  ASSERT_EQ(tkv_cache_load(target, path.c_str(), more, 2, &count), TKV_SUCCESS) << last_error();
  EXPECT_EQ(count, 2u);
  count = 77;
  expect_status(tkv_cache_load(target, path.c_str(), ids, 4, &count), TKV_ERROR_CAPACITY,
                {"tkv_cache_load", "free sequence slots"});
  EXPECT_EQ(count, 0u);

  tkv_decoder_destroy(source_decoder);
  tkv_decoder_destroy(target_decoder);
  tkv_cache_destroy(source);
  tkv_cache_destroy(target);
  tkv_engine_destroy(engine);
}
