// Float64 CPU references for decode attention, independent of the GPU kernels:
//  - reference_decode: attention over the cache's reference-dequantized contents (exported bytes,
//    decoded by the CPU codec), with Q rotated and the output un-rotated in float64. The GPU must
//    match it to float rounding (kernel exactness).
//  - exact_attention: attention over the original, unquantized K/V rows (quantization error).
// Both use the semantics of attention/decoder.hpp (causal among the m new tokens, soft-cap,
// sliding window) and return [batch][m][q_heads][head_dim].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention/decoder.hpp"
#include "kvcache/kv_cache.hpp"

namespace tkv {

std::vector<double> reference_decode(const KvCache& cache, uint32_t layer, std::span<const SequenceId> seqs,
                                     uint32_t m, uint32_t q_heads, std::span<const float> q,
                                     const DecodeOptions& options = {});

// k and v: per sequence, [position][kv_head][head_dim] floats.
std::vector<double> exact_attention(std::span<const std::vector<float>> k, std::span<const std::vector<float>> v,
                                    uint32_t kv_heads, uint32_t head_dim, uint32_t m, uint32_t q_heads,
                                    std::span<const float> q, const DecodeOptions& options = {});

}  // namespace tkv
