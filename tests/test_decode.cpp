// Decode exactness: the GPU output equals float64 attention over the reference-dequantized
// cache (relative error per head <= 1e-4), over a sampled grid of shapes in the default suite
// (label quick) and the whole grid under label "full" (TKV_FULL_GRID=1).
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/command.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

constexpr double kExactBound = 1e-4;

std::string describe(const DecodeCase& c) {
  std::ostringstream o;
  o << type_name(c.k_type) << "/" << type_name(c.v_type) << " hd " << c.head_dim << " gqa " << c.ratio << " m " << c.m
    << " ctx";
  for (auto l : c.lengths) o << " " << l;
  o << " softcap " << c.options.softcap << " window " << c.options.window << " splits " << c.options.splits;
  return o.str();
}

double run_case(const DecodeCase& c) {
  auto f = fill_cache(c);
  const auto q = random_queries(c);
  const auto out = run_decode(f, c, q, c.options);
  const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q, c.options);
  return max_head_error(out, ref, c.head_dim);
}

// The grid of the issue: head dim x GQA x context x M x ragged batch x soft-cap/window, for
// every (K, V) type pair. `sample` keeps every n-th point (deterministically varied).
std::vector<DecodeCase> grid(uint32_t keep_every) {
  const uint32_t dims[] = {64, 96, 128, 256};
  const uint32_t ratios[] = {1, 4, 7};
  const uint32_t contexts[] = {1, 2, 33, 128, 1000, 4097};
  const uint32_t ms[] = {1, 3, 8};
  std::vector<DecodeCase> cases;
  uint64_t index = 0;
  for (KvType kt : kAllTypes)
    for (KvType vt : kAllTypes)
      for (uint32_t hd : dims)
        for (uint32_t ratio : ratios)
          for (uint32_t ctx : contexts)
            for (uint32_t m : ms) {
              if (m > ctx) continue;
              if (index++ % keep_every != 0) continue;
              DecodeCase c;
              c.k_type = kt;
              c.v_type = vt;
              c.head_dim = hd;
              c.ratio = ratio;
              c.m = m;
              c.seed = uint32_t(index);
              // Ragged batches on every other point: a second, shorter sequence.
              c.lengths = {ctx};
              if (index % 2 == 0 && ctx > m + 1) c.lengths.push_back(std::max(m, ctx / 3));
              if (index % 3 == 0) c.options.softcap = 30.0f;
              if (index % 5 == 0) c.options.window = std::max<uint32_t>(m, ctx / 2 + 1);
              cases.push_back(c);
            }
  return cases;
}

// Two sequences of several splits each (1000 and 333 tokens), two queries each.
DecodeCase two_sequences(KvType t) {
  DecodeCase c;
  c.k_type = c.v_type = t;
  c.lengths = {1000, 333};
  c.m = 2;
  return c;
}

}  // namespace

TEST(DecodeExactness, SampledGrid) {
  const bool full = std::getenv("TKV_FULL_GRID") != nullptr;
  const auto cases = grid(full ? 1 : 97);
  for (const auto& c : cases) {
    const double err = run_case(c);
    EXPECT_LE(err, kExactBound) << describe(c);
  }
  std::printf("%zu grid points checked\n", cases.size());
}

TEST(DecodeExactness, EveryTypePairAtOneShape) {
  for (KvType kt : kAllTypes)
    for (KvType vt : kAllTypes) {
      DecodeCase c;
      c.k_type = kt;
      c.v_type = vt;
      c.lengths = {300, 77};
      c.m = 3;
      c.options.softcap = 20.0f;
      EXPECT_LE(run_case(c), kExactBound) << describe(c);
    }
}

// A batch's (length, page table offset) pairs travel in the push constants where they fit (10
// sequences under Vulkan's 128 bytes, 26 under 256), else in a buffer the call updates: batches on
// both sides of each bound, several splits in the longest sequences.
TEST(DecodeExactness, BatchesInlineAndInABuffer) {
  for (uint32_t batch : {10u, 11u, 26u, 27u}) {
    DecodeCase c;
    c.lengths.clear();
    for (uint32_t b = 0; b < batch; ++b) c.lengths.push_back(1 + (b * 37) % 150);
    c.kv_heads = 1;
    c.seed = batch;
    c.options.splits = 3;
    EXPECT_LE(run_case(c), kExactBound) << describe(c);
  }
}

TEST(DecodeExactness, SplitInvariance) {
  for (KvType t : {KvType::turbo3, KvType::q8_0, KvType::f16}) {
    const DecodeCase c = two_sequences(t);
    auto f = fill_cache(c);
    const auto q = random_queries(c);
    DecodeOptions o;
    o.splits = 1;
    const auto base = run_decode(f, c, q, o);
    std::vector<double> base64(base.begin(), base.end());
    for (uint32_t splits : {2u, 7u, 1000u /* clamped to the maximum */}) {
      o.splits = splits;
      const auto out = run_decode(f, c, q, o);
      EXPECT_LE(max_head_error(out, base64, c.head_dim), rounding_bound(planned_variant(f, c, o)))
          << type_name(t) << " splits " << splits;
    }
  }
}

