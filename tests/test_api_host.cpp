// The public C++ API on a host application's Vulkan objects (tests/test_api_host_vulkan.hpp: the
// test creates and owns instance, device, queue, buffers and command buffers): adoption and its
// checks, appends and decodes recorded into the host's command buffer from and into the host's
// buffers, compared bit for bit with the self-contained engine and with the float64 reference;
// several engines on one device holding a range of KV heads each; engines on their own threads.
// Clean under the validation layer (with synchronization validation) on both the engine's and
// the host's instance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attention/api/access.hpp"
#include "attention/reference.hpp"
#include "cache_test_util.hpp"
#include "decode_fixture.hpp"
#include "kvcache/fp16.hpp"
#include "test_api_host_vulkan.hpp"
#include "turbokv/turbokv.hpp"

using tkv::test::HostBuffer;
using tkv::test::HostDeviceOptions;
using tkv::test::HostVulkan;
using tkv::test::expect_error;
using turbokv::detail::Access;

namespace {

// K and V rows of one sequence: [layer][token][kv_head][head_dim].
struct Rows {
  std::vector<float> k, v;
};

turbokv::CacheConfig small_config(uint32_t kv_heads, uint32_t layers = 2) {
  turbokv::CacheConfig c;
  c.layers = layers;
  c.kv_heads = kv_heads;
  c.head_dim = 128;
  c.k_type = turbokv::KvType::turbo3;
  c.v_type = turbokv::KvType::q8_0;
  c.page_size = 16;
  c.capacity_tokens = 256;
  c.max_sequences = 4;
  return c;
}

Rows random_sequence(std::mt19937& rng, uint32_t layers, uint32_t tokens, uint32_t kv_heads, uint32_t dim) {
  Rows r;
  for (uint32_t l = 0; l < layers; ++l) {
    auto k = tkv::testing::random_rows(rng, tokens, kv_heads, dim, true);
    auto v = tkv::testing::random_rows(rng, tokens, kv_heads, dim, false);
    r.k.insert(r.k.end(), k.begin(), k.end());
    r.v.insert(r.v.end(), v.begin(), v.end());
  }
  return r;
}

// Heads [first, first + count) of rows laid out [row][heads][dim].
std::vector<float> head_slice(const std::vector<float>& x, uint32_t heads, uint32_t dim, uint32_t first,
                              uint32_t count) {
  const size_t rows = x.size() / (size_t(heads) * dim);
  std::vector<float> out;
  for (size_t r = 0; r < rows; ++r) {
    const float* p = x.data() + (r * heads + first) * dim;
    out.insert(out.end(), p, p + size_t(count) * dim);
  }
  return out;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0.0f;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Bytes of floats placed one after another in a host-visible buffer, at offsets that are
// multiples of 4 but not of 256 (the engine binds at aligned offsets and passes the rest).
class Packer {
 public:
  explicit Packer(HostBuffer staging) : staging_(staging) {}
  VkDeviceSize put(const void* data, size_t bytes) {
    at_ += 12;  // a gap: offsets are never 256-aligned
    const VkDeviceSize offset = at_;
    if (offset + bytes > staging_.size) throw std::runtime_error("staging too small");
    std::memcpy(static_cast<char*>(staging_.mapped) + offset, data, bytes);
    at_ += bytes;
    return offset;
  }
  VkDeviceSize put(const std::vector<float>& x) { return put(x.data(), x.size() * 4); }
  VkDeviceSize used() const { return at_; }

 private:
  HostBuffer staging_;
  VkDeviceSize at_ = 0;
};

}  // namespace

// Appends and decodes recorded into the host's command buffer, from the host's device buffers
// (filled by the host's own transfers, no barrier of the host's: the engine's entry barrier
// covers them) into the host's output buffer at an unaligned offset: bit for bit what the
// self-contained engine computes from host memory, and float64-exact over the cache.
TEST(ApiHostVulkan, RecordedStepsMatchSelfContainedEngine) {
  auto host = std::make_unique<HostVulkan>();
  {
    const uint32_t kv_heads = 2, q_heads = 4, dim = 128, layers = 2;
    const auto cfg = small_config(kv_heads, layers);
    const std::vector<uint32_t> lengths = {37, 70};
    std::mt19937 rng(7);
    std::vector<Rows> rows;
    for (uint32_t len : lengths) rows.push_back(random_sequence(rng, layers, len, kv_heads, dim));

    auto engine = turbokv::Engine::adopt(host->device_handles());
    EXPECT_TRUE(engine.adopted());
    EXPECT_TRUE(engine.info().adopted);
    EXPECT_EQ(engine.vk_device(), host->device());
    turbokv::Cache cache(engine, cfg);
    turbokv::Decoder decoder(cache, q_heads);
    std::vector<turbokv::SequenceId> seqs;
    for (size_t s = 0; s < lengths.size(); ++s) seqs.push_back(cache.create_sequence());

    // The self-contained engine: its own instance and device, host memory in and out.
    auto own = turbokv::Engine::create();
    EXPECT_FALSE(own.adopted());
    turbokv::Cache own_cache(own, cfg);
    turbokv::Decoder own_decoder(own_cache, q_heads);
    std::vector<turbokv::SequenceId> own_seqs;
    for (size_t s = 0; s < lengths.size(); ++s) own_seqs.push_back(own_cache.create_sequence());

    HostBuffer staging = host->buffer(1 << 20, true), data = host->buffer(1 << 20, false);
    HostBuffer out_dev = host->buffer(8192 + 4096, false), readback = host->buffer(8192, true);

    // Step 1: the prefill of both sequences on both layers, then one query per sequence on layer 1.
    Packer pack(staging);
    struct Piece {
      VkDeviceSize k, v;
    };
    std::vector<std::vector<Piece>> pieces(lengths.size());
    for (size_t s = 0; s < lengths.size(); ++s) {
      const size_t per_layer = size_t(lengths[s]) * kv_heads * dim;
      for (uint32_t l = 0; l < layers; ++l)
        pieces[s].push_back({pack.put(rows[s].k.data() + l * per_layer, per_layer * 4),
                             pack.put(rows[s].v.data() + l * per_layer, per_layer * 4)});
    }
    std::normal_distribution<float> nd;
    std::vector<float> q(decoder.elements(uint32_t(seqs.size()), 1));
    for (auto& x : q) x = nd(rng);
    const VkDeviceSize q_at = pack.put(q);
    const VkDeviceSize out_at = 4100;  // a multiple of 4, not of 256
    const size_t out_bytes = q.size() * 4;

    VkCommandBuffer cmd = host->begin();
    host->copy(cmd, staging, 0, data, 0, pack.used());
    for (size_t s = 0; s < lengths.size(); ++s) {
      const uint64_t bytes = uint64_t(lengths[s]) * kv_heads * dim * 4;
      for (uint32_t l = 0; l < layers; ++l)
        cache.record_append(cmd, seqs[s], l, lengths[s], {data.buffer, pieces[s][l].k, bytes},
                            {data.buffer, pieces[s][l].v, bytes});
    }
    decoder.record(cmd, 1, seqs, 1, {data.buffer, q_at, q.size() * 4}, {out_dev.buffer, out_at, out_bytes});
    host->copy(cmd, out_dev, out_at, readback, 0, out_bytes);  // a transfer read: the engine's exit barrier covers it
    HostVulkan::host_read_barrier(cmd);
    for (size_t s = 0; s < lengths.size(); ++s) EXPECT_EQ(cache.length(seqs[s]), lengths[s]);  // at record time
    host->submit_and_wait(cmd);
    std::vector<float> out(q.size());
    std::memcpy(out.data(), readback.mapped, out_bytes);

    for (size_t s = 0; s < lengths.size(); ++s)
      own_cache.append_all_layers(own_seqs[s], lengths[s], {rows[s].k.data()}, {rows[s].v.data()});
    std::vector<float> own_out(q.size(), std::nanf(""));
    own_decoder.decode(1, own_seqs, 1, {q.data(), q.size() * 4}, {own_out.data(), own_out.size() * 4});
    EXPECT_EQ(max_abs_diff(out, own_out), 0.0f) << "the adopted engine and the self-contained one differ";
    const auto ref = tkv::reference_decode(Access::cache(cache), 1, seqs, 1, q_heads, q);
    EXPECT_LE(tkv::testing::max_head_error(out, ref, dim), 1e-4);

    // Step 2: one new token per sequence on both layers, in a second command buffer; the query
    // arrives as f16, the output goes out as f32 on layer 0.
    Packer pack2(staging);
    std::vector<Rows> next;
    std::vector<std::vector<Piece>> next_pieces(lengths.size());
    for (size_t s = 0; s < lengths.size(); ++s) {
      next.push_back(random_sequence(rng, layers, 1, kv_heads, dim));
      for (uint32_t l = 0; l < layers; ++l)
        next_pieces[s].push_back({pack2.put(next[s].k.data() + l * kv_heads * dim, kv_heads * dim * 4),
                                  pack2.put(next[s].v.data() + l * kv_heads * dim, kv_heads * dim * 4)});
    }
    std::vector<uint16_t> q16(q.size());
    for (auto& h : q16) h = tkv::float_to_half(nd(rng));
    const VkDeviceSize q16_at = pack2.put(q16.data(), q16.size() * 2);
    cmd = host->begin();
    host->copy(cmd, staging, 0, data, 0, pack2.used());
    for (size_t s = 0; s < lengths.size(); ++s)
      for (uint32_t l = 0; l < layers; ++l)
        cache.record_append(cmd, seqs[s], l, 1, {data.buffer, next_pieces[s][l].k, kv_heads * dim * 4},
                            {data.buffer, next_pieces[s][l].v, kv_heads * dim * 4});
    decoder.record(cmd, 0, seqs, 1, {data.buffer, q16_at, q16.size() * 2, turbokv::Format::f16},
                   {out_dev.buffer, out_at, out_bytes});
    host->copy(cmd, out_dev, out_at, readback, 0, out_bytes);
    HostVulkan::host_read_barrier(cmd);
    host->submit_and_wait(cmd);
    std::memcpy(out.data(), readback.mapped, out_bytes);

    for (size_t s = 0; s < lengths.size(); ++s)
      own_cache.append_all_layers(own_seqs[s], 1, {next[s].k.data()}, {next[s].v.data()});
    own_decoder.decode(0, own_seqs, 1, {q16.data(), q16.size() * 2, turbokv::Format::f16},
                       {own_out.data(), own_out.size() * 4});
    EXPECT_EQ(max_abs_diff(out, own_out), 0.0f);
    std::vector<float> q16f(q16.size());
    for (size_t i = 0; i < q16.size(); ++i) q16f[i] = tkv::half_to_float(q16[i]);
    const auto ref2 = tkv::reference_decode(Access::cache(cache), 0, seqs, 1, q_heads, q16f);
    EXPECT_LE(tkv::testing::max_head_error(out, ref2, dim), 1e-4);
    for (size_t s = 0; s < lengths.size(); ++s) EXPECT_EQ(cache.length(seqs[s]), lengths[s] + 1);

    // The host path works on the adopted engine too (it submits to the host's queue and waits).
    std::vector<float> host_path(q.size());
    decoder.decode(0, seqs, 1, {q16.data(), q16.size() * 2, turbokv::Format::f16}, {host_path.data(), out_bytes});
    EXPECT_EQ(max_abs_diff(host_path, out), 0.0f);

    // Step 3: a token appended and decoded by one call per sequence batch on layer 1
    // (record_append_decode): separate calls, bit for bit the self-contained engine's append then
    // decode; then fused (automatic), float64-exact over the cache.
    for (turbokv::AppendFusion fusion : {turbokv::AppendFusion::separate, turbokv::AppendFusion::automatic}) {
      Packer pack3(staging);
      std::vector<float> k3, v3;
      for (size_t s = 0; s < lengths.size(); ++s) {
        const Rows r3 = random_sequence(rng, 1, 1, kv_heads, dim);
        k3.insert(k3.end(), r3.k.begin(), r3.k.end());
        v3.insert(v3.end(), r3.v.begin(), r3.v.end());
      }
      const VkDeviceSize k3_at = pack3.put(k3), v3_at = pack3.put(v3), q3_at = pack3.put(q);
      turbokv::DecodeOptions options;
      options.fusion = fusion;
      cmd = host->begin();
      host->copy(cmd, staging, 0, data, 0, pack3.used());
      decoder.record_append_decode(cmd, 1, seqs, 1, {data.buffer, k3_at, k3.size() * 4}, {data.buffer, v3_at, v3.size() * 4},
                                   {data.buffer, q3_at, q.size() * 4}, {out_dev.buffer, out_at, out_bytes}, options);
      host->copy(cmd, out_dev, out_at, readback, 0, out_bytes);
      HostVulkan::host_read_barrier(cmd);
      host->submit_and_wait(cmd);
      std::memcpy(out.data(), readback.mapped, out_bytes);
      const size_t per_seq = size_t(kv_heads) * dim;
      for (size_t s = 0; s < lengths.size(); ++s)
        own_cache.append(own_seqs[s], 1, 1, {k3.data() + s * per_seq}, {v3.data() + s * per_seq});
      own_decoder.decode(1, own_seqs, 1, {q.data(), q.size() * 4}, {own_out.data(), own_out.size() * 4});
      if (fusion == turbokv::AppendFusion::separate) {
        EXPECT_EQ(max_abs_diff(out, own_out), 0.0f);
      }
      const auto ref3 = tkv::reference_decode(Access::cache(cache), 1, seqs, 1, q_heads, q);
      EXPECT_LE(tkv::testing::max_head_error(out, ref3, dim), 1e-4) << "fusion " << uint32_t(fusion);
      for (size_t s = 0; s < lengths.size(); ++s)
        for (auto side : {tkv::Side::k, tkv::Side::v})
          for (uint32_t h = 0; h < kv_heads; ++h) {
            const uint32_t len = cache.length(seqs[s], 1);
            EXPECT_EQ(Access::cache(cache).export_rows(seqs[s], 1, side, h, 0, len),
                      Access::cache(own_cache).export_rows(own_seqs[s], 1, side, h, 0, len));
          }
    }
    for (size_t s = 0; s < lengths.size(); ++s) EXPECT_EQ(cache.length(seqs[s], 1), lengths[s] + 3);
  }
  // Engine, caches and decoders are gone: the host's device is still the host's.
  VkCommandBuffer cmd = host->begin();
  host->submit_and_wait(cmd);
  // The validation layer reports any object the engine left on the device when the host destroys it.
  HostVulkan::destroy_expecting_no_messages(host);
}

// Adopt refuses a device without what the engine needs, naming it, and takes the older
// per-feature struct as well as the Vulkan 1.1 one.
TEST(ApiHostVulkan, AdoptChecksTheDevice) {
  using turbokv::ErrorCode;
  {
    HostVulkan host({.push_descriptor = false});
    expect_error([&] { turbokv::Engine::adopt(host.device_handles()); }, ErrorCode::invalid_argument,
                 "VK_KHR_push_descriptor");
    EXPECT_EQ(host.messages(), 0u);
  }
  {
    HostVulkan host({.storage_16bit = false});
    expect_error([&] { turbokv::Engine::adopt(host.device_handles()); }, ErrorCode::invalid_argument,
                 "storageBuffer16BitAccess");
  }
  {
    HostVulkan host({.use_vulkan11_struct = false});
    auto engine = turbokv::Engine::adopt(host.device_handles());  // VkPhysicalDevice16BitStorageFeatures
    EXPECT_TRUE(engine.adopted());
  }
  auto host_ptr = std::make_unique<HostVulkan>();
  HostVulkan& host = *host_ptr;
  auto handles = host.device_handles();
  auto with = [&](auto change) {
    auto d = handles;
    change(d);
    return [d] { turbokv::Engine::adopt(d); };
  };
  expect_error(with([](auto& d) { d.create_info = nullptr; }), ErrorCode::invalid_argument, "VkDeviceCreateInfo");
  expect_error(with([](auto& d) { d.device = VK_NULL_HANDLE; }), ErrorCode::invalid_argument, "device is VK_NULL_HANDLE");
  expect_error(with([](auto& d) { d.queue = VK_NULL_HANDLE; }), ErrorCode::invalid_argument, "queue is VK_NULL_HANDLE");
  expect_error(with([](auto& d) { d.queue_family_index = 99; }), ErrorCode::invalid_argument, "queue family 99");
  expect_error(with([](auto& d) { d.instance_api_version = VK_API_VERSION_1_0; }), ErrorCode::invalid_argument,
               "VK_API_VERSION_1_2");
  expect_error([] { turbokv::Engine::requirements(VK_NULL_HANDLE, VK_NULL_HANDLE); }, ErrorCode::invalid_argument,
               "VK_NULL_HANDLE");
  HostVulkan::destroy_expecting_no_messages(host_ptr);
}

// A model's KV heads sharded over two engines on one device (each adopting the host's device and
// queue, each cache holding half the KV heads with their query heads), recorded into one command
// buffer: the shards' outputs, put side by side per head, equal one engine holding every head.
TEST(ApiHostVulkan, TwoEnginesEachHoldingHalfTheHeads) {
  auto host = std::make_unique<HostVulkan>();
  {
    const uint32_t kv_heads = 4, ratio = 2, dim = 128, len = 50, m = 2, half = kv_heads / 2;
    std::mt19937 rng(11);
    const Rows rows = random_sequence(rng, 1, len, kv_heads, dim);
    const auto q = tkv::testing::random_rows(rng, m, kv_heads * ratio, dim, false);  // [m][q_heads][dim]

    auto full_engine = turbokv::Engine::adopt(host->device_handles());
    turbokv::Cache full(full_engine, small_config(kv_heads, 1));
    turbokv::Decoder full_decoder(full, kv_heads * ratio);
    const auto full_seq = full.create_sequence();
    full.append(full_seq, 0, len, {rows.k.data()}, {rows.v.data()});

    struct Shard {
      turbokv::Engine engine;
      turbokv::Cache cache;
      turbokv::Decoder decoder;
      turbokv::SequenceId seq;
      std::vector<float> q;
      VkDeviceSize q_at, out_at;
    };
    std::vector<Shard> shards;
    HostBuffer staging = host->buffer(1 << 18, true), out_dev = host->buffer(1 << 16, false);
    HostBuffer readback = host->buffer(1 << 16, true);
    Packer pack(staging);
    for (uint32_t s = 0; s < 2; ++s) {
      Shard sh;
      sh.engine = turbokv::Engine::adopt(host->device_handles());
      sh.cache = turbokv::Cache(sh.engine, small_config(half, 1));
      sh.decoder = turbokv::Decoder(sh.cache, half * ratio);
      sh.seq = sh.cache.create_sequence();
      sh.cache.append(sh.seq, 0, len, {head_slice(rows.k, kv_heads, dim, s * half, half).data()},
                      {head_slice(rows.v, kv_heads, dim, s * half, half).data()});
      sh.q = head_slice(q, kv_heads * ratio, dim, s * half * ratio, half * ratio);
      sh.q_at = pack.put(sh.q);
      shards.push_back(std::move(sh));
    }
    const VkDeviceSize full_q_at = pack.put(q);
    const uint64_t shard_bytes = shards[0].q.size() * 4, full_bytes = q.size() * 4;
    shards[0].out_at = 0;
    shards[1].out_at = shard_bytes;
    const VkDeviceSize full_out_at = 2 * shard_bytes;

    turbokv::DecodeOptions options;
    options.splits = 2;  // the same schedule in every engine, whatever the plan would pick per head count
    VkCommandBuffer cmd = host->begin();
    for (const auto& sh : shards) EXPECT_EQ(sh.decoder.plan(0, sh.seq, m, options).splits, 2u);
    for (auto& sh : shards)
      sh.decoder.record(cmd, 0, sh.seq, m, {staging.buffer, sh.q_at, shard_bytes},
                        {out_dev.buffer, sh.out_at, shard_bytes}, options);
    full_decoder.record(cmd, 0, full_seq, m, {staging.buffer, full_q_at, full_bytes},
                        {out_dev.buffer, full_out_at, full_bytes}, options);
    host->copy(cmd, out_dev, 0, readback, 0, 2 * shard_bytes + full_bytes);
    HostVulkan::host_read_barrier(cmd);
    host->submit_and_wait(cmd);

    std::vector<float> shard_out[2], full_out(q.size());
    for (uint32_t s = 0; s < 2; ++s) {
      shard_out[s].resize(shards[s].q.size());
      std::memcpy(shard_out[s].data(), static_cast<char*>(readback.mapped) + shards[s].out_at, shard_bytes);
    }
    std::memcpy(full_out.data(), static_cast<char*>(readback.mapped) + full_out_at, full_bytes);
    // Side by side per query row: [m][shard heads] + [m][shard heads] -> [m][q_heads].
    std::vector<float> combined;
    const size_t row = size_t(half) * ratio * dim;
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t s = 0; s < 2; ++s)
        combined.insert(combined.end(), shard_out[s].begin() + i * row, shard_out[s].begin() + (i + 1) * row);
    EXPECT_EQ(max_abs_diff(combined, full_out), 0.0f) << "sharded heads differ from one engine holding them all";
    const auto ref = tkv::reference_decode(Access::cache(full), 0, std::vector<uint32_t>{full_seq}, m,
                                           kv_heads * ratio, q);
    EXPECT_LE(tkv::testing::max_head_error(combined, ref, dim), 1e-4);
  }
  HostVulkan::destroy_expecting_no_messages(host);
}

