// The public C++ API (include/turbokv/) with the engine's own device: decode against the float64
// reference over the cache, the sequence lifecycle and memory figures, handle lifetimes, bad
// input (empty handles, enum values the library does not know) as turbokv::Error naming it, and
// cache files (bit-exact round trip; bad files leave the cache as it was).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "attention/api/access.hpp"
#include "attention/reference.hpp"
#include "cache_test_util.hpp"
#include "decode_fixture.hpp"
#include "turbokv/turbokv.hpp"

using turbokv::ErrorCode;
using tkv::test::expect_error;
using turbokv::detail::Access;

namespace {

turbokv::Engine& engine() {
  static turbokv::Engine e = turbokv::Engine::create();
  return e;
}

turbokv::CacheConfig config(turbokv::KvType k, turbokv::KvType v, uint32_t head_dim, uint32_t kv_heads) {
  turbokv::CacheConfig c;
  c.layers = 2;
  c.kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.k_type = k;
  c.v_type = v;
  c.page_size = 16;
  c.capacity_tokens = 512;
  c.max_sequences = 4;
  return c;
}

}  // namespace

TEST(ApiEngine, DescribesItsOwnDevice) {
  const auto info = engine().info();
  EXPECT_FALSE(info.name.empty());
  EXPECT_FALSE(info.adopted);
  EXPECT_FALSE(engine().adopted());
  EXPECT_GE(info.subgroup_size, 4u);
  EXPECT_NE(engine().vk_device(), VK_NULL_HANDLE);
  EXPECT_NE(engine().vk_queue(), VK_NULL_HANDLE);
  // A device the engine created itself meets the requirements it states for hosts.
  const auto req = turbokv::Engine::requirements(engine().vk_instance(), engine().vk_physical_device());
  ASSERT_EQ(req.extensions.size(), 1u);
  EXPECT_STREQ(req.extensions[0], VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  EXPECT_TRUE(req.storage_buffer_16bit_access);
  // The memory model is asked for exactly where the device offers it with its device scope.
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12};
  vkGetPhysicalDeviceFeatures2(engine().vk_physical_device(), &features);
  EXPECT_EQ(req.vulkan_memory_model, f12.vulkanMemoryModel && f12.vulkanMemoryModelDeviceScope);
  const std::string v(turbokv::version());
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
}

// Host-memory decode through the facade equals float64 attention over the cache's dequantized
// contents (the kernel's exactness bound), with GQA 4, two queries per sequence, a ragged batch,
// a soft-cap and a window, for a turbo K / turbo V pair at head dim 64 (the 64-element groups).
TEST(ApiDecode, MatchesFloat64ReferenceOverTheCache) {
  const uint32_t kv_heads = 2, ratio = 4, dim = 64, m = 2;
  turbokv::Cache cache(engine(), config(turbokv::KvType::turbo4, turbokv::KvType::turbo2, dim, kv_heads));
  turbokv::Decoder decoder(cache, kv_heads * ratio);
  EXPECT_EQ(decoder.q_heads(), kv_heads * ratio);
  std::mt19937 rng(3);
  std::vector<turbokv::SequenceId> seqs;
  for (uint32_t len : {23u, 90u}) {
    const auto s = cache.create_sequence();
    seqs.push_back(s);
    for (uint32_t layer = 0; layer < 2; ++layer) {
      const auto k = tkv::testing::random_rows(rng, len, kv_heads, dim, true);
      const auto v = tkv::testing::random_rows(rng, len, kv_heads, dim, false);
      cache.append(s, layer, len, {k.data()}, {v.data()});
    }
  }
  const auto q = tkv::testing::random_rows(rng, uint32_t(seqs.size()) * m, kv_heads * ratio, dim, false);
  turbokv::DecodeOptions options;
  options.softcap = 30.0f;
  options.window = 40;
  const auto plan = decoder.plan(1, seqs, m, options);
  EXPECT_GE(plan.splits, 1u);
  EXPECT_NE(plan.variant, turbokv::Variant::automatic);
  EXPECT_FALSE(plan.description.empty());
  std::vector<float> out(decoder.elements(uint32_t(seqs.size()), m), std::nanf(""));
  decoder.decode(1, seqs, m, {q.data(), q.size() * 4}, {out.data(), out.size() * 4}, options);
  tkv::DecodeOptions internal;
  internal.softcap = options.softcap;
  internal.window = options.window;
  const auto ref = tkv::reference_decode(Access::cache(cache), 1, seqs, m, kv_heads * ratio, q, internal);
  EXPECT_LE(tkv::testing::max_head_error(out, ref, dim), 1e-4);
}

