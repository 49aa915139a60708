// Dequant variants (how stored bits become values inside the decode loop) and profile modes
// (what the dequant reads at all), as kv-formats.md defines them. Both are specialization
// constants of the decode kernel: one pipeline carries one implementation.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kvcache/types.hpp"

namespace tkv {

enum class Variant : uint32_t {
  lut8 = 0,    // index -> centroid table, times the norm
  mag4 = 1,    // magnitude table + XOR sign trick (4 for turbo3, 8 for turbo4, 2 for turbo2)
  alu = 2,     // no table: a select tree on the index bits
  reglut = 3,  // per row, centroid x norm for every entry precomputed in registers, then indexed
  qlut = 4,    // K: per query, T[d][c] = q_d * C[c] in shared memory; q.k = norm * sum_d T[d][idx_d]
  smem = 5,    // the codebook in shared memory, indexed by the loaded indices
  tc = 6,      // tensor cores: products as f16 hi/lo cooperative-matrix MMAs (shaders/decode_tc.comp)
  automatic = 255,  // the dispatch policy's choice
};
inline constexpr Variant kAllVariants[] = {Variant::lut8, Variant::mag4, Variant::alu,
                                           Variant::reglut, Variant::qlut, Variant::smem, Variant::tc};

// Modes 1-4 exist for profiling only: their outputs are wrong on purpose.
enum class ProfileMode : uint32_t {
  full = 0,       // mode 0: full dequant (the real cost; the only meaningful output)
  zero = 1,       // mode 1: returns zeros, reads nothing (ceiling: free dequant, no KV reads)
  norm_only = 2,  // mode 2: reads the norm / scale only (cost of touching each block)
  no_sign = 3,    // mode 3: norm + index bits, skips sign / high bits (turbo only)
  constant = 4,   // mode 4: reads every byte, one constant centroid x norm (traffic, no lookups)
};
inline constexpr ProfileMode kAllModes[] = {ProfileMode::full, ProfileMode::zero, ProfileMode::norm_only,
                                            ProfileMode::no_sign, ProfileMode::constant};

std::string_view variant_name(Variant v);
std::string_view mode_name(ProfileMode m);
std::string_view mode_isolates(ProfileMode m);  // "the real cost", "the ceiling", ...
// Throw tkv::Error(invalid_argument) naming the unknown text and listing the known names.
Variant parse_variant(std::string_view name);
ProfileMode parse_mode(std::string_view text);  // "0".."4" or a name

// Whether a (type, mode) pair exists: q8_0 and f16 offer modes 0, 1, 2 and 4.
bool mode_supported(KvType type, ProfileMode mode);
// Variants differ only for turbo types; f16 and q8_0 have one path each.
bool variant_applies(KvType type);

}  // namespace tkv
