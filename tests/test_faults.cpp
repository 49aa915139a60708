// Out of device memory and device loss surface as tkv::Errors, never as a crash or a hang:
//  - an allocation larger than the device fails with ErrorCode::capacity before anything is
//    allocated;
//  - with the fault-injection hook (kvcache/vk/check.hpp), every Vulkan call an operation makes
//    is failed in turn with VK_ERROR_OUT_OF_DEVICE_MEMORY (-> capacity) and VK_ERROR_DEVICE_LOST
//    (-> device_lost): the operation throws naming the call and the result, the cache is left as
//    it was, no Vulkan object is left behind, and once the fault is cleared the same operation
//    gives the same result as before;
//  - after a (simulated) device loss every call fails with device_lost, and the objects can
//    still be destroyed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <cstring>
#include <vector>

#include <unistd.h>

#include "attention/decoder.hpp"
#include "attention/reference.hpp"
#include "cache_test_util.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/live_objects.hpp"

namespace tkv {
namespace {

using testing::max_head_error;
using testing::random_rows;
using testing::shared_context;

HostRows f32(const std::vector<float>& x) { return {x.data(), RowFormat::f32}; }

// Clears any armed fault when a test ends, even on failure.
struct FaultGuard {
  ~FaultGuard() { vk::clear_fault(); }
};

// The number of TKV_VK calls `op` makes (counted with a fault armed too far ahead to fire).
uint64_t count_checked_calls(const std::function<void()>& op) {
  vk::inject_fault(VK_ERROR_DEVICE_LOST, std::numeric_limits<uint64_t>::max());
  op();
  const uint64_t n = vk::checked_calls_while_armed();
  vk::clear_fault();
  return n;
}

constexpr uint32_t H = 2, D = 64, kQHeads = 4, kTokens = 40;

CacheConfig config(uint32_t layers = 1) {
  CacheConfig c;
  c.layers = layers;
  c.kv_heads = H;
  c.head_dim = D;
  c.k_type = KvType::turbo3;
  c.v_type = KvType::turbo3;
  c.page_size = 32;
  c.capacity_tokens = 256;
  c.max_sequences = 2;
  return c;
}

TEST(Faults, AllocationsLargerThanTheDeviceAreCapacityErrors) {
  auto ctx = shared_context();
  const DeviceCaps& caps = ctx->caps();
  const uint64_t heap = caps.device_local_bytes();
  ASSERT_GT(heap, 0u);
  const auto before = vk::live_objects();
  // A cache whose pools together exceed the device's memory: rejected before any allocation.
  CacheConfig c = config();
  c.capacity_tokens = uint64_t(1) << 18;  // fits one buffer per layer
  c.layers = uint32_t(heap / (uint64_t(1) << 20)) + 1;
  test::expect_error([&] { KvCache cache(ctx, c); }, ErrorCode::capacity, "has " + std::to_string(heap));
  // One buffer larger than the device allows.
  if (caps.max_allocation_size && caps.max_allocation_size < std::numeric_limits<uint64_t>::max() / 2)
    test::expect_error([&] { vk::Buffer b(*ctx, caps.max_allocation_size * 2, vk::MemoryKind::device); },
                       ErrorCode::capacity, "exceeds the device's largest allocation");
  EXPECT_EQ(vk::live_objects(), before) << vk::live_objects().str();
}

// A cache with one sequence of kTokens tokens, a decoder, and the decode output before any fault.
class FaultSweep : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = shared_context();
    cache_ = std::make_unique<KvCache>(ctx_, config());
    seq_ = cache_->create_sequence();
    std::mt19937 rng(99);
    k_ = random_rows(rng, kTokens + 8, H, D, true);
    v_ = random_rows(rng, kTokens + 8, H, D, false);
    q_ = random_rows(rng, 1, kQHeads, D, false);
    cache_->append(seq_, 0, kTokens, f32(k_), f32(v_));
    decoder_ = std::make_unique<Decoder>(*cache_, kQHeads);
    baseline_ = decode();
  }

  std::vector<float> decode() {
    std::vector<float> out(q_.size());
    const SequenceId seqs[] = {seq_};
    decoder_->decode(0, seqs, 1, {q_.data(), q_.size() * 4}, {out.data(), out.size() * 4});
    return out;
  }