TEST(ApiCache, SequencesAndMemory) {
  turbokv::Cache cache(engine(), config(turbokv::KvType::turbo3, turbokv::KvType::turbo3, 128, 2));
  EXPECT_EQ(cache.config().head_dim, 128u);
  EXPECT_EQ(cache.capacity_tokens(), 512u);
  EXPECT_EQ(cache.free_tokens(), 512u);
  EXPECT_GT(cache.total_bytes(), cache.capacity_tokens() * cache.bytes_per_token() / 2);
  // turbo3 at head dim 128: 50 bytes per head row and side in the reference layout, about that on the device.
  EXPECT_GE(cache.bytes_per_token(), 2u * 2 * 2 * 50);
  EXPECT_LE(cache.bytes_per_token(), 2u * 2 * 2 * 64);

  std::mt19937 rng(1);
  const auto a = cache.create_sequence(), b = cache.create_sequence();
  const auto k = tkv::testing::random_rows(rng, 2 * 20, 2, 128, true);
  const auto v = tkv::testing::random_rows(rng, 2 * 20, 2, 128, false);
  cache.append_all_layers(a, 20, {k.data()}, {v.data()});
  cache.append(b, 0, 5, {k.data()}, {v.data()});
  EXPECT_EQ(cache.length(a), 20u);
  EXPECT_EQ(cache.length(b), 0u);  // layer 1 has none yet
  EXPECT_EQ(cache.length(b, 0), 5u);
  EXPECT_EQ(cache.free_tokens(), 512u - 32 - 16);  // whole pages of 16
  cache.truncate(a, 10);
  EXPECT_EQ(cache.length(a), 10u);
  EXPECT_EQ(cache.free_tokens(), 512u - 16 - 16);
  EXPECT_EQ(cache.sequences().size(), 2u);
  cache.remove_sequence(a);
  EXPECT_FALSE(cache.contains(a));
  EXPECT_TRUE(cache.contains(b));
  expect_error([&] { cache.length(a); }, ErrorCode::not_found, "sequence");
  EXPECT_EQ(cache.free_tokens(), 512u - 16);
}

// A decoder keeps its cache and engine alive: handles may be dropped in any order.
TEST(ApiLifetime, HandlesDroppedInAnyOrder) {
  const uint32_t dim = 128;
  std::mt19937 rng(9);
  const auto k = tkv::testing::random_rows(rng, 30, 1, dim, true);
  const auto v = tkv::testing::random_rows(rng, 30, 1, dim, false);
  const auto q = tkv::testing::random_rows(rng, 1, 2, dim, false);
  std::vector<float> first(q.size()), second(q.size());
  turbokv::Decoder decoder;
  turbokv::SequenceId seq = 0;
  {
    auto own = turbokv::Engine::create();
    turbokv::Cache cache(own, config(turbokv::KvType::q8_0, turbokv::KvType::f16, dim, 1));
    seq = cache.create_sequence();
    for (uint32_t layer = 0; layer < 2; ++layer) cache.append(seq, layer, 30, {k.data()}, {v.data()});
    decoder = turbokv::Decoder(cache, 2);
    decoder.decode(0, seq, 1, {q.data(), q.size() * 4}, {first.data(), first.size() * 4});
  }  // the engine and cache handles are gone; the decoder holds both
  decoder.decode(0, seq, 1, {q.data(), q.size() * 4}, {second.data(), second.size() * 4});
  EXPECT_EQ(first, second);
  EXPECT_EQ(decoder.cache().length(seq), 30u);
  EXPECT_FALSE(decoder.cache().engine().adopted());
}

