// turboprof check: accuracy of decode over each compressed type, on synthetic K/V shaped like a
// real model's, against exact float64 attention over the original rows; and the kernel's
// exactness against the float64 reference over the reference-dequantized cache. Exits 1 when any
// figure exceeds its bound.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "attention/decoder.hpp"
#include "attention/reference.hpp"
#include "kvcache/codec.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/context.hpp"
#include "profile/commands.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/table.hpp"
#include "profile/workloads.hpp"

namespace tkv::prof {
namespace {

using nlohmann::json;

// The kernel must equal the float64 reference over the same dequantized cache to float rounding
// (the bound of tests/test_decode.cpp), whatever the type.
constexpr double kExactnessBound = 1e-4;

// Quantization bounds per type, for the synthetic data below. A K/V pair takes the looser of its
// two types' relative-error and cosine bounds (the errors of K and V add, and a same-type pair
// carries both), and its K type's KL bound (only K changes the attention weights).
//   rel: ||out - exact|| / ||exact|| per query head (mean over heads, worst head)
//   cos: cosine similarity of out and exact per query head (mean, lowest head)
//   kl:  KL(exact weights || weights over the dequantized K) per query head (mean, worst head)
// Set from runs on lavapipe over the four workloads at depths 256, 1K and 8K (seeds 1-4), and at
// 1K with batch 4 and m 4 (seeds 1-12 for the harshest shapes): the means about 1.4x the highest
// seen, the worst heads about 2x. The worst head is heavy-tailed: where a head's softmax is sharp
// (a large outlier channel), K's error can move the winning token, and that head's output jumps
// (turbo2's worst rel err ranged 0.79..12.8 over those runs). So the worst-head bounds catch gross
// failures (a broken head, NaN), and the means and the exactness bound catch regressions.
// Highest seen (rel mean, rel worst, KL mean, KL max; lowest cos mean, cos min):
//   f16     0.0013 0.0035  9.1e-7 7.5e-6  0.999999 0.99999
//   q8_0    0.038  0.185   9.2e-4 9.9e-3  0.99928  0.983
//   turbo4  0.324  1.44    0.052  0.43    0.951    0.528
//   turbo3  0.651  2.74    0.188  1.15    0.847    0.110
//   turbo2  1.17   12.8    0.547  3.54    0.616   -0.152
struct QuantBound {
  KvType type;
  double rel_mean, rel_worst;
  double cos_mean, cos_min;
  double kl_mean, kl_max;
};
constexpr QuantBound kBounds[] = {
    {KvType::f16, 2e-3, 7e-3, 0.99999, 0.9999, 2e-6, 2e-5},
    {KvType::q8_0, 0.055, 0.37, 0.9985, 0.96, 1.5e-3, 0.02},
    {KvType::turbo4, 0.45, 2.9, 0.92, 0.0, 0.08, 0.9},
    {KvType::turbo3, 0.9, 5.5, 0.77, -0.6, 0.28, 2.3},
    // turbo2's lowest head can point anywhere (cos -0.15 seen): no bound on cos min.
    {KvType::turbo2, 1.6, 25, 0.42, -1.0, 0.8, 7},
};

const QuantBound& type_bound(KvType t) {
  for (const auto& b : kBounds)
    if (b.type == t) return b;
  fail(ErrorCode::invalid_argument, "check: no bound for type " + std::string(type_name(t)));
}

QuantBound pair_bound(KvType k, KvType v) {
  const auto &a = type_bound(k), &b = type_bound(v);
  return {k,
          std::max(a.rel_mean, b.rel_mean),
          std::max(a.rel_worst, b.rel_worst),
          std::min(a.cos_mean, b.cos_mean),
          std::min(a.cos_min, b.cos_min),
          a.kl_mean,
          a.kl_max};
}

// Synthetic data with the structure of a real model's K and V (what makes quantization hard):
//  - K: per-channel scales spread log-uniformly over [0.5, 2], four outlier channels per head
//    scaled x5..x10, then a RoPE rotation by position (NeoX pairing: channel i with i + d/2,
//    frequency 10000^(-2i/d)), which moves the outliers' energy around their pair over positions;
//  - V: Gaussian with per-channel scales log-uniform over [0.5, 2];
//  - Q: isotropic Gaussian (a rotation by position would leave its distribution unchanged).
// Scales and outlier channels are properties of the model: the same for every sequence.
constexpr uint32_t kOutlierChannels = 4;
constexpr float kOutlierMin = 5, kOutlierMax = 10;
constexpr float kScaleMin = 0.5f, kScaleMax = 2.0f;
constexpr double kRopeBase = 10000.0;

struct Synthetic {
  std::vector<std::vector<float>> k, v;  // per sequence: [position][kv_head][head_dim]
  std::vector<float> q;                  // [sequence][m][q_head][head_dim]
};

Synthetic make_synthetic(const Shape& s, const std::vector<uint32_t>& lengths, uint32_t m, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> log_scale(std::log(kScaleMin), std::log(kScaleMax));
  std::uniform_real_distribution<float> outlier(kOutlierMin, kOutlierMax);
  const uint32_t hd = s.head_dim, half = hd / 2;
  std::vector<float> k_scale(size_t(s.kv_heads) * hd), v_scale(k_scale.size());
  for (auto& x : k_scale) x = std::exp(log_scale(rng));
  for (auto& x : v_scale) x = std::exp(log_scale(rng));
  for (uint32_t h = 0; h < s.kv_heads; ++h) {
    std::vector<uint32_t> channels(hd);
    for (uint32_t d = 0; d < hd; ++d) channels[d] = d;
    std::shuffle(channels.begin(), channels.end(), rng);
    for (uint32_t i = 0; i < std::min(kOutlierChannels, hd); ++i) k_scale[h * hd + channels[i]] *= outlier(rng);
  }
  std::vector<double> freq(half);
  for (uint32_t i = 0; i < half; ++i) freq[i] = std::pow(kRopeBase, -2.0 * i / hd);

  Synthetic out;
  for (uint32_t len : lengths) {
    std::vector<float> k(size_t(len) * s.kv_heads * hd), v(k.size());
    for (uint32_t t = 0; t < len; ++t)
      for (uint32_t h = 0; h < s.kv_heads; ++h) {
        float* kr = k.data() + (size_t(t) * s.kv_heads + h) * hd;
        float* vr = v.data() + (size_t(t) * s.kv_heads + h) * hd;
        for (uint32_t d = 0; d < hd; ++d) {
          kr[d] = normal(rng) * k_scale[h * hd + d];
          vr[d] = normal(rng) * v_scale[h * hd + d];
        }
        for (uint32_t i = 0; i < half; ++i) {
          const double a = t * freq[i], c = std::cos(a), sn = std::sin(a);
          const double x = kr[i], y = kr[i + half];
          kr[i] = float(x * c - y * sn);
          kr[i + half] = float(x * sn + y * c);
        }
      }
    out.k.push_back(std::move(k));
    out.v.push_back(std::move(v));
  }
  out.q.resize(lengths.size() * m * s.q_heads * hd);
  for (auto& x : out.q) x = normal(rng);
  return out;
}

// K rows of one (sequence, KV head) as the cache holds them, dequantized by the CPU codec and
// returned to the original basis: [position][head_dim].
std::vector<float> dequantized_k(const KvCache& cache, SequenceId seq, uint32_t head, uint32_t len) {
  const auto& c = cache.config();
  const uint32_t hd = c.head_dim, padded = padded_head_dim(c.k_type, hd);
  const size_t rb = row_bytes(c.k_type, hd);
  const auto bytes = cache.export_rows(seq, 0, Side::k, head, 0, len);
  std::vector<float> rows(size_t(len) * hd), row(padded), plain(padded);
  for (uint32_t t = 0; t < len; ++t) {
    dequantize_row(c.k_type, hd, std::span(bytes).subspan(t * rb, rb), row);
    if (traits(c.k_type).is_turbo) inverse_rotate_row(hd, row, plain);
    std::copy_n(traits(c.k_type).is_turbo ? plain.begin() : row.begin(), hd, rows.begin() + size_t(t) * hd);
  }
  return rows;
}

// KL(p || p') per (sequence, query, head) of the attention weights over the original K (p) and
// over the dequantized K (p'), with decoder.hpp's causal rule among the m new tokens.
std::vector<double> attention_kl(const KvCache& cache, const std::vector<SequenceId>& seqs, const Synthetic& data,
                                 const Shape& s, uint32_t m) {
  const uint32_t hd = s.head_dim, ratio = s.q_heads / s.kv_heads;
  const double scale = 1.0 / std::sqrt(double(hd));
  std::vector<double> kl(seqs.size() * m * s.q_heads);
  std::vector<double> a, b;
  for (size_t sq = 0; sq < seqs.size(); ++sq) {
    const uint32_t len = cache.length(seqs[sq], 0);
    for (uint32_t h = 0; h < s.kv_heads; ++h) {
      const auto deq = dequantized_k(cache, seqs[sq], h, len);
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t r = 0; r < ratio; ++r) {
          const uint32_t qh = h * ratio + r;
          const float* q = data.q.data() + ((sq * m + i) * s.q_heads + qh) * hd;
          const uint32_t visible = len - m + i + 1;
          a.assign(visible, 0.0);
          b.assign(visible, 0.0);
          for (uint32_t t = 0; t < visible; ++t) {
            const float* ko = data.k[sq].data() + (size_t(t) * s.kv_heads + h) * hd;
            const float* kd = deq.data() + size_t(t) * hd;
            double x = 0, y = 0;
            for (uint32_t d = 0; d < hd; ++d) x += double(q[d]) * ko[d], y += double(q[d]) * kd[d];
            a[t] = x * scale;
            b[t] = y * scale;
          }
          // Log-softmax of both, then sum p (log p - log p').
          auto log_norm = [](const std::vector<double>& z) {
            const double mx = *std::max_element(z.begin(), z.end());
            double sum = 0;
            for (double v : z) sum += std::exp(v - mx);
            return mx + std::log(sum);
          };
          const double la = log_norm(a), lb = log_norm(b);
          double d = 0;
          for (uint32_t t = 0; t < visible; ++t) d += std::exp(a[t] - la) * ((a[t] - la) - (b[t] - lb));
          kl[(sq * m + i) * s.q_heads + qh] = std::max(d, 0.0);
        }
    }
  }
  return kl;
}

struct Stats {
  double mean = 0, worst = 0, lowest = std::numeric_limits<double>::infinity();
};
Stats stats(const std::vector<double>& x) {
  Stats st;
  st.worst = -std::numeric_limits<double>::infinity();
  for (double v : x) {
    st.mean += v / double(x.size());
    st.worst = std::max(st.worst, v);
    st.lowest = std::min(st.lowest, v);
  }
  return st;
}

// Per head: relative error and cosine similarity of out against a float64 target. A non-finite
// output counts as the worst possible figure, never as a pass.
void compare(std::span<const float> out, std::span<const double> target, uint32_t hd, std::vector<double>& rel,
             std::vector<double>& cos) {
  rel.clear();
  cos.clear();
  for (size_t h = 0; h < target.size() / hd; ++h) {
    double diff = 0, nt = 0, no = 0, dot = 0;
    for (uint32_t d = 0; d < hd; ++d) {
      const double t = target[h * hd + d], o = out[h * hd + d];
      diff += (o - t) * (o - t);
      nt += t * t;
      no += o * o;
      dot += o * t;
    }
    const double e = std::sqrt(diff) / std::max(std::sqrt(nt), 1e-300);
    const double c = dot / std::max(std::sqrt(nt * no), 1e-300);
    rel.push_back(std::isfinite(e) ? e : 1e300);
    cos.push_back(std::isfinite(c) ? c : -1.0);
  }
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

json bound_json(const QuantBound& b) {
  return {{"rel_err_mean", b.rel_mean}, {"rel_err_worst", b.rel_worst}, {"cos_mean", b.cos_mean},
          {"cos_min", b.cos_min},       {"kl_mean", b.kl_mean},         {"kl_max", b.kl_max}};
}

// The CPU references are float64 loops over every (query head, position): this keeps their cost
// and the synthetic rows' memory (two floats per element) within a minute and a few GiB.
constexpr uint64_t kMaxCheckTokens = 256 * 1024;

}  // namespace

int run_check(const CommonOptions& o) {
  const Shape shape = resolve_shape(o);
  const auto pairs = parse_type_pairs(o.types);
  const auto variants = parse_variants(o.variants);
  OutputFiles files(o.out_dir);
  if (!o.ctx.empty()) parse_depths(o.ctx);

  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  const auto depths = resolve_depths(o, caps, "1k,8k", "1k,8k");
  for (uint32_t depth : depths) {
    uint64_t tokens = 0;
    for (uint32_t l : ragged_lengths(o.batch, depth, o.m)) tokens += l;
    if (tokens > kMaxCheckTokens)
      fail(ErrorCode::invalid_argument, "check: depth " + depth_label(depth) + " x batch " + std::to_string(o.batch) +
                                            " is " + std::to_string(tokens) + " tokens; check computes float64 "
                                            "references on the CPU and takes at most " +
                                            std::to_string(kMaxCheckTokens));
    for (const auto& p : pairs) check_point(caps, shape, p, depth, o.batch, o.m, variants);
  }

  Table table({"K/V", "variant", "ctx", "rel err mean", "worst", "cos mean", "cos min", "KL mean", "KL max",
               "exactness", "result"});
  json rows = json::array();
  bool all_pass = true;
  std::vector<double> rel, cos, exact_rel, exact_cos;
  for (uint32_t depth : depths) {
    const auto lengths = ragged_lengths(o.batch, depth, o.m);
    progress("check at " + depth_label(depth) + ": synthetic K/V and exact attention");
    const Synthetic data = make_synthetic(shape, lengths, o.m, o.seed);
    const auto exact = exact_attention(data.k, data.v, shape.kv_heads, shape.head_dim, o.m, shape.q_heads, data.q);
    for (const auto& p : pairs) {
      progress("check at " + depth_label(depth) + ": " + p.label() + ": filling the cache");
      CacheConfig cfg;
      cfg.layers = 1;
      cfg.kv_heads = shape.kv_heads;
      cfg.head_dim = shape.head_dim;
      cfg.k_type = p.k;
      cfg.v_type = p.v;
      cfg.page_size = 64;
      cfg.max_sequences = o.batch;
      cfg.capacity_tokens = 0;
      for (uint32_t l : lengths) cfg.capacity_tokens += (l + 63) / 64 * 64;
      KvCache cache(ctx, cfg);
      std::vector<SequenceId> seqs;
      for (size_t b = 0; b < lengths.size(); ++b) {
        seqs.push_back(cache.create_sequence());
        cache.append(seqs.back(), 0, lengths[b], {data.k[b].data()}, {data.v[b].data()});
      }
      progress("check at " + depth_label(depth) + ": " + p.label() + ": float64 references");
      const auto ref = reference_decode(cache, 0, seqs, o.m, shape.q_heads, data.q);
      const Stats kl = stats(attention_kl(cache, seqs, data, shape, o.m));
      const QuantBound bound = pair_bound(p.k, p.v);
      Decoder decoder(cache, shape.q_heads);
      for (Variant variant : point_variants(caps, shape, p, variants, o.m)) {
        DecodeOptions options;
        options.variant = variant;
        const auto plan = decoder.plan(0, seqs, o.m, options);
        const std::string vname = shown_variant(p, plan.variant);
        progress("check at " + depth_label(depth) + ": " + p.label() + " " + vname + ": decode");
        std::vector<float> out(data.q.size(), std::nanf(""));
        decoder.decode(0, seqs, o.m, {data.q.data(), data.q.size() * 4}, {out.data(), out.size() * 4}, options);
        compare(out, exact, shape.head_dim, rel, cos);
        compare(out, ref, shape.head_dim, exact_rel, exact_cos);
        const Stats r = stats(rel), c = stats(cos), x = stats(exact_rel);
        std::vector<std::string> failures;
        auto over = [&](const char* what, double v, double b, bool upper) {
          if (upper ? !(v <= b) : !(v >= b))
            failures.push_back(std::string(what) + " " + sci(v) + (upper ? " > " : " < ") + sci(b));
        };
        over("rel err mean", r.mean, bound.rel_mean, true);
        over("rel err worst", r.worst, bound.rel_worst, true);
        over("cos mean", c.mean, bound.cos_mean, false);
        over("cos min", c.lowest, bound.cos_min, false);
        over("KL mean", kl.mean, bound.kl_mean, true);
        over("KL max", kl.worst, bound.kl_max, true);
        over("exactness", x.worst, kExactnessBound, true);
        all_pass = all_pass && failures.empty();
        std::string result = "ok";
        for (size_t i = 0; i < failures.size(); ++i) result = (i ? result + "; " : "FAIL: ") + failures[i];
        table.add({p.label(), vname, depth_label(depth), fixed(r.mean, 4), fixed(r.worst, 4), fixed(c.mean, 5),
                   fixed(c.lowest, 5), sci(kl.mean), sci(kl.worst), sci(x.worst), result});
        rows.push_back({{"type", p.label()},
                        {"k_type", type_name(p.k)},
                        {"v_type", type_name(p.v)},
                        {"variant", vname},
                        {"variant_requested", variant_name(variant)},
                        {"ctx", depth},
                        {"rel_err_mean", r.mean},
                        {"rel_err_worst", r.worst},
                        {"cos_mean", c.mean},
                        {"cos_min", c.lowest},
                        {"kl_mean", kl.mean},
                        {"kl_max", kl.worst},
                        {"exactness", x.worst},
                        {"bounds", bound_json(bound)},
                        {"exactness_bound", kExactnessBound},
                        {"failures", failures},
                        {"pass", failures.empty()}});
      }
    }
  }
  progress_done();

  json bounds = json::object();
  for (const auto& b : kBounds) bounds[std::string(type_name(b.type))] = bound_json(b);
  json doc = run_json(caps, shape, o);
  doc.update(json{{"seed", o.seed},
              {"synthetic",
               {{"k_channel_scales", {kScaleMin, kScaleMax}},
                {"k_outlier_channels", kOutlierChannels},
                {"k_outlier_scale", {kOutlierMin, kOutlierMax}},
                {"k_rope_base", kRopeBase},
                {"v_channel_scales", {kScaleMin, kScaleMax}},
                {"q", "isotropic Gaussian"}}},
              {"exactness_bound", kExactnessBound},
              {"bounds", bounds},
              {"rows", rows},
              {"pass", all_pass}});
  std::ostringstream csv;
  table.write_csv(csv);
  files.add("check.csv", csv.str());
  files.add("check.json", doc.dump(2) + "\n");
  files.commit();

  if (o.json) {
    std::cout << doc.dump(2) << "\n";
  } else {
    std::cout << run_header(caps, shape, o) << ", seed " << o.seed << "\n"
              << "synthetic K: channel scales log-uniform " << kScaleMin << ".." << kScaleMax << ", "
              << kOutlierChannels << " outlier channels x" << kOutlierMin << ".." << kOutlierMax
              << ", RoPE by position; V: channel scales " << kScaleMin << ".." << kScaleMax << "; Q: Gaussian\n\n";
    table.print(std::cout);
    std::cout << "\nrel err, cos: decode output against exact float64 attention over the original K/V, per query "
                 "head;\nKL: attention weights over the dequantized K against the original's; exactness: decode "
                 "output\nagainst the float64 reference over the same dequantized cache (worst head).\n\nbounds "
                 "(a K/V pair takes the looser of its types' rel err and cos bounds, its K type's KL bounds):\n";
    Table bt({"type", "rel err mean", "worst", "cos mean", "cos min", "KL mean", "KL max"});
    for (const auto& b : kBounds)
      bt.add({std::string(type_name(b.type)), "<= " + fixed(b.rel_mean, 4), "<= " + fixed(b.rel_worst, 4),
              ">= " + fixed(b.cos_mean, 5), b.cos_min > -1 ? ">= " + fixed(b.cos_min, 5) : "none", "<= " + sci(b.kl_mean),
              "<= " + sci(b.kl_max)});
    bt.print(std::cout);
    std::cout << "exactness <= " << sci(kExactnessBound) << " for every type\n"
              << (all_pass ? "check passed\n" : "check FAILED: a figure exceeds its bound\n");
  }
  return all_pass ? 0 : 1;
}

}  // namespace tkv::prof
