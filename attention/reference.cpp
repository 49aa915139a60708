#include "attention/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kvcache/codec.hpp"
#include "kvcache/error.hpp"

namespace tkv {
namespace {

// Float64 signed Walsh-Hadamard: out = post * H(pre * x) / sqrt(G), group by group.
std::vector<double> signed_hadamard64(std::span<const double> x, uint32_t group, bool inverse) {
  const auto s1 = rotation_signs1(), s2 = rotation_signs2();
  std::vector<double> y(x.begin(), x.end());
  for (size_t base = 0; base < y.size(); base += group) {
    double* v = y.data() + base;
    for (uint32_t i = 0; i < group; ++i) v[i] *= inverse ? s2[i] : s1[i];
    for (uint32_t h = 1; h < group; h <<= 1)
      for (uint32_t i = 0; i < group; i += 2 * h)
        for (uint32_t j = i; j < i + h; ++j) {
          const double a = v[j], b = v[j + h];
          v[j] = a + b;
          v[j + h] = a - b;
        }
    for (uint32_t i = 0; i < group; ++i) v[i] *= (inverse ? s1[i] : s2[i]) / std::sqrt(double(group));
  }
  return y;
}

// Attention of one query row over rows [lo, hi] given a key/value accessor, in float64.
template <class KeyDot, class ValueAt>
void attend(uint32_t lo, uint32_t hi, double scale, double softcap, uint32_t dims, KeyDot key_dot, ValueAt value_at,
            double* out) {
  std::vector<double> s(hi - lo + 1);
  double mx = -std::numeric_limits<double>::infinity();
  for (uint32_t t = lo; t <= hi; ++t) {
    double v = key_dot(t) * scale;
    if (softcap > 0) v = softcap * std::tanh(v / softcap);
    s[t - lo] = v;
    mx = std::max(mx, v);
  }
  double l = 0;
  for (auto& v : s) l += (v = std::exp(v - mx));
  std::fill(out, out + dims, 0.0);
  for (uint32_t t = lo; t <= hi; ++t) {
    const double p = s[t - lo] / l;
    for (uint32_t d = 0; d < dims; ++d) out[d] += p * value_at(t, d);
  }
}

void visible_range(uint32_t len, uint32_t m, uint32_t i, uint32_t window, uint32_t& lo, uint32_t& hi) {
  hi = len - m + i;
  lo = (window > 0 && hi + 1 > window) ? hi + 1 - window : 0;
}

}  // namespace

std::vector<double> reference_decode(const KvCache& cache, uint32_t layer, std::span<const SequenceId> seqs,
                                     uint32_t m, uint32_t q_heads, std::span<const float> q,
                                     const DecodeOptions& options) {
  const auto& c = cache.config();
  const uint32_t hd = c.head_dim, ratio = q_heads / c.kv_heads;
  const bool k_turbo = traits(c.k_type).is_turbo, v_turbo = traits(c.v_type).is_turbo;
  const uint32_t k_dim = padded_head_dim(c.k_type, hd), v_dim = padded_head_dim(c.v_type, hd);
  const uint32_t group = turbo_group_size(hd);
  const double scale = options.scale > 0 ? options.scale : 1.0 / std::sqrt(double(hd));
  if (q.size() != size_t(seqs.size()) * m * q_heads * hd)
    fail(ErrorCode::invalid_argument, "reference_decode: q has the wrong size");
  std::vector<double> out(q.size());

  for (size_t b = 0; b < seqs.size(); ++b) {
    const uint32_t len = cache.length(seqs[b], layer);
    for (uint32_t kvh = 0; kvh < c.kv_heads; ++kvh) {
      // Reference-dequantized rows of this head (turbo: rotated basis).
      auto decode_side = [&](Side side, KvType type, uint32_t dims) {
        const auto bytes = cache.export_rows(seqs[b], layer, side, kvh, 0, len);
        const size_t rb = row_bytes(type, hd);
        std::vector<float> rows(size_t(len) * dims);
        for (uint32_t t = 0; t < len; ++t)
          dequantize_row(type, hd, std::span(bytes).subspan(t * rb, rb), std::span(rows).subspan(size_t(t) * dims, dims));
        return rows;
      };
      const auto krows = decode_side(Side::k, c.k_type, k_dim);
      const auto vrows = decode_side(Side::v, c.v_type, v_dim);
      for (uint32_t i = 0; i < m; ++i)
        for (uint32_t hh = 0; hh < ratio; ++hh) {
          const uint32_t qh = kvh * ratio + hh;
          const float* qrow = q.data() + ((b * m + i) * q_heads + qh) * hd;
          std::vector<double> qd(k_dim, 0.0);
          for (uint32_t d = 0; d < hd; ++d) qd[d] = qrow[d];
          if (k_turbo) qd = signed_hadamard64(qd, group, false);
          uint32_t lo, hi;
          visible_range(len, m, i, options.window, lo, hi);
          std::vector<double> o(v_dim);
          attend(
              lo, hi, scale, options.softcap, v_dim,
              [&](uint32_t t) {
                double dot = 0;
                for (uint32_t d = 0; d < k_dim; ++d) dot += qd[d] * krows[size_t(t) * k_dim + d];
                return dot;
              },
              [&](uint32_t t, uint32_t d) { return double(vrows[size_t(t) * v_dim + d]); }, o.data());
          if (v_turbo) o = signed_hadamard64(o, group, true);
          std::copy(o.begin(), o.begin() + hd, out.begin() + ((b * m + i) * q_heads + qh) * hd);
        }
    }
  }
  return out;
}

std::vector<double> exact_attention(std::span<const std::vector<float>> k, std::span<const std::vector<float>> v,
                                    uint32_t kv_heads, uint32_t hd, uint32_t m, uint32_t q_heads,
                                    std::span<const float> q, const DecodeOptions& options) {
  const uint32_t ratio = q_heads / kv_heads;
  const double scale = options.scale > 0 ? options.scale : 1.0 / std::sqrt(double(hd));
  std::vector<double> out(q.size());
  for (size_t b = 0; b < k.size(); ++b) {
    const uint32_t len = uint32_t(k[b].size() / (size_t(kv_heads) * hd));
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t qh = 0; qh < q_heads; ++qh) {
        const uint32_t kvh = qh / ratio;
        const float* qrow = q.data() + ((b * m + i) * q_heads + qh) * hd;
        uint32_t lo, hi;
        visible_range(len, m, i, options.window, lo, hi);
        attend(
            lo, hi, scale, options.softcap, hd,
            [&](uint32_t t) {
              double dot = 0;
              for (uint32_t d = 0; d < hd; ++d) dot += double(qrow[d]) * k[b][(size_t(t) * kv_heads + kvh) * hd + d];
              return dot;
            },
            [&](uint32_t t, uint32_t d) { return double(v[b][(size_t(t) * kv_heads + kvh) * hd + d]); },
            out.data() + ((b * m + i) * q_heads + qh) * hd);
      }
  }
  return out;
}

}  // namespace tkv