TEST(ApiErrors, EmptyHandlesAndUnknownValues) {
  expect_error([] { turbokv::Engine().info(); }, ErrorCode::invalid_argument, "engine: the handle is empty");
  expect_error([] { turbokv::Cache().create_sequence(); }, ErrorCode::invalid_argument, "cache: the handle is empty");
  expect_error([] { turbokv::Decoder().q_heads(); }, ErrorCode::invalid_argument, "decoder: the handle is empty");
  expect_error([] { turbokv::Cache(turbokv::Engine(), config(turbokv::KvType::f16, turbokv::KvType::f16, 64, 1)); },
               ErrorCode::invalid_argument, "engine: the handle is empty");
  expect_error([] { turbokv::Decoder(turbokv::Cache(), 4); }, ErrorCode::invalid_argument, "cache handle is empty");

  auto bad = config(turbokv::KvType(9), turbokv::KvType::f16, 64, 1);
  expect_error([&] { turbokv::Cache(engine(), bad); }, ErrorCode::invalid_argument, "unknown KV type 9");
  bad = config(turbokv::KvType::f16, turbokv::KvType::f16, 64, 1);
  bad.page_size = 10;
  expect_error([&] { turbokv::Cache(engine(), bad); }, ErrorCode::invalid_argument, "page_size 10");
  expect_error([] { turbokv::parse_kv_type("turbo5"); }, ErrorCode::invalid_argument, "turbo5");
  EXPECT_EQ(turbokv::parse_kv_type("turbo3"), turbokv::KvType::turbo3);
  EXPECT_EQ(turbokv::kv_type_name(turbokv::KvType::q8_0), "q8_0");
  EXPECT_EQ(turbokv::parse_variant(turbokv::variant_name(turbokv::Variant::mag4)), turbokv::Variant::mag4);

  turbokv::Cache cache(engine(), config(turbokv::KvType::f16, turbokv::KvType::f16, 64, 1));
  const auto seq = cache.create_sequence();
  std::vector<float> rows(64, 1.0f);
  expect_error([&] { cache.append(seq, 0, 1, {rows.data(), turbokv::Format(7)}, {rows.data()}); },
               ErrorCode::invalid_argument, "unknown element format 7");
  expect_error([&] { cache.append(seq, 5, 1, {rows.data()}, {rows.data()}); }, ErrorCode::invalid_argument,
               "layer 5");
  rows[3] = std::nanf("");
  expect_error([&] { cache.append(seq, 0, 1, {rows.data()}, {rows.data()}); }, ErrorCode::numeric, "not finite");
  rows[3] = 1.0f;
  cache.append(seq, 0, 1, {rows.data()}, {rows.data()});
  expect_error([&] { turbokv::Decoder(cache, 17); }, ErrorCode::invalid_argument, "query heads");
  turbokv::Decoder decoder(cache, 2);
  std::vector<float> q(128), out(128);
  turbokv::DecodeOptions options;
  options.variant = turbokv::Variant(42);
  expect_error([&] { decoder.decode(0, seq, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4}, options); },
               ErrorCode::invalid_argument, "unknown variant 42");
  expect_error([&] { decoder.decode(0, seq, 1, {q.data(), 4}, {out.data(), out.size() * 4}); },
               ErrorCode::invalid_argument, "q has 4 bytes");
  expect_error([&] { decoder.record(VK_NULL_HANDLE, 0, seq, 1, {}, {}); }, ErrorCode::invalid_argument,
               "command buffer is VK_NULL_HANDLE");
  expect_error([&] { cache.record_append(VK_NULL_HANDLE, seq, 0, 1, {}, {}); }, ErrorCode::invalid_argument,
               "command buffer is VK_NULL_HANDLE");
  expect_error([&] { decoder.record_append_decode(VK_NULL_HANDLE, 0, seq, 1, {}, {}, {}, {}); },
               ErrorCode::invalid_argument, "command buffer is VK_NULL_HANDLE");
}

// ---- Cache files through the public API (turbokv::Cache::save / save_all / load, inspect_cache_file)

