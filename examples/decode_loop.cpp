// decode_loop: a small transformer-shaped decode loop whose attention runs on turbokv, through its
// public API (<turbokv/turbokv.hpp>) on Vulkan objects the program owns.
//
// A toy model with random weights (embedding, per layer RMSNorm, Q/K/V projections with RoPE,
// attention, output projection, a SiLU MLP; the LM head is the embedding) generates tokens
// greedily for a batch of sequences. Everything but attention runs on the CPU in float. The
// program plays an inference engine that already runs on Vulkan: it creates its own instance,
// device, queue, command buffer and buffers (host_vulkan.hpp), and turbokv adopts the device
// (turbokv::Engine::adopt). At every step and layer the new tokens' K and V rows go into the
// compressed cache (turbokv::Cache::record_append) and attention runs over it
// (turbokv::Decoder::record), both recorded into the program's command buffer from and into its
// own buffers; the program submits it and reads the output.
//
// The first --check-steps steps compare each layer's attention output with float64 attention over
// the same dequantized cache: a relative error above 1e-4 on any head fails the run (exit 1). They
// also print the error against exact attention over the unquantized rows (the cost of the
// compression, not checked). Then it prints tokens/s over the other steps. With TKV_VALIDATION=1
// the program's instance runs the Khronos validation layer, and any message fails the run.
//
//   decode_loop [--layers 2] [--batch 2] [--steps 16] [--check-steps 4] [--k-type turbo3] [--v-type turbo3]
//
// All turbokv calls are in `Attention` below: an engine's attention backend in ~60 lines.
#include <CLI/CLI.hpp>
#include <turbokv/turbokv.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host_vulkan.hpp"

// For the check of the first steps only: the library's float64 CPU reference
// (attention/reference.hpp) and the internal cache behind the public handle (attention/api/access.hpp) are
// internals of this source tree, not part of the installed API. An application outside the tree
// includes only <turbokv/turbokv.hpp>.
#include "attention/api/access.hpp"
#include "attention/reference.hpp"

namespace {

struct Dims {
  uint32_t vocab = 96;
  uint32_t model = 128;  // residual width
  uint32_t q_heads = 4;
  uint32_t kv_heads = 2;
  uint32_t head_dim = 64;
  uint32_t ffn = 256;
  uint32_t layers = 2;
};

// ---- the attention backend: turbokv ----

class Attention {
 public:
  Attention(example::HostVulkan& host, const Dims& d, uint32_t batch, uint32_t max_tokens, turbokv::KvType k_type,
            turbokv::KvType v_type)
      : host_(host), batch_(batch) {
    engine_ = turbokv::Engine::adopt(host.device_handles());  // the program's device and queue
    turbokv::CacheConfig config;
    config.layers = d.layers;
    config.kv_heads = d.kv_heads;
    config.head_dim = d.head_dim;
    config.k_type = k_type;
    config.v_type = v_type;
    config.page_size = 64;
    config.capacity_tokens = uint64_t(batch) * ((max_tokens + 63) / 64 * 64);
    config.max_sequences = batch;
    cache_ = turbokv::Cache(engine_, config);
    for (uint32_t b = 0; b < batch; ++b) seqs_.push_back(cache_.create_sequence());
    decoder_ = turbokv::Decoder(cache_, d.q_heads);
    // The program's host-visible buffers: new K and V rows [seq][kv_head][dim] (V from a 256-byte
    // aligned offset), queries and outputs [seq][q_head][dim], f32.
    kv_row_bytes_ = uint64_t(d.kv_heads) * d.head_dim * 4;
    v_at_ = (batch * kv_row_bytes_ + 255) / 256 * 256;
    q_bytes_ = uint64_t(batch) * d.q_heads * d.head_dim * 4;
    kv_ = host.buffer(v_at_ + batch * kv_row_bytes_);
    q_ = host.buffer(q_bytes_);
    out_ = host.buffer(q_bytes_);
  }

  const turbokv::Cache& cache() const { return cache_; }
  const std::vector<turbokv::SequenceId>& seqs() const { return seqs_; }
  std::string device() const { return engine_.info().name; }
  uint32_t position(uint32_t b, uint32_t layer) const { return cache_.length(seqs_[b], layer); }