  // Runs `op` once to warm up (pipelines, staging buffers), then fails each of its Vulkan calls
  // in turn with each result. `undo` restores the cache after a successful run; `recover` is what
  // the caller must do after a failed one (nothing, except where the API says otherwise).
  void sweep(const char* name, const std::function<void()>& op, const std::function<void()>& undo = [] {},
             const std::function<void()>& recover = [] {}) {
    FaultGuard guard;
    op();
    undo();
    const uint64_t calls = count_checked_calls(op);
    undo();
    ASSERT_GT(calls, 0u) << name << " makes no checked Vulkan call";
    const auto objects = vk::live_objects();
    const uint32_t free_pages = cache_->free_pages();
    struct Expected {
      VkResult result;
      ErrorCode code;
      const char* name;
    };
    const Expected faults[] = {{VK_ERROR_OUT_OF_DEVICE_MEMORY, ErrorCode::capacity, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
                               {VK_ERROR_DEVICE_LOST, ErrorCode::device_lost, "VK_ERROR_DEVICE_LOST"}};
    for (const auto& f : faults)
      for (uint64_t i = 0; i < calls; ++i) {
        SCOPED_TRACE(std::string(name) + ": " + f.name + " at checked call " + std::to_string(i) + " of " +
                     std::to_string(calls));
        vk::inject_fault(f.result, i);
        try {
          op();
          ADD_FAILURE() << "no error";
        } catch (const Error& e) {
          EXPECT_EQ(int(e.code()), int(f.code)) << e.what();
          EXPECT_NE(std::string(e.what()).find(f.name), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("vk"), std::string::npos) << "names no call: " << e.what();
        }
        vk::clear_fault();
        recover();
        EXPECT_EQ(cache_->length(seq_), kTokens);
        EXPECT_EQ(cache_->free_pages(), free_pages);
        EXPECT_EQ(vk::live_objects(), objects) << "now " << vk::live_objects().str() << ", before " << objects.str();
      }
    EXPECT_EQ(vk::injected_fault_count() > 0, true);
    // Cleared, the operation works again and the cache decodes exactly as before.
    op();
    undo();
    EXPECT_EQ(decode(), baseline_) << name;
  }

  std::shared_ptr<vk::Context> ctx_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<Decoder> decoder_;
  SequenceId seq_ = 0;
  std::vector<float> k_, v_, q_, baseline_;
};

TEST_F(FaultSweep, KvCacheConstruction) {
  sweep("KvCache()", [&] { KvCache other(ctx_, config(2)); });
}

TEST_F(FaultSweep, Append) {
  // 8 tokens from position 40: the sequence gets a new page (a page-table update).
  sweep(
      "append", [&] { cache_->append(seq_, 0, 8, f32(k_), f32(v_)); }, [&] { cache_->truncate(seq_, kTokens); });
}

TEST_F(FaultSweep, Decode) {
  sweep("decode", [&] { EXPECT_EQ(decode(), baseline_); });
}

TEST_F(FaultSweep, ExportAndImportRows) {
  const auto rows = cache_->export_rows(seq_, 0, Side::v, 1, 3, 30);
  sweep("export_rows", [&] { EXPECT_EQ(cache_->export_rows(seq_, 0, Side::v, 1, 3, 30), rows); });
  sweep("import_rows", [&] { cache_->import_rows(seq_, 0, Side::v, 1, 3, rows); });
}

TEST_F(FaultSweep, RecordedStep) {
  // One submission: append one token from a device buffer, then decode it.
  vk::Buffer rows(*ctx_, size_t(H) * D * 8, vk::MemoryKind::upload);
  std::memcpy(rows.mapped(), k_.data(), size_t(H) * D * 4);
  std::memcpy(static_cast<char*>(rows.mapped()) + size_t(H) * D * 4, v_.data(), size_t(H) * D * 4);
  vk::Buffer q(*ctx_, q_.size() * 4, vk::MemoryKind::upload), out(*ctx_, q_.size() * 4, vk::MemoryKind::readback);
  std::memcpy(q.mapped(), q_.data(), q_.size() * 4);
  const SequenceId seqs[] = {seq_};
  sweep(
      "record_append + record",
      [&] {
        ctx_->run([&](vk::Recorder& r) {
          cache_->record_append(r, seq_, 0, 1, {rows.handle(), 0}, {rows.handle(), uint64_t(H) * D * 4});
          decoder_->record(r, 0, seqs, 1, {q.handle(), 0, q.size()}, {out.handle(), 0, out.size()});
          r.host_barrier();
        });
      },
      [&] { cache_->truncate(seq_, kTokens); },
      // record_append advances the length when it records: after a failed submission the caller
      // truncates back (kvcache/kv_cache.hpp).
      [&] { cache_->truncate(seq_, kTokens); });
}

TEST(Faults, ContextCreationFailsCleanly) {
  FaultGuard guard;
  const auto before = vk::live_objects();
  const uint64_t calls = count_checked_calls([] { vk::Context::create(); });
  ASSERT_GT(calls, 0u);
  for (VkResult result : {VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_DEVICE_LOST})
    for (uint64_t i = 0; i < calls; ++i) {
      SCOPED_TRACE("checked call " + std::to_string(i) + " of " + std::to_string(calls));
      vk::inject_fault(result, i);
      try {
        vk::Context::create();
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(vk::result_name(result)), std::string::npos) << e.what();
      }
      vk::clear_fault();
    }
  EXPECT_EQ(vk::live_objects(), before) << vk::live_objects().str();
}