namespace {

// A directory of this process's own under the system's temporary one, removed at the end.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("tkv-api-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// Every reference row a sequence holds, per layer, side and head (what a cache file stores).
std::vector<std::vector<uint8_t>> exported(const turbokv::Cache& cache, turbokv::SequenceId seq) {
  const auto& internal = Access::cache(cache);
  std::vector<std::vector<uint8_t>> rows;
  for (uint32_t layer = 0; layer < cache.config().layers; ++layer)
    for (tkv::Side side : {tkv::Side::k, tkv::Side::v})
      for (uint32_t h = 0; h < cache.config().kv_heads; ++h)
        rows.push_back(internal.export_rows(seq, layer, side, h, 0, cache.length(seq, layer)));
  return rows;
}

// What the cache looks like from outside: its sequences with their per-layer lengths and rows,
// and the free tokens.
struct Snapshot {
  std::vector<turbokv::SequenceId> sequences;
  std::vector<std::vector<uint32_t>> lengths;
  std::vector<std::vector<std::vector<uint8_t>>> rows;
  uint64_t free_tokens = 0;
  bool operator==(const Snapshot& o) const {
    return sequences == o.sequences && lengths == o.lengths && rows == o.rows && free_tokens == o.free_tokens;
  }
};
Snapshot snapshot(const turbokv::Cache& cache) {
  Snapshot s;
  s.sequences = cache.sequences();
  for (auto seq : s.sequences) {
    s.lengths.emplace_back();
    for (uint32_t l = 0; l < cache.config().layers; ++l) s.lengths.back().push_back(cache.length(seq, l));
    s.rows.push_back(exported(cache, seq));
  }
  s.free_tokens = cache.free_tokens();
  return s;
}

// A sequence with `lengths[layer]` random tokens on each layer.
turbokv::SequenceId add_sequence(turbokv::Cache& cache, std::mt19937& rng, const std::vector<uint32_t>& lengths) {
  const auto& c = cache.config();
  const auto seq = cache.create_sequence();
  for (uint32_t layer = 0; layer < c.layers; ++layer) {
    const auto k = tkv::testing::random_rows(rng, lengths[layer], c.kv_heads, c.head_dim, true);
    const auto v = tkv::testing::random_rows(rng, lengths[layer], c.kv_heads, c.head_dim, false);
    if (lengths[layer]) cache.append(seq, layer, lengths[layer], {k.data()}, {v.data()});
  }
  return seq;
}

}  // namespace

// Saved sequences load back bit for bit (their exported reference rows are equal), into a cache
// with another page size too, decode to identical outputs, and the header reads back as written.
TEST(ApiCacheFile, RoundTripIsBitExact) {
  TempDir dir("roundtrip");
  const uint32_t kv_heads = 2, dim = 64, q_heads = 4;
  auto cfg = config(turbokv::KvType::turbo3, turbokv::KvType::q8_0, dim, kv_heads);
  cfg.max_sequences = 8;
  turbokv::Cache source(engine(), cfg);
  std::mt19937 rng(11);
  const auto a = add_sequence(source, rng, {37, 35});  // ragged across layers
  const auto skipped = add_sequence(source, rng, {5, 5});
  const auto b = add_sequence(source, rng, {16, 16});
  const std::string path = dir.file("two.tkv");
  source.save(path, std::vector<turbokv::SequenceId>{b, a});  // the file's order: b, then a

  const auto info = turbokv::inspect_cache_file(path);
  EXPECT_EQ(info.version, 1u);
  EXPECT_EQ(info.k_type, turbokv::KvType::turbo3);
  EXPECT_EQ(info.v_type, turbokv::KvType::q8_0);
  EXPECT_EQ(info.head_dim, dim);
  EXPECT_EQ(info.kv_heads, kv_heads);
  EXPECT_EQ(info.layers, 2u);
  EXPECT_EQ(info.lengths, (std::vector<std::vector<uint32_t>>{{16, 16}, {37, 35}}));
  EXPECT_EQ(info.file_bytes, std::filesystem::file_size(path));

  cfg.page_size = 32;
  turbokv::Cache target(engine(), cfg);
  const auto other = add_sequence(target, rng, {3, 3});  // already there: stays as it was
  const auto other_rows = exported(target, other);
  const auto ids = target.load(path);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(target.sequences().size(), 3u);
  EXPECT_EQ(exported(target, ids[0]), exported(source, b));
  EXPECT_EQ(exported(target, ids[1]), exported(source, a));
  EXPECT_EQ(target.length(ids[1], 0), 37u);
  EXPECT_EQ(target.length(ids[1], 1), 35u);
  EXPECT_EQ(exported(target, other), other_rows);
  EXPECT_NE(ids[0], other);
  EXPECT_NE(ids[1], other);

  // save_all: every live sequence in slot order, back into the cache it came from; decode over
  // the loaded copies equals decode over the originals, bit for bit (the same page size, so the
  // same plan: with another page size the split-K schedule, and so the rounding, may differ).
  const std::string all = dir.file("all.tkv");
  source.save_all(all);
  EXPECT_EQ(turbokv::inspect_cache_file(all).lengths.size(), 3u);
  const auto before = source.sequences();
  const auto again = source.load(all);
  ASSERT_EQ(again.size(), 3u);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(exported(source, again[i]), exported(source, before[i]));
  EXPECT_TRUE(source.contains(skipped));
  turbokv::Decoder decoder(source, q_heads);
  const auto q = tkv::testing::random_rows(rng, 3, q_heads, dim, false);
  for (uint32_t layer = 0; layer < 2; ++layer) {
    std::vector<float> expected(q.size()), got(q.size(), std::nanf(""));
    decoder.decode(layer, before, 1, {q.data(), q.size() * 4}, {expected.data(), expected.size() * 4});
    decoder.decode(layer, again, 1, {q.data(), q.size() * 4}, {got.data(), got.size() * 4});
    EXPECT_EQ(got, expected) << "layer " << layer;
  }
}

