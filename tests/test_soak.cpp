// Soak: many small append + decode steps on one cache, with sequences created, truncated and
// removed at random (seeded), checking that nothing drifts or accumulates:
//  - every step's decode output is finite; every `check_every` steps (and at the end) it equals
//    the float64 reference over the cache's exported, reference-dequantized rows (1e-4 per head),
//    and every sequence's length equals the test's own model of it;
//  - process memory (resident set, /proc/self/statm) after the warm-up grows by less than a bound;
//  - the live Vulkan objects (kvcache/vk/live_objects.hpp) stay at their post-warm-up counts
//    during the run, and return to the pre-test counts once the cache and decoder are gone.
//
// Environment: TKV_SOAK_STEPS (default 2000: the quick suite's short version; ctest label `soak`
// runs 200000), TKV_SOAK_SEED (default 1), TKV_SOAK_CHECK_EVERY (default 1000). docs/soak.md
// records a full run. The RSS bound is not asserted under the validation layer or ASan (below).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention/decoder.hpp"
#include "attention/reference.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/live_objects.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TKV_SOAK_ASAN 1  // ASan's quarantine and shadow memory make RSS meaningless
#else
#define TKV_SOAK_ASAN 0
#endif

namespace tkv {
namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Resident set size in bytes (second field of /proc/self/statm, in pages).
uint64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

constexpr uint32_t kKvHeads = 1, kQHeads = 2, kHeadDim = 64, kPage = 32, kMaxSequences = 4;
constexpr uint32_t kMaxLength = 320;  // a sequence beyond this is truncated (keeps steps cheap)

TEST(Soak, RandomAppendDecodeTruncateRemove) {
  const uint64_t steps = env_u64("TKV_SOAK_STEPS", 2000);
  const uint64_t seed = env_u64("TKV_SOAK_SEED", 1);
  const uint64_t check_every = std::max<uint64_t>(1, env_u64("TKV_SOAK_CHECK_EVERY", 1000));
  const uint64_t warmup = std::min<uint64_t>(steps / 2, std::max<uint64_t>(1000, steps / 20));
  // RSS after the warm-up may grow by at most this (allocator noise, not a leak: a leak of even
  // 64 bytes per step is 12.8 MB over 200000 steps).
  const uint64_t rss_bound = (8ull << 20) + steps * 16;

  auto ctx = testing::shared_context();
  const vk::LiveObjects objects_at_start = vk::live_objects();
  CacheConfig cfg;
  cfg.layers = 1;
  cfg.kv_heads = kKvHeads;
  cfg.head_dim = kHeadDim;
  cfg.k_type = KvType::turbo3;
  cfg.v_type = KvType::q8_0;
  cfg.page_size = kPage;
  cfg.capacity_tokens = 24 * kPage;  // tighter than 4 x kMaxLength: capacity errors happen
  cfg.max_sequences = kMaxSequences;
  auto cache = std::make_unique<KvCache>(ctx, cfg);
  auto decoder = std::make_unique<Decoder>(*cache, kQHeads);

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto rows = [&](uint32_t tokens, bool outliers) {
    std::vector<float> x(size_t(tokens) * kKvHeads * kHeadDim);
    for (size_t i = 0; i < x.size(); ++i) x[i] = normal(rng) * (outliers && i % kHeadDim == 5 ? 8.0f : 1.0f);
    return x;
  };
  auto pick = [&](const std::vector<SequenceId>& v) { return v[size_t(uniform(rng) * v.size()) % v.size()]; };

  std::map<SequenceId, uint32_t> model;  // the lengths the test expects
  uint64_t creates = 0, removes = 0, truncates = 0, capacity_errors = 0, tokens_appended = 0, checks = 0;
  uint64_t rss_after_warmup = 0, rss_max = 0;
  vk::LiveObjects objects_after_warmup;
  double worst_error = 0;
  const auto start = std::chrono::steady_clock::now();
  std::printf("[ soak ] %llu steps, seed %llu, check every %llu, warm-up %llu\n", (unsigned long long)steps,
              (unsigned long long)seed, (unsigned long long)check_every, (unsigned long long)warmup);

  for (uint64_t step = 1; step <= steps; ++step) {
    // Sequence events.
    std::vector<SequenceId> live;
    for (const auto& [s, len] : model) live.push_back(s);
    const double r = uniform(rng);
    if (live.empty() || (r < 0.01 && live.size() < kMaxSequences)) {
      const SequenceId s = cache->create_sequence();
      ASSERT_EQ(model.count(s), 0u);
      model[s] = 0;
      live.push_back(s);
      ++creates;
    } else if (r < 0.015 && live.size() > 1) {
      const SequenceId s = pick(live);
      cache->remove_sequence(s);
      model.erase(s);
      ASSERT_FALSE(cache->contains(s));
      live.erase(std::find(live.begin(), live.end(), s));
      ++removes;
    } else if (r < 0.03) {
      const SequenceId s = pick(live);
      const uint32_t to = uint32_t(uniform(rng) * (model[s] + 1)) % (model[s] + 1);
      cache->truncate(s, to);
      model[s] = to;
      ++truncates;
    }

    // Append: mostly one token, sometimes a short prefill.
    const SequenceId s = pick(live);
    const uint32_t n = uniform(rng) < 0.05 ? 2 + uint32_t(uniform(rng) * 47) : 1;
    if (model[s] + n > kMaxLength) {
      const uint32_t to = uint32_t(uniform(rng) * kMaxLength / 2);
      cache->truncate(s, to);
      model[s] = to;
      ++truncates;
    }
    const auto k = rows(n, true), v = rows(n, false);
    try {
      cache->append(s, 0, n, {k.data()}, {v.data()});
    } catch (const Error& e) {
      ASSERT_EQ(e.code(), ErrorCode::capacity) << e.what();
      ++capacity_errors;
      // Make room: halve the longest other sequence (or this one), then append again.
      SequenceId longest = s;
      for (const auto& [id, len] : model)
        if (id != s && len > model[longest]) longest = id;
      cache->truncate(longest, model[longest] / 2);
      model[longest] /= 2;
      ++truncates;
      cache->append(s, 0, n, {k.data()}, {v.data()});
    }
    model[s] += n;
    tokens_appended += n;

    // Decode every non-empty sequence, one query each.
    std::vector<SequenceId> batch;
    for (const auto& [id, len] : model)
      if (len > 0) batch.push_back(id);
    const auto q = rows(uint32_t(batch.size()) * (kQHeads / kKvHeads), false);
    DecodeOptions options;
    if (step % 7 == 0) options.window = 16 + uint32_t(uniform(rng) * 64);
    if (step % 11 == 0) options.softcap = 10.0f;
    std::vector<float> out(q.size(), std::nanf(""));
    decoder->decode(0, batch, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4}, options);
    for (float x : out) ASSERT_TRUE(std::isfinite(x)) << "step " << step;

    if (step % check_every == 0 || step == steps) {
      ++checks;
      for (const auto& [id, len] : model) ASSERT_EQ(cache->length(id), len) << "step " << step;
      ASSERT_EQ(cache->sequences().size(), model.size());
      const auto ref = reference_decode(*cache, 0, batch, 1, kQHeads, q, options);
      const double err = testing::max_head_error(out, ref, kHeadDim);
      worst_error = std::max(worst_error, err);
      ASSERT_LE(err, 1e-4) << "step " << step;
      const uint64_t rss = rss_bytes();
      rss_max = std::max(rss_max, rss);
      const vk::LiveObjects now = vk::live_objects();
      if (step >= warmup && rss_after_warmup == 0) {
        rss_after_warmup = rss;
        objects_after_warmup = now;
      }
      if (rss_after_warmup) {
        // Scratch buffers are replaced, never added: the counts stay; their sizes may still grow
        // to the largest batch and context seen (bounded by kMaxSequences and kMaxLength).
        EXPECT_EQ(now.buffers, objects_after_warmup.buffers) << "step " << step << ": " << now.str();
        EXPECT_EQ(now.memory_allocations, objects_after_warmup.memory_allocations) << now.str();
        EXPECT_EQ(now.command_buffers, objects_at_start.command_buffers) << now.str();
        EXPECT_EQ(now.pipelines, objects_after_warmup.pipelines) << now.str();
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("[ soak ] step %llu: %.1f s, rss %.1f MiB, %zu sequences, %s, max err %.2e\n",
                  (unsigned long long)step, secs, rss / 1048576.0, model.size(), now.str().c_str(), err);
      std::fflush(stdout);
    }
  }
  const uint64_t rss_end = rss_bytes();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "[ soak ] done: %llu steps in %.1f s (%.0f steps/s); %llu tokens appended, %llu creates, %llu removes, "
      "%llu truncates, %llu capacity errors, %llu reference checks (worst error %.2e); rss after warm-up %.1f MiB, "
      "at end %.1f MiB (%+lld KiB), max %.1f MiB\n",
      (unsigned long long)steps, secs, steps / secs, (unsigned long long)tokens_appended,
      (unsigned long long)creates, (unsigned long long)removes, (unsigned long long)truncates,
      (unsigned long long)capacity_errors, (unsigned long long)checks, worst_error, rss_after_warmup / 1048576.0,
      rss_end / 1048576.0, (long long)(rss_end - rss_after_warmup) / 1024, rss_max / 1048576.0);
  // The validation layer's synchronization validation (Debian 12's layer, 1.3.239) grows by
  // about 3.7 KB per submission on its own (measured: flat with it off, same code), and ASan's
  // quarantine holds freed memory: RSS is asserted only without either (the quick suite runs
  // this test once more with TKV_VALIDATION=0: tests/CMakeLists.txt).
  if (TKV_SOAK_ASAN || ctx->instance().validation_enabled()) {
    std::printf("[ soak ] RSS bound not asserted (%s)\n", TKV_SOAK_ASAN ? "AddressSanitizer" : "validation layer on");
  } else if (rss_after_warmup) {
    EXPECT_LE(rss_end, rss_after_warmup + rss_bound)
        << "resident memory grew by " << (rss_end - rss_after_warmup) << " bytes after the warm-up";
  }

  decoder.reset();
  cache.reset();
  const vk::LiveObjects objects_at_end = vk::live_objects();
  std::printf("[ soak ] live objects before the cache: %s; after it is destroyed: %s\n", objects_at_start.str().c_str(),
              objects_at_end.str().c_str());
  // Pipelines are kept by the context (built once per shape); everything else is gone.
  EXPECT_EQ(objects_at_end.buffers, objects_at_start.buffers);
  EXPECT_EQ(objects_at_end.memory_allocations, objects_at_start.memory_allocations);
  EXPECT_EQ(objects_at_end.memory_bytes, objects_at_start.memory_bytes);
  EXPECT_EQ(objects_at_end.command_buffers, objects_at_start.command_buffers);
  EXPECT_EQ(objects_at_end.query_pools, objects_at_start.query_pools);
}

}  // namespace
}  // namespace tkv