// A device lost for good (sticky): every call that reaches Vulkan fails with device_lost, the
// calls that do not (lengths, plans) still answer, and everything can be destroyed.
TEST(Faults, AfterDeviceLossEveryCallFailsAndObjectsCanBeDestroyed) {
  FaultGuard guard;
  const auto before = vk::live_objects();
  {
    auto ctx = vk::Context::create();
    auto cache = std::make_unique<KvCache>(ctx, config());
    const SequenceId seq = cache->create_sequence();
    std::mt19937 rng(5);
    const auto k = random_rows(rng, kTokens, H, D, true), v = random_rows(rng, kTokens, H, D, false);
    const auto q = random_rows(rng, 1, kQHeads, D, false);
    cache->append(seq, 0, kTokens, f32(k), f32(v));
    auto decoder = std::make_unique<Decoder>(*cache, kQHeads);
    std::vector<float> out(q.size());
    const SequenceId seqs[] = {seq};
    decoder->decode(0, seqs, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4});
    const auto ref = reference_decode(*cache, 0, seqs, 1, kQHeads, q);
    EXPECT_LE(max_head_error(out, ref, D), 1e-4);

    vk::inject_fault(VK_ERROR_DEVICE_LOST, 0, /*sticky=*/true);
    const auto lost = [](const std::function<void()>& fn, const char* what) {
      SCOPED_TRACE(what);
      test::expect_error(fn, ErrorCode::device_lost, "VK_ERROR_DEVICE_LOST");
    };
    lost([&] { cache->append(seq, 0, 1, f32(k), f32(v)); }, "append");
    lost([&] { decoder->decode(0, seqs, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4}); }, "decode");
    lost([&] { (void)cache->export_rows(seq, 0, Side::k, 0, 0, 4); }, "export_rows");
    lost([&] { KvCache another(ctx, config()); }, "KvCache()");
    lost([&] { ctx->run([](vk::Recorder&) {}); }, "Context::run");
    EXPECT_GE(vk::injected_fault_count(), 5u);
    // Bookkeeping without Vulkan calls still answers, unchanged.
    EXPECT_EQ(cache->length(seq), kTokens);
    EXPECT_NO_THROW((void)decoder->plan(0, seqs, 1));
    EXPECT_NO_THROW(cache->truncate(seq, 10));
    EXPECT_NO_THROW(cache->remove_sequence(seq));
    // Destroyed while the device is still lost.
    decoder.reset();
    cache.reset();
    ctx.reset();
  }
  vk::clear_fault();
  EXPECT_EQ(vk::live_objects().buffers, before.buffers);
  EXPECT_EQ(vk::live_objects().memory_bytes, before.memory_bytes);
  EXPECT_EQ(vk::live_objects().command_buffers, before.command_buffers);
}