// Bad files and bad saves: a clear turbokv::Error each, and the cache (and the target path of a
// failed save) as it was.
TEST(ApiCacheFile, BadFilesLeaveTheCacheUnchanged) {
  TempDir dir("bad");
  auto cfg = config(turbokv::KvType::turbo4, turbokv::KvType::turbo2, 64, 2);
  turbokv::Cache cache(engine(), cfg);
  std::mt19937 rng(12);
  const auto a = add_sequence(cache, rng, {20, 20});
  const std::string good = dir.file("good.tkv");
  cache.save(good, a);
  const auto before = snapshot(cache);

  // One flipped bit among the rows: the checksum says so (io), nothing is created.
  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string corrupt = dir.file("corrupt.tkv");
  bytes[bytes.size() / 2] ^= 0x10;
  std::ofstream(corrupt, std::ios::binary) << bytes;
  expect_error([&] { cache.load(corrupt); }, ErrorCode::io, "corrupt");
  expect_error([&] { turbokv::inspect_cache_file(corrupt); }, ErrorCode::io, "corrupt");
  EXPECT_TRUE(snapshot(cache) == before);

  const std::string truncated = dir.file("truncated.tkv");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 100);
  expect_error([&] { cache.load(truncated); }, ErrorCode::io, "truncated");
  expect_error([&] { cache.load(dir.file("missing.tkv")); }, ErrorCode::io, "missing.tkv");
  const std::string foreign = dir.file("foreign.txt");
  std::ofstream(foreign) << "not a cache file at all, just some text";
  expect_error([&] { cache.load(foreign); }, ErrorCode::io, "not a turbokv cache file");
  EXPECT_TRUE(snapshot(cache) == before);

  // Another shape: invalid_argument naming the field; no room: capacity.
  auto wide = cfg;
  wide.head_dim = 128;
  turbokv::Cache other(engine(), wide);
  expect_error([&] { other.load(good); }, ErrorCode::invalid_argument, "head_dim");
  EXPECT_TRUE(other.sequences().empty());
  auto small = cfg;
  small.capacity_tokens = 16;
  turbokv::Cache tiny(engine(), small);
  expect_error([&] { tiny.load(good); }, ErrorCode::capacity, "pages");
  EXPECT_TRUE(tiny.sequences().empty());
  EXPECT_EQ(tiny.free_tokens(), 16u);

  // Saves that cannot happen write nothing.
  const std::string target = dir.file("target.tkv");
  expect_error([&] { cache.save(target, a + 1); }, ErrorCode::not_found, "does not exist");
  expect_error([&] { cache.save(target, std::vector<turbokv::SequenceId>{a, a}); }, ErrorCode::invalid_argument,
               "listed twice");
  EXPECT_FALSE(std::filesystem::exists(target));
  expect_error([&] { cache.save(dir.file("no/such/dir/x.tkv"), a); }, ErrorCode::io, "no/such/dir");
  expect_error([] { turbokv::Cache().save_all("x"); }, ErrorCode::invalid_argument, "cache: the handle is empty");
  EXPECT_TRUE(snapshot(cache) == before);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path), {}), 4) << "a temporary file was left";
}