  // One layer of one step: appends each sequence's new K/V row and attends with its query.
  // k, v: [seq][kv_head][dim]; q, out: [seq][q_head][dim].
  void step(uint32_t layer, const std::vector<float>& k, const std::vector<float>& v, const std::vector<float>& q,
            std::vector<float>& out) {
    auto* kv = static_cast<std::byte*>(kv_.mapped);  // host writes before the submission need no barrier
    std::memcpy(kv, k.data(), batch_ * kv_row_bytes_);
    std::memcpy(kv + v_at_, v.data(), batch_ * kv_row_bytes_);
    std::memcpy(q_.mapped, q.data(), q_bytes_);
    VkCommandBuffer cmd = host_.begin();
    for (uint32_t b = 0; b < batch_; ++b)
      cache_.record_append(cmd, seqs_[b], layer, 1, {kv_.buffer, b * kv_row_bytes_, kv_row_bytes_},
                           {kv_.buffer, v_at_ + b * kv_row_bytes_, kv_row_bytes_});
    decoder_.record(cmd, layer, seqs_, 1, {q_.buffer, 0, q_bytes_}, {out_.buffer, 0, q_bytes_});
    example::HostVulkan::host_read_barrier(cmd);  // the program's barrier: shader writes -> host reads
    host_.submit_and_wait(cmd);
    out.resize(q.size());
    std::memcpy(out.data(), out_.mapped, q_bytes_);
  }

 private:
  example::HostVulkan& host_;
  uint32_t batch_;
  turbokv::Engine engine_;
  turbokv::Cache cache_;
  turbokv::Decoder decoder_;
  std::vector<turbokv::SequenceId> seqs_;
  uint64_t kv_row_bytes_ = 0, v_at_ = 0, q_bytes_ = 0;
  example::HostBuffer kv_, q_, out_;
};

// ---- the rest of the model, on the CPU ----

struct Layer {
  std::vector<float> wq, wk, wv, wo, w1, w2;  // [in][out]
};

struct Model {
  Dims d;
  std::vector<float> embed;  // [vocab][model]
  std::vector<Layer> layers;