// A wait that times out (ContextOptions::wait_timeout_ms, here 50 ms against seconds of fills on
// a CPU driver) leaves the work running: the call fails naming the timeout, later calls are
// refused until the work has finished, a buffer the work writes that is destroyed meanwhile is
// destroyed only once the work has ended (as is the work's command buffer), and then the context
// takes work again, the work's results are all there and no object is left behind. (Skipped
// where the fills finish in 50 ms.)
TEST(Faults, TimedOutWorkKeepsRunningAndTheContextRecovers) {
  const auto before = vk::live_objects();
  {
    vk::ContextOptions options;
    options.wait_timeout_ms = 50;
    options.persist_pipeline_cache = false;
    auto ctx = vk::Context::create(options);
    constexpr uint64_t kBytes = 64ull << 20;
    constexpr uint32_t kFills = 160, kLast = kFills - 1;
    vk::Buffer big(*ctx, kBytes, vk::MemoryKind::device);
    auto scratch = std::make_unique<vk::Buffer>(*ctx, kBytes, vk::MemoryKind::device);
    try {
      ctx->run([&](vk::Recorder& r) {
        for (uint32_t i = 0; i < kFills; ++i) {
          r.fill(i % 2 ? *scratch : big, 0, VK_WHOLE_SIZE, i);
          r.barrier();
        }
        r.fill(big, 0, VK_WHOLE_SIZE, kLast);
      });
      GTEST_SKIP() << "the fills finished within 50 ms on " << ctx->caps().name;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::vulkan);
      EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
    }
    const auto running = vk::live_objects();
    scratch.reset();  // still written by the work, unless it has just finished
    EXPECT_LE(vk::live_objects().buffers, running.buffers);
    // New work is refused while the old runs (each try waits 50 ms for it), then accepted.
    vk::Buffer small(*ctx, 256, vk::MemoryKind::readback);
    bool done = false;
    for (int attempt = 0; attempt < 1200 && !done; ++attempt) {
      try {
        ctx->run([&](vk::Recorder& r) {
          r.fill(small, 0, VK_WHOLE_SIZE, 0x5eed5eedu);
          r.host_barrier();
        });
        done = true;
      } catch (const Error& e) {
        // ("still running": the old work; "timed out": this small fill itself, on a loaded machine)
        EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
      }
    }
    ASSERT_TRUE(done) << "the context never took work again";
    EXPECT_TRUE(ctx->settled());
    // The scratch buffer and the timed-out command buffer are gone; the small buffer is new.
    EXPECT_EQ(vk::live_objects().buffers, running.buffers);
    EXPECT_EQ(vk::live_objects().command_buffers, running.command_buffers - 1);
    const auto* words = static_cast<const uint32_t*>(small.mapped());
    for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(words[i], 0x5eed5eedu) << i;
    std::vector<std::byte> head(4096), tail(4096);
    vk::download(*ctx, big, 0, head);
    vk::download(*ctx, big, kBytes - tail.size(), tail);
    for (const auto* bytes : {&head, &tail}) {
      std::vector<uint32_t> w(bytes->size() / 4);
      std::memcpy(w.data(), bytes->data(), bytes->size());
      for (uint32_t x : w) ASSERT_EQ(x, kLast);
    }
  }
  EXPECT_EQ(vk::live_objects(), before) << vk::live_objects().str();
}

// TKV_INJECT_FAULT arms the hook for a whole process: this test runs itself again with it set.
TEST(Faults, EnvironmentArmsTheHookForAProcess) {
  if (const char* spec = std::getenv("TKV_INJECT_FAULT")) {  // the child
    ASSERT_EQ(std::string(spec), "device_lost:0:sticky");
    test::expect_error([] { vk::Context::create(); }, ErrorCode::device_lost, "VK_ERROR_DEVICE_LOST");
    return;
  }
  const std::string command = "TKV_INJECT_FAULT=device_lost:0:sticky /proc/" + std::to_string(getpid()) +
                              "/exe --gtest_filter=Faults.EnvironmentArmsTheHookForAProcess 2>&1";
  FILE* child = popen(command.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), child)) output.append(buf, n);
  const int status = pclose(child);
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

}  // namespace
}  // namespace tkv