// Engines on their own threads at once (self-contained, each with its own device and queue: no
// shared queue), each holding half the KV heads: the same result as one engine holding them all.
TEST(ApiThreads, ShardEnginesOnTwoThreads) {
  const uint32_t kv_heads = 4, ratio = 2, dim = 128, len = 40, half = kv_heads / 2;
  std::mt19937 rng(5);
  const Rows rows = random_sequence(rng, 2, len, kv_heads, dim);
  const auto q = tkv::testing::random_rows(rng, 1, kv_heads * ratio, dim, false);
  turbokv::DecodeOptions options;
  options.splits = 2;

  auto full_engine = turbokv::Engine::create();
  turbokv::Cache full(full_engine, small_config(kv_heads));
  turbokv::Decoder full_decoder(full, kv_heads * ratio);
  const auto seq = full.create_sequence();
  full.append_all_layers(seq, len, {rows.k.data()}, {rows.v.data()});
  std::vector<float> expected(q.size());
  full_decoder.decode(1, seq, 1, {q.data(), q.size() * 4}, {expected.data(), expected.size() * 4}, options);

  std::vector<float> shard_out[2];
  std::string errors[2];
  std::vector<std::thread> threads;
  for (uint32_t s = 0; s < 2; ++s)
    threads.emplace_back([&, s] {
      try {
        // Everything of this engine lives and is used on this thread only.
        auto engine = turbokv::Engine::create();
        turbokv::Cache cache(engine, small_config(half));
        turbokv::Decoder decoder(cache, half * ratio);
        const auto id = cache.create_sequence();
        cache.append_all_layers(id, len, {head_slice(rows.k, kv_heads, dim, s * half, half).data()},
                                {head_slice(rows.v, kv_heads, dim, s * half, half).data()});
        const auto qs = head_slice(q, kv_heads * ratio, dim, s * half * ratio, half * ratio);
        shard_out[s].resize(qs.size());
        decoder.decode(1, id, 1, {qs.data(), qs.size() * 4}, {shard_out[s].data(), shard_out[s].size() * 4}, options);
      } catch (const std::exception& e) {
        errors[s] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors) ASSERT_EQ(e, "");
  std::vector<float> combined = shard_out[0];
  combined.insert(combined.end(), shard_out[1].begin(), shard_out[1].end());
  EXPECT_EQ(max_abs_diff(combined, expected), 0.0f);
}
