// The table of KV element types: the one place that knows each type's block size, bytes,
// codebook and name. Everything else (codec, cache, shaders' specialization constants, CLI)
// consults it. See ../shared/spec/kv-formats.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tkv {

enum class KvType : uint32_t { f16 = 0, q8_0 = 1, turbo2 = 2, turbo3 = 3, turbo4 = 4 };
inline constexpr KvType kAllTypes[] = {KvType::f16, KvType::q8_0, KvType::turbo2, KvType::turbo3,
                                       KvType::turbo4};

struct TypeTraits {
  KvType type;
  std::string_view name;         // "f16", "q8_0", "turbo2", "turbo3", "turbo4"
  uint32_t block_elems;          // elements per full reference block: 1, 32, 128
  uint32_t block_bytes;          // bytes per full reference block: 2, 34, 34/50/68
  uint32_t index_bits;           // bits per element index (turbo: 2/3/4), q8_0: 8, f16: 16
  bool is_turbo;
  std::span<const float> codebook;   // ascending centroids (turbo only, else empty)
  std::span<const float> midpoints;  // ascending midpoints, codebook.size()-1 (turbo only)
};

const TypeTraits& traits(KvType type);
std::string_view type_name(KvType type);
// Parses a type name ("turbo3"); throws tkv::Error(invalid_argument) naming the unknown name and
// listing the valid ones.
KvType parse_type(std::string_view name);

// Head-dimension rules (throws invalid_argument for head_dim 0 or > 256).
void check_head_dim(uint32_t head_dim);
// Turbo group size for a head: 128 when head_dim % 128 == 0, else 64.
uint32_t turbo_group_size(uint32_t head_dim);
// Elements stored per head row after padding: turbo: next multiple of the group size (64 rule);
// q8_0: next multiple of 32; f16: head_dim.
uint32_t padded_head_dim(KvType type, uint32_t head_dim);
// Number of blocks (groups) per head row: turbo: padded/group, q8_0: padded/32, f16: head_dim.
uint32_t blocks_per_row(KvType type, uint32_t head_dim);
// Bytes of one block of this head's group size (turbo3 G=64 -> 26, G=128 -> 50).
uint32_t block_bytes(KvType type, uint32_t head_dim);
// Reference bytes of one head row (blocks_per_row * block_bytes).
size_t row_bytes(KvType type, uint32_t head_dim);

// Sign vectors of the rotation ("seed 42"): +1/-1, 128 entries; G=64 uses the first 64.
std::span<const float> rotation_signs1();
std::span<const float> rotation_signs2();

}  // namespace tkv