// The splits of a call are merged by the last workgroup of each group to finish, counted in a
// buffer of the decoder's that every call leaves at zero (shaders/split_merge.glsl). Calls
// recorded back to back in one command buffer, with other split counts and another batch between
// them, and the same recording submitted again, all give the reference's output.
TEST(DecodeExactness, SplitMergeCountersSurviveRepeatedCalls) {
  for (KvType t : {KvType::turbo3, KvType::f16}) {
    const DecodeCase c = two_sequences(t);
    auto f = fill_cache(c);
    const auto q = random_queries(c);
    const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q, c.options);
    auto& ctx = f.cache->context();
    Decoder dec(*f.cache, c.kv_heads * c.ratio);
    const uint64_t bytes = q.size() * 4;
    vk::Buffer qd(ctx, bytes, vk::MemoryKind::device);
    vk::upload(ctx, qd, 0, std::as_bytes(std::span(q)));
    const uint32_t splits[] = {7, 3, 1000 /* clamped */, 7};
    const uint32_t calls = std::size(splits);
    vk::Buffer out(ctx, bytes * calls + 256 * calls, vk::MemoryKind::device);
    auto at = [&](uint32_t i) { return i * ((bytes + 255) / 256 * 256); };
    const SequenceId first[] = {f.seqs[0]};
    for (int submission = 0; submission < 2; ++submission) {
      ctx.run([&](vk::Recorder& r) {
        r.fill(out, 0, VK_WHOLE_SIZE, 0x7fc00000u);  // NaN: a call that writes nothing fails
        r.barrier();
        for (uint32_t i = 0; i < calls; ++i) {
          DecodeOptions o;
          o.splits = splits[i];
          dec.record(r, 0, f.seqs, c.m, {qd.handle(), 0, bytes}, {out.handle(), at(i), bytes}, o);
          // Another shape in between: the first sequence alone (its own groups and counters).
          dec.record(r, 0, first, c.m, {qd.handle(), 0, bytes / 2}, {out.handle(), at(i), bytes / 2}, o);
        }
      });
      for (uint32_t i = 0; i < calls; ++i) {
        std::vector<float> got(q.size());
        vk::download(ctx, out, at(i), std::as_writable_bytes(std::span(got)));
        EXPECT_LE(max_head_error(got, ref, c.head_dim), kExactBound)
            << type_name(t) << " submission " << submission << " call " << i << " splits " << splits[i];
      }
    }
  }
}

// The scalar kernel is specialized on the host (kvcache/vk/specialize.hpp); where that fails, or
// with TKV_SPECIALIZE=0, the driver specializes the embedded module. Both paths are exact and
// agree.
TEST(DecodeExactness, DriverAndHostSpecializationAgree) {
  if (const char* s = std::getenv("TKV_SPECIALIZE"); s && std::string(s) == "0")
    GTEST_SKIP() << "host specialization is off (TKV_SPECIALIZE=0)";
  struct EnvGuard {  // the decoders made inside leave specialization to the driver
    EnvGuard() { ::setenv("TKV_SPECIALIZE", "0", 1); }
    ~EnvGuard() { ::unsetenv("TKV_SPECIALIZE"); }
  };
  for (auto [kt, vt] : {std::pair{KvType::turbo3, KvType::turbo3}, std::pair{KvType::q8_0, KvType::turbo4}}) {
    DecodeCase c;
    c.k_type = kt;
    c.v_type = vt;
    c.lengths = {300, 77};
    c.m = 2;
    auto host = fill_cache(c);
    const auto q = random_queries(c);
    const auto out_host = run_decode(host, c, q, c.options);
    std::vector<float> out_driver;
    {
      const EnvGuard env;
      vk::ContextOptions o;
      o.persist_pipeline_cache = false;
      auto driver = fill_cache(c, 1, 32, vk::Context::create(o));  // a new context: no pipeline shared
      out_driver = run_decode(driver, c, q, c.options);
    }
    const auto ref = reference_decode(*host.cache, 0, host.seqs, c.m, c.kv_heads * c.ratio, q, c.options);
    EXPECT_LE(max_head_error(out_host, ref, c.head_dim), kExactBound) << describe(c);
    EXPECT_LE(max_head_error(out_driver, ref, c.head_dim), kExactBound) << describe(c);
    EXPECT_LE(max_head_error(out_driver, std::vector<double>(out_host.begin(), out_host.end()), c.head_dim), 1e-5)
        << describe(c);
  }
}

