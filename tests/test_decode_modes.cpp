// Decode beyond the exactness grid: recording a whole step (appends + every layer's decode) into
// one command buffer, big ragged batches, the remaining head dims, and the quantization error of
// each type against exact attention over the original K/V.
#include <gtest/gtest.h>

#include "decode_fixture.hpp"
#include "kvcache/vk/command.hpp"

using namespace tkv;
using namespace tkv::testing;

TEST(DecodeRecording, AWholeStepIsOneSubmission) {
  // Three layers; one new token per layer is appended from device buffers and attended to, all
  // recorded into one command buffer; the result equals the reference of each layer.
  DecodeCase c;
  c.k_type = KvType::turbo3;
  c.v_type = KvType::q8_0;
  c.lengths = {50, 17};
  const uint32_t layers = 3;
  auto f = fill_cache(c, layers);
  auto& ctx = *shared_context();
  std::mt19937 rng(5);
  const uint32_t batch = uint32_t(c.lengths.size());
  const auto q = random_rows(rng, batch, c.kv_heads * c.ratio, c.head_dim, false);
  std::vector<std::vector<float>> new_k, new_v;
  vk::Buffer q_buf(ctx, q.size() * 4, vk::MemoryKind::device);
  vk::Buffer out_buf(ctx, layers * q.size() * 4, vk::MemoryKind::readback);
  vk::upload(ctx, q_buf, 0, std::as_bytes(std::span(q)));
  std::vector<vk::Buffer> rows;
  for (uint32_t b = 0; b < batch; ++b) {
    new_k.push_back(random_rows(rng, 1, c.kv_heads, c.head_dim, true));
    new_v.push_back(random_rows(rng, 1, c.kv_heads, c.head_dim, false));
    rows.emplace_back(ctx, new_k.back().size() * 8, vk::MemoryKind::device);
    vk::upload(ctx, rows.back(), 0, std::as_bytes(std::span(new_k.back())));
    vk::upload(ctx, rows.back(), new_k.back().size() * 4, std::as_bytes(std::span(new_v.back())));
  }
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  const uint64_t out_bytes = q.size() * 4;
  ctx.run([&](vk::Recorder& r) {
    for (uint32_t layer = 0; layer < layers; ++layer) {
      for (uint32_t b = 0; b < batch; ++b)
        f.cache->record_append(r, f.seqs[b], layer, 1, {rows[b].handle(), 0},
                               {rows[b].handle(), new_k[b].size() * 4});
      dec.record(r, layer, f.seqs, 1, {q_buf.handle(), 0, q_buf.size()},
                 {out_buf.handle(), layer * out_bytes, out_bytes});
    }
    r.host_barrier();
  });
  for (uint32_t layer = 0; layer < layers; ++layer) {
    for (uint32_t b = 0; b < batch; ++b) EXPECT_EQ(f.cache->length(f.seqs[b], layer), c.lengths[b] + 1);
    const float* out = static_cast<const float*>(out_buf.mapped()) + layer * q.size();
    const auto ref = reference_decode(*f.cache, layer, f.seqs, 1, c.kv_heads * c.ratio, q);
    EXPECT_LE(max_head_error(std::span(out, q.size()), ref, c.head_dim), 1e-4) << "layer " << layer;
  }
}

TEST(DecodeSizes, BatchOf256RaggedSequences) {
  DecodeCase c;
  c.k_type = KvType::turbo4;
  c.v_type = KvType::turbo2;
  c.head_dim = 64;
  c.kv_heads = 1;
  c.ratio = 2;
  c.m = 2;
  c.lengths.clear();
  for (uint32_t b = 0; b < 256; ++b) c.lengths.push_back(2 + (b * 37) % 61);
  auto f = fill_cache(c, 1, 64);
  const auto q = random_queries(c);
  const auto out = run_decode(f, c, q, {});
  const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q);
  EXPECT_LE(max_head_error(out, ref, c.head_dim), 1e-4);
}

TEST(DecodeSizes, HeadDims80And192) {
  for (uint32_t hd : {80u, 192u})
    for (KvType t : {KvType::f16, KvType::q8_0, KvType::turbo3}) {
      DecodeCase c;
      c.k_type = t;
      c.v_type = t == KvType::turbo3 ? KvType::f16 : KvType::turbo4;
      c.head_dim = hd;
      c.lengths = {700, 64};
      c.m = 3;
      auto f = fill_cache(c);
      const auto q = random_queries(c);
      const auto out = run_decode(f, c, q, {});
      const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q);
      EXPECT_LE(max_head_error(out, ref, hd), 1e-4) << "hd " << hd << " " << type_name(t);
    }
}

// Quantization error of each type: the decode output over the compressed cache against exact
// float64 attention over the original f32 rows. Inputs: K and V Gaussian, K with 5 outlier
// channels (x4), head dim 128, GQA 4, 1000 tokens, m 2; 4 seeds. With outliers x20 the scores'
// spread (std ~4) makes the softmax pick nearly one token, and turbo's K error flips the pick:
// that is the format's property, measured by turboprof check, not a kernel error. The bounds
// (on the mean and the worst head) are stated beside the format table in README.md.
TEST(DecodeQuantizationError, BoundedPerType) {
  struct Bound {
    KvType type;
    double mean, max;
  };
  // Measured on lavapipe (mean, worst): f16 0.0004, 0.0009; q8_0 0.0125, 0.0233; turbo4 0.155,
  // 0.243; turbo3 0.299, 0.408; turbo2 0.536, 0.694. Bounds ~1.3x above.
  const Bound bounds[] = {{KvType::f16, 1e-3, 3e-3},
                          {KvType::q8_0, 0.02, 0.04},
                          {KvType::turbo4, 0.2, 0.35},
                          {KvType::turbo3, 0.4, 0.55},
                          {KvType::turbo2, 0.7, 0.9}};
  for (const auto& b : bounds) {
    std::vector<double> errors;
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      DecodeCase c;
      c.k_type = c.v_type = b.type;
      c.lengths = {1000};
      c.m = 2;
      c.k_outlier = 4.0f;
      c.seed = seed;
      auto f = fill_cache(c);
      const auto q = random_queries(c);
      const auto out = run_decode(f, c, q, {});
      const auto exact = exact_attention(f.k, f.v, c.kv_heads, c.head_dim, c.m, c.kv_heads * c.ratio, q);
      const auto e = head_errors(out, exact, c.head_dim);
      errors.insert(errors.end(), e.begin(), e.end());
    }
    double mean = 0;
    for (double e : errors) mean += e / double(errors.size());
    const double worst = *std::max_element(errors.begin(), errors.end());
    std::printf("quantization error %-6s: mean %.4f, worst head %.4f (bounds %.4f, %.4f)\n",
                std::string(type_name(b.type)).c_str(), mean, worst, b.mean, b.max);
    EXPECT_LE(mean, b.mean) << type_name(b.type);
    EXPECT_LE(worst, b.max) << type_name(b.type);
  }
}
