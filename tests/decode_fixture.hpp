// Shared set-up for the decode suites: a cache filled with random K/V rows (a few outlier
// channels in K, never zeros or constants), random queries, and the relative-error measure.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "attention/decoder.hpp"
#include "attention/reference.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/context.hpp"

namespace tkv::testing {

inline std::shared_ptr<vk::Context> shared_context() {
  static std::shared_ptr<vk::Context> ctx = vk::Context::create();
  return ctx;
}

struct DecodeCase {
  KvType k_type = KvType::turbo3;
  KvType v_type = KvType::turbo3;
  uint32_t head_dim = 128;
  uint32_t kv_heads = 2;
  uint32_t ratio = 4;
  std::vector<uint32_t> lengths = {128};  // one per sequence of the batch
  uint32_t m = 1;
  DecodeOptions options;
  uint32_t seed = 1;
  float k_outlier = 20.0f;  // scale of K's outlier channels
};

// Rows [token][kv_head][head_dim] with N(0,1) values, K's outlier channels x20.
inline std::vector<float> random_rows(std::mt19937& rng, uint32_t tokens, uint32_t heads, uint32_t dim, bool outliers,
                                      float outlier_scale = 20.0f) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> rows(size_t(tokens) * heads * dim);
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t d = uint32_t(i % dim);
    rows[i] = n(rng) * ((outliers && (d % 37 == 5 || d == dim - 1)) ? outlier_scale : 1.0f);
  }
  return rows;
}

struct FilledCache {
  std::unique_ptr<KvCache> cache;
  std::vector<SequenceId> seqs;
  std::vector<std::vector<float>> k, v;  // originals per sequence
};

inline FilledCache fill_cache(const DecodeCase& c, uint32_t layers = 1, uint32_t page_size = 32,
                              std::shared_ptr<vk::Context> ctx = shared_context()) {
  std::mt19937 rng(c.seed);
  uint64_t total = 0;
  for (uint32_t len : c.lengths) total += (len + page_size - 1) / page_size * page_size;
  CacheConfig cfg;
  cfg.layers = layers;
  cfg.kv_heads = c.kv_heads;
  cfg.head_dim = c.head_dim;
  cfg.k_type = c.k_type;
  cfg.v_type = c.v_type;
  cfg.page_size = page_size;
  cfg.capacity_tokens = total + page_size;
  cfg.max_sequences = uint32_t(c.lengths.size()) + 1;
  FilledCache f;
  f.cache = std::make_unique<KvCache>(std::move(ctx), cfg);
  for (uint32_t len : c.lengths) {
    const SequenceId s = f.cache->create_sequence();
    f.seqs.push_back(s);
    f.k.push_back(random_rows(rng, len, c.kv_heads, c.head_dim, true, c.k_outlier));
    f.v.push_back(random_rows(rng, len, c.kv_heads, c.head_dim, false));
    for (uint32_t layer = 0; layer < layers; ++layer)
      f.cache->append(s, layer, len, {f.k.back().data()}, {f.v.back().data()});
  }
  return f;
}

// The case's shape as the planner sees it (context left to the plan's minimum).
inline DecodeShape decode_shape(const DecodeCase& c, uint32_t page_size = 32) {
  return {c.k_type, c.v_type, c.head_dim, c.kv_heads * c.ratio, c.kv_heads, uint32_t(c.lengths.size()), c.m, 0, page_size};
}

inline std::vector<float> random_queries(const DecodeCase& c) {
  std::mt19937 rng(c.seed * 7919 + 3);
  return random_rows(rng, uint32_t(c.lengths.size()) * c.m, c.kv_heads * c.ratio, c.head_dim, false);
}

// Per-head relative errors ||out - ref|| / ||ref|| over every (sequence, query, head).
inline std::vector<double> head_errors(std::span<const float> out, std::span<const double> ref, uint32_t head_dim) {
  std::vector<double> errors;
  for (size_t h = 0; h < ref.size() / head_dim; ++h) {
    double diff = 0, norm = 0;
    for (uint32_t d = 0; d < head_dim; ++d) {
      const double r = ref[h * head_dim + d], o = out[h * head_dim + d];
      diff += (o - r) * (o - r);
      norm += r * r;
    }
    const double e = std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
    errors.push_back(std::isfinite(e) ? e : 1e30);
  }
  return errors;
}

inline double max_head_error(std::span<const float> out, std::span<const double> ref, uint32_t head_dim) {
  const auto e = head_errors(out, ref, head_dim);
  return e.empty() ? 0.0 : *std::max_element(e.begin(), e.end());
}

inline std::vector<float> run_decode(FilledCache& f, const DecodeCase& c, std::span<const float> q,
                                     const DecodeOptions& options, uint32_t layer = 0) {
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  std::vector<float> out(q.size(), std::nanf(""));
  dec.decode(layer, f.seqs, c.m, {q.data(), q.size() * 4}, {out.data(), out.size() * 4}, options);
  return out;
}

// Two decodes of one cache that differ only in their order of rounding (split counts, where the
// merge runs) agree to 1e-5 per head; the tensor-core kernel rounds each probability to f16 for its
// MMAs, where the split's running maximum moves that rounding, so its results agree to 2e-5 (the
// bound test_decode_tc holds tc's exact operand pairs to against the reference).
inline double rounding_bound(Variant variant) { return variant == Variant::tc ? 2e-5 : 1e-5; }

// The variant the call would run (its plan: the dispatch policy, then the planner).
inline Variant planned_variant(FilledCache& f, const DecodeCase& c, const DecodeOptions& options) {
  return Decoder(*f.cache, c.kv_heads * c.ratio).plan(0, f.seqs, c.m, options).variant;
}

}  // namespace tkv::testing
