// The device layout of the cache: how one (layer, page, KV head) region holds its tokens' rows.
// The reference blocks of kv-formats.md interleave a 2-byte norm with the index bits, which
// leaves rows unaligned (50 B for turbo3). On the device each row keeps only its index / value
// bits, and the norms (or q8_0 scales) of the page's tokens sit together after the rows:
//
//   region(layer, page, head) = [ bits row of token 0 .. P-1 ][ scales of token 0 .. P-1 ]
//   bits row  = for each group g: the group's reference block minus its norm (and minus turbo4's
//               reserved half-word): turbo3 = qs then signs; turbo2 = qs; turbo4 = qs;
//               q8_0 = the 32 int8 of each block; f16 = the halves, zero-padded to a multiple of 8
//   scales    = one f16 per group (turbo norm, q8_0 d); none for f16
//
// With a page size that is a multiple of 16 every region, row array and scale array starts on a
// 16-byte boundary. shaders/layout.glsl computes the same offsets from the same inputs.
#pragma once

#include <cstdint>

#include "kvcache/types.hpp"

namespace tkv {

struct RowLayout {
  KvType type;
  uint32_t head_dim;        // as configured
  uint32_t stored_dim;      // elements per stored row (padded)
  uint32_t groups;          // scale entries per row (0 for f16)
  uint32_t group_elems;     // elements per group (turbo 64/128, q8_0 32, f16 stored_dim)
  uint32_t bits_row_bytes;  // bytes of one row's bits
  uint32_t scale_row_bytes; // bytes of one row's scales (2 * groups)

  static RowLayout make(KvType type, uint32_t head_dim);
  // Bytes one token's row occupies on the device: the reference row bytes, except that f16 rows
  // are padded to 8 elements and turbo4 does not store its always-zero reserved half-word
  // (66 B per 128-group instead of 68 B).
  uint32_t device_row_bytes() const { return bits_row_bytes + scale_row_bytes; }
};

struct PageLayout {
  RowLayout row;
  uint32_t page_size;       // tokens per page
  uint32_t kv_heads;

  uint64_t region_bytes() const { return uint64_t(page_size) * row.device_row_bytes(); }
  uint64_t page_bytes() const { return region_bytes() * kv_heads; }
  uint64_t region_offset(uint32_t page, uint32_t head) const { return page * page_bytes() + head * region_bytes(); }
  uint64_t bits_offset(uint32_t page, uint32_t head, uint32_t slot) const {
    return region_offset(page, head) + uint64_t(slot) * row.bits_row_bytes;
  }
  uint64_t scales_offset(uint32_t page, uint32_t head, uint32_t slot) const {
    return region_offset(page, head) + uint64_t(page_size) * row.bits_row_bytes + uint64_t(slot) * row.scale_row_bytes;
  }
};

// Converts between one reference row (row_bytes(type, head_dim) bytes) and its device form.
void reference_to_device(const RowLayout& layout, const uint8_t* reference, uint8_t* bits, uint8_t* scales);
void device_to_reference(const RowLayout& layout, const uint8_t* bits, const uint8_t* scales, uint8_t* reference);

}  // namespace tkv
