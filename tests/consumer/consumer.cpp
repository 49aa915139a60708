// A C++17 program using the installed C++ API: one decode over a turbo4 cache, checked against
// attention computed here in double precision (turbo4's quantization error bounds the match),
// an error reported as turbokv::Error, and, given a path (argv[1]), a cache file round trip that
// decodes to the same output. Exit status 0 when all behave.
#include <turbokv/turbokv.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  const uint32_t kv_heads = 2, q_heads = 8, dim = 128, tokens = 48;
  try {
    std::mt19937 rng(3);
    std::normal_distribution<float> nd;
    std::vector<float> k(tokens * kv_heads * dim), v(k.size()), q(q_heads * dim), out(q.size());
    for (auto& x : k) x = nd(rng);
    for (auto& x : v) x = nd(rng);
    for (auto& x : q) x = nd(rng);

    auto engine = turbokv::Engine::create();
    turbokv::CacheConfig config;
    config.layers = 1;
    config.kv_heads = kv_heads;
    config.head_dim = dim;
    config.k_type = turbokv::KvType::turbo4;
    config.v_type = turbokv::KvType::turbo4;
    config.capacity_tokens = 64;
    config.max_sequences = 1;
    turbokv::Cache cache(engine, config);
    turbokv::Decoder decoder(cache, q_heads);
    const auto seq = cache.create_sequence();
    cache.append(seq, 0, tokens, {k.data()}, {v.data()});
    decoder.decode(0, seq, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4});

    double worst = 0.0;
    for (uint32_t h = 0; h < q_heads; ++h) {
      const uint32_t kv = h / (q_heads / kv_heads);
      std::vector<double> p(tokens);
      double max = -1e300, sum = 0.0, diff = 0.0, norm = 0.0;
      for (uint32_t t = 0; t < tokens; ++t) {
        double dot = 0.0;
        for (uint32_t d = 0; d < dim; ++d) dot += double(q[h * dim + d]) * k[(t * kv_heads + kv) * dim + d];
        p[t] = dot / std::sqrt(double(dim));
        max = std::max(max, p[t]);
      }
      for (auto& x : p) sum += x = std::exp(x - max);
      for (uint32_t d = 0; d < dim; ++d) {
        double o = 0.0;
        for (uint32_t t = 0; t < tokens; ++t) o += p[t] / sum * v[(t * kv_heads + kv) * dim + d];
        diff += (out[h * dim + d] - o) * (out[h * dim + d] - o);
        norm += o * o;
      }
      worst = std::max(worst, std::sqrt(diff / norm));
    }
    std::printf("consumer_cpp: turbokv %s on %s: worst head error %.3f (turbo4)\n",
                std::string(turbokv::version()).c_str(), engine.info().name.c_str(), worst);
    if (!(worst < 0.4)) return 1;  // turbo4's quantization error is about 0.15 per head on Gaussian data

    try {
      cache.append(seq, 3, 1, {k.data()}, {v.data()});
      std::fprintf(stderr, "consumer_cpp: appending to layer 3 of a one-layer cache did not throw\n");
      return 1;
    } catch (const turbokv::Error& e) {
      if (e.code() != turbokv::ErrorCode::invalid_argument) return 1;
    }

    if (argc > 1) {  // cache file round trip: save, drop the sequence, load it back, decode again
      const std::string path = argv[1];
      cache.save(path, seq);
      const auto info = turbokv::inspect_cache_file(path);
      cache.remove_sequence(seq);
      const auto loaded = cache.load(path);
      std::vector<float> again(out.size());
      decoder.decode(0, loaded.at(0), 1, {q.data(), q.size() * 4}, {again.data(), again.size() * 4});
      std::remove(path.c_str());
      if (info.lengths.size() != 1 || info.lengths[0][0] != tokens || loaded.size() != 1 || again != out) {
        std::fprintf(stderr, "consumer_cpp: the cache file round trip changed the sequence\n");
        return 1;
      }
      std::printf("consumer_cpp: cache file of %llu bytes saved and loaded back: the same output\n",
                  static_cast<unsigned long long>(info.file_bytes));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer_cpp: %s\n", e.what());
    return 1;
  }
}