  Model(const Dims& dims, uint32_t seed) : d(dims) {
    std::mt19937 rng(seed);
    auto init = [&](uint32_t in, uint32_t out) {
      std::normal_distribution<float> n(0.0f, 1.0f / std::sqrt(float(in)));
      std::vector<float> w(size_t(in) * out);
      for (auto& x : w) x = n(rng);
      return w;
    };
    embed = init(d.model, d.vocab);  // (scale 1/sqrt(model): unit-norm rows on average)
    const uint32_t qd = d.q_heads * d.head_dim, kd = d.kv_heads * d.head_dim;
    for (uint32_t l = 0; l < d.layers; ++l)
      layers.push_back({init(d.model, qd), init(d.model, kd), init(d.model, kd), init(qd, d.model),
                        init(d.model, d.ffn), init(d.ffn, d.model)});
  }
};

// y[out] += x[in] * w[in][out]
void matvec_add(const float* x, const std::vector<float>& w, uint32_t in, uint32_t out, float* y) {
  for (uint32_t i = 0; i < in; ++i) {
    const float xi = x[i];
    const float* row = w.data() + size_t(i) * out;
    for (uint32_t o = 0; o < out; ++o) y[o] += xi * row[o];
  }
}

std::vector<float> rms_norm(const float* x, uint32_t n) {
  double ss = 0;
  for (uint32_t i = 0; i < n; ++i) ss += double(x[i]) * x[i];
  const float inv = float(1.0 / std::sqrt(ss / n + 1e-6));
  std::vector<float> y(x, x + n);
  for (auto& v : y) v *= inv;
  return y;
}

// Rotary position embedding of one head row (pairs (i, i + dim/2), base 10000), at `pos`.
void rope(float* row, uint32_t dim, uint32_t pos) {
  const uint32_t half = dim / 2;
  for (uint32_t i = 0; i < half; ++i) {
    const double theta = pos * std::pow(10000.0, -2.0 * i / dim);
    const float c = float(std::cos(theta)), s = float(std::sin(theta));
    const float a = row[i], b = row[i + half];
    row[i] = a * c - b * s;
    row[i + half] = a * s + b * c;
  }
}

double max_head_error(const std::vector<float>& out, const std::vector<double>& ref, uint32_t dim) {
  double worst = 0;
  for (size_t h = 0; h < ref.size() / dim; ++h) {
    double diff = 0, norm = 0;
    for (uint32_t i = 0; i < dim; ++i) {
      const double r = ref[h * dim + i];
      diff += (out[h * dim + i] - r) * (out[h * dim + i] - r);
      norm += r * r;
    }
    worst = std::max(worst, std::sqrt(diff / std::max(norm, 1e-60)));
  }
  return worst;
}


struct Options {
  Dims d;
  uint32_t batch = 2, steps = 16, check_steps = 4, seed = 1;
  std::string k_name = "turbo3", v_name = "turbo3";
};

// The decode loop; false when a checked step is off. The turbokv objects are gone on return.
bool decode_loop(example::HostVulkan& host, const Options& o) {
  const Dims& d = o.d;
  const uint32_t batch = o.batch, steps = o.steps, check_steps = o.check_steps;
  const turbokv::KvType k_type = turbokv::parse_kv_type(o.k_name), v_type = turbokv::parse_kv_type(o.v_name);
  const Model model(d, o.seed);
  Attention attn(host, d, batch, steps, k_type, v_type);
  std::printf("decode_loop on %s (the program's device, adopted): %u layers, model %u, %u query / %u KV heads of "
              "%u, K %s, V %s, batch %u\n",
              attn.device().c_str(), d.layers, d.model, d.q_heads, d.kv_heads, d.head_dim, o.k_name.c_str(),
              o.v_name.c_str(), batch);

  const uint32_t qd = d.q_heads * d.head_dim, kd = d.kv_heads * d.head_dim;
  std::vector<uint32_t> tokens(batch);
  for (uint32_t b = 0; b < batch; ++b) tokens[b] = (o.seed * 31 + b * 17) % d.vocab;
  // The unquantized K/V rows per layer and sequence, kept for the checked steps' exact error.
  std::vector<std::vector<std::vector<float>>> orig_k(d.layers, std::vector<std::vector<float>>(batch)),
      orig_v = orig_k;
  double worst_ref = 0, worst_exact = 0;
  bool ok = true;
  std::chrono::steady_clock::duration timed{};
  uint32_t timed_steps = 0;

  for (uint32_t step = 0; step < steps; ++step) {
    const bool checked = step < check_steps;
    const auto start = std::chrono::steady_clock::now();
    std::vector<float> x(size_t(batch) * d.model);
    for (uint32_t b = 0; b < batch; ++b)
      for (uint32_t i = 0; i < d.model; ++i) x[b * d.model + i] = model.embed[size_t(i) * d.vocab + tokens[b]];
    for (uint32_t l = 0; l < d.layers; ++l) {
      const Layer& w = model.layers[l];
      std::vector<float> q(size_t(batch) * qd, 0.0f), k(size_t(batch) * kd, 0.0f), v(size_t(batch) * kd, 0.0f);
      for (uint32_t b = 0; b < batch; ++b) {
        const auto h = rms_norm(&x[b * d.model], d.model);
        matvec_add(h.data(), w.wq, d.model, qd, &q[b * qd]);
        matvec_add(h.data(), w.wk, d.model, kd, &k[b * kd]);
        matvec_add(h.data(), w.wv, d.model, kd, &v[b * kd]);
        const uint32_t pos = attn.position(b, l);
        for (uint32_t hh = 0; hh < d.q_heads; ++hh) rope(&q[b * qd + hh * d.head_dim], d.head_dim, pos);
        for (uint32_t hh = 0; hh < d.kv_heads; ++hh) rope(&k[b * kd + hh * d.head_dim], d.head_dim, pos);
      }
      std::vector<float> out;
      attn.step(l, k, v, q, out);
      if (checked) {  // (internal reference: see the includes)
        const auto ref = tkv::reference_decode(turbokv::detail::Access::cache(attn.cache()), l, attn.seqs(), 1,
                                               d.q_heads, q);
        const double e = max_head_error(out, ref, d.head_dim);
        worst_ref = std::max(worst_ref, e);
        if (e > 1e-4) {
          std::fprintf(stderr, "step %u layer %u: attention differs from the float64 reference by %.3g\n", step, l, e);
          ok = false;
        }
        for (uint32_t b = 0; b < batch; ++b) {
          orig_k[l][b].insert(orig_k[l][b].end(), k.begin() + b * kd, k.begin() + (b + 1) * kd);
          orig_v[l][b].insert(orig_v[l][b].end(), v.begin() + b * kd, v.begin() + (b + 1) * kd);
        }
        const auto exact = tkv::exact_attention(orig_k[l], orig_v[l], d.kv_heads, d.head_dim, 1, d.q_heads, q);
        worst_exact = std::max(worst_exact, max_head_error(out, exact, d.head_dim));
      }
      for (uint32_t b = 0; b < batch; ++b) {
        float* xb = &x[b * d.model];
        matvec_add(&out[b * qd], w.wo, qd, d.model, xb);
        const auto h = rms_norm(xb, d.model);
        std::vector<float> f(d.ffn, 0.0f);
        matvec_add(h.data(), w.w1, d.model, d.ffn, f.data());
        for (auto& u : f) u = u / (1.0f + std::exp(-u));  // SiLU
        matvec_add(f.data(), w.w2, d.ffn, d.model, xb);
      }
    }
    for (uint32_t b = 0; b < batch; ++b) {
      const auto h = rms_norm(&x[b * d.model], d.model);
      std::vector<float> logits(d.vocab, 0.0f);
      matvec_add(h.data(), model.embed, d.model, d.vocab, logits.data());
      tokens[b] = uint32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    }
    if (!checked) timed += std::chrono::steady_clock::now() - start, ++timed_steps;
    if (step < 8 || step + 1 == steps) {
      std::printf("step %3u:", step);
      for (uint32_t t : tokens) std::printf(" %3u", t);
      std::printf("%s\n", checked ? "  (checked)" : "");
    }
  }

  if (check_steps > 0)
    std::printf("first %u steps: attention vs float64 over the cache: worst head %.2g (bound 1e-4); vs exact "
                "unquantized attention: worst head %.3f\n",
                std::min(check_steps, steps), worst_ref, worst_exact);
  if (timed_steps > 0) {
    const double s = std::chrono::duration<double>(timed).count();
    std::printf("%u steps x %u sequences in %.3f s: %.1f tokens/s (%.2f ms per step, CPU matmuls included)\n",
                timed_steps, batch, s, timed_steps * batch / s, 1e3 * s / timed_steps);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"decode_loop: a toy transformer decoding greedily with turbokv attention"};
  app.add_option("--layers", o.d.layers, "transformer layers")->check(CLI::Range(1, 64));
  app.add_option("--batch", o.batch, "sequences decoded together")->check(CLI::Range(1, 64));
  app.add_option("--steps", o.steps, "tokens generated per sequence")->check(CLI::Range(1, 100000));
  app.add_option("--check-steps", o.check_steps, "first steps checked against the float64 reference");
  app.add_option("--k-type", o.k_name, "K cache type (f16, q8_0, turbo2, turbo3, turbo4)");
  app.add_option("--v-type", o.v_name, "V cache type");
  app.add_option("--seed", o.seed, "weights and first tokens");
  CLI11_PARSE(app, argc, argv);

  try {
    example::HostVulkan host;
    bool ok = decode_loop(host, o);
    host.destroy();  // after turbokv's objects; the layer reports anything left on the device
    if (const uint64_t n = host.messages(); n > 0) {
      std::fprintf(stderr, "%llu Vulkan validation messages\n", static_cast<unsigned long long>(n));
      ok = false;
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {  // turbokv::Error, or the program's own Vulkan failures
    std::fprintf(stderr, "decode_loop: %s\n", e.what());
    return 1;
  }
}