TEST(DecodeExactness, SmallPagesWithNarrowTeams) {
  // 16-token pages with head dim 64 and GQA 2: a step of the default workgroup (32 teams of 4
  // lanes) would straddle pages, so the plan shrinks the workgroup; the output stays exact.
  for (KvType t : {KvType::turbo3, KvType::f16}) {
    DecodeCase c;
    c.k_type = c.v_type = t;
    c.head_dim = 64;
    c.ratio = 2;
    c.lengths = {200, 45};
    auto f = fill_cache(c, 1, 16);
    const auto q = random_queries(c);
    const auto out = run_decode(f, c, q, c.options);
    const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q, c.options);
    EXPECT_LE(max_head_error(out, ref, c.head_dim), kExactBound) << type_name(t);
  }
}

TEST(DecodeExactness, F16QueriesAndOutputs) {
  DecodeCase c;
  c.lengths = {200};
  c.m = 2;
  auto f = fill_cache(c);
  const auto q = random_queries(c);
  std::vector<uint16_t> q16(q.size());
  std::vector<float> q_rounded(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    q16[i] = float_to_half(q[i]);
    q_rounded[i] = half_to_float(q16[i]);
  }
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  std::vector<uint16_t> out16(q.size());
  dec.decode(0, f.seqs, c.m, {q16.data(), q16.size() * 2, TensorFormat::f16},
             {out16.data(), out16.size() * 2, TensorFormat::f16});
  std::vector<float> out(q.size());
  for (size_t i = 0; i < q.size(); ++i) out[i] = half_to_float(out16[i]);
  const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q_rounded);
  EXPECT_LE(max_head_error(out, ref, c.head_dim), 1e-3);  // f16 output rounding: 2^-11 relative
}

TEST(DecodeErrors, BadInputGetsClearErrors) {
  DecodeCase c;
  c.lengths = {20};
  auto f = fill_cache(c);
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  std::vector<float> q(dec.elements(1, 1)), out(q.size());
  auto expect_error = [&](auto&& call, ErrorCode code, const char* needle) {
    try {
      call();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const HostTensor qt{q.data(), q.size() * 4};
  const HostOutput ot{out.data(), out.size() * 4};
  expect_error([&] { dec.decode(0, f.seqs, 9, qt, ot); }, ErrorCode::invalid_argument, "m = 9");
  expect_error([&] { dec.decode(0, f.seqs, 0, qt, ot); }, ErrorCode::invalid_argument, "m = 0");
  expect_error([&] { dec.decode(0, f.seqs, 1, {q.data(), 12}, ot); }, ErrorCode::invalid_argument, "q has 12 bytes");
  expect_error([&] { dec.decode(0, f.seqs, 1, qt, {out.data(), 8}); }, ErrorCode::invalid_argument, "output has 8");
  std::vector<SequenceId> unknown = {f.seqs[0] + 5};
  expect_error([&] { dec.decode(0, unknown, 1, qt, ot); }, ErrorCode::not_found, "does not exist");
  expect_error([&] { dec.decode(3, f.seqs, 1, qt, ot); }, ErrorCode::invalid_argument, "layer 3");
  expect_error([&] { Decoder bad(*f.cache, 3); }, ErrorCode::invalid_argument, "3 query heads");
  expect_error([&] { Decoder bad(*f.cache, 2 * 17); }, ErrorCode::invalid_argument, "ratio");
  // M above the sequence length.
  DecodeCase shorter = c;
  shorter.lengths = {2};
  auto g = fill_cache(shorter);
  Decoder dec2(*g.cache, c.kv_heads * c.ratio);
  std::vector<float> q3(dec2.elements(1, 3)), out3(q3.size());
  expect_error([&] { dec2.decode(0, g.seqs, 3, {q3.data(), q3.size() * 4}, {out3.data(), out3.size() * 4}); },
               ErrorCode::invalid_argument, "has only 2 tokens");
  // The cache still works afterwards.
  EXPECT_NO_THROW(dec.decode(0, f.seqs, 1, qt, ot));
}

// The same exactness at real depths, for GPUs (TKV_LARGE_CONTEXTS=1, or a type's name to test
// only it; too slow for lavapipe): llama8b's shape at 32K and 128K for every type, batch 1, M 1 and 8.
TEST(DecodeExactness, LargeContexts) {
  const char* only = std::getenv("TKV_LARGE_CONTEXTS");
  if (!only) GTEST_SKIP() << "set TKV_LARGE_CONTEXTS=1 or =<type> (GPU only)";
  const bool every_type = std::string(only) == "1";
  const KvType picked = every_type ? KvType::f16 : parse_type(only);
  for (uint32_t ctx : {32768u, 131072u})
    for (KvType t : kAllTypes)
      for (uint32_t m : {1u, 8u}) {
        if (!every_type && t != picked) continue;
        DecodeCase c;
        c.k_type = c.v_type = t;
        c.kv_heads = 8;
        c.ratio = 4;
        c.lengths = {ctx};
        c.m = m;
        const double err = run_case(c);
        std::printf("large: %-6s ctx %6u m %u: max relative error per head %.3g\n", std::string(type_name(t)).c_str(),
                    ctx, m, err);
        EXPECT_LE(err, kExactBound) << describe(c);
      }
}
