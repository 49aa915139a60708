// The device layout of the cache: how one (layer, page, KV head) region holds its tokens.
//
// f16 and q8_0 keep rows. The reference blocks of kv-formats.md interleave a 2-byte scale with
// the value bits, which leaves rows unaligned; on the device each row keeps only its bits, and the
// scales of the page's tokens sit together after the rows:
//
//   region = [ bits row of token 0 .. P-1 ][ scales of token 0 .. P-1 ]
//   bits row = q8_0: the 32 int8 of each block; f16: the halves, zero-padded to a multiple of 8
//   scales   = one f16 per block (q8_0 d); none for f16
//
// Turbo types are stored as tiles of 16 tokens in the order in which the tensor cores' fragments
// consume them (shaders/decode_tc.comp), so that every lane of a subgroup loads the bits of
// exactly its fragment elements, coalesced, and turns each pair of them into an f16 pair with one
// table read (docs/tile-layout.md has the derivation and the numbers behind it):
//
//   region = [ tile 0 ][ tile 1 ] ... (P / 16 tiles)
//   tile   = [ bits: lane_words planes of 32 words ][ norms: groups x 8 words ]
//
// * Each element is stored as a magnitude index mi (mag_bits = index bits - 1) and a "negative"
//   bit: value = (negative ? -1 : 1) x C[2^mag_bits + mi] x norm, the positive half of the
//   codebook. (Reference index i: negative = i < 2^mag_bits, mi = negative ? 2^mag_bits-1-i : i - 2^mag_bits.)
// * Elements go in pairs. Lane L = 4g + c (g = L / 4, c = L % 4) of a 32-lane subgroup owns pairs
//   j = 4 blk + r (blk: 16-dim block, r = 0..3), which are the elements of the m16n8k16 A
//   fragment registers it holds:
//     K (A = 16 tokens x 16 dims):  token g + 8 (r >> 1),       dims 16 blk + 8 (r & 1) + 2c + e
//     V (A = V^T, 16 dims x 16 tokens): dim 16 blk + g + 8 (r >> 1), tokens 2c + 8 (r & 1) + e
//   with e = 0, 1 the pair's first and second element. A K pair is two dims of one token; a V
//   pair is one dim of two tokens.
// * Lane L's words hold its pairs' fields, pair j at bits [F j, F j + F) of that little-endian bit
//   stream, F = 2 x index bits: the two magnitudes (element e at mag_bits e), then the two
//   negative bits (element e at 2 mag_bits + e), so that a field indexes a table of signed value
//   pairs directly (turbo3's 6-bit fields can straddle two words; turbo2's 4 and turbo4's 8 never
//   do). Word w of lane L sits at word w x 32 + L of the tile, so each of a subgroup's loads is
//   128 contiguous bytes.
// * Norms: group grp's norms of tokens t and t + 8 (t < 8) share word grp x 8 + t (t in the low half).
//
// A token's bits are spread over the words of 4 (K) or 8 (V) lanes, and a V pair holds two
// tokens: an append writes its bits into words that other tokens share (shaders/quantize.comp
// clears and sets them with atomics). The tile holds exactly the bits and norms of its 16 rows:
// the same bytes per token as rows (RowLayout::device_row_bytes).
#pragma once

#include <cstdint>

#include "kvcache/types.hpp"

namespace tkv {

enum class Side : uint32_t { k = 0, v = 1 };

struct RowLayout {
  KvType type;
  uint32_t head_dim;        // as configured
  uint32_t stored_dim;      // elements per stored row (padded)
  uint32_t groups;          // scale entries per row (0 for f16)
  uint32_t group_elems;     // elements per group (turbo 64/128, q8_0 32, f16 stored_dim)
  uint32_t bits_row_bytes;  // bytes of one row's bits
  uint32_t scale_row_bytes; // bytes of one row's scales (2 * groups)

  static RowLayout make(KvType type, uint32_t head_dim);
  // Bytes one token occupies on the device: the reference row bytes, except that f16 rows are
  // padded to 8 elements and turbo4 does not store its always-zero reserved half-word
  // (66 B per 128-group instead of 68 B).
  uint32_t device_row_bytes() const { return bits_row_bytes + scale_row_bytes; }
};

// The turbo tile of a row layout (the fields above).
struct TileLayout {
  static constexpr uint32_t kTokens = 16;
  uint32_t mag_bits = 0;    // 1, 2, 3 (turbo2, turbo3, turbo4)
  uint32_t blocks = 0;      // 16-dim blocks per row
  uint32_t groups = 0;      // norms per token
  uint32_t field_bits() const { return 2 * (mag_bits + 1); }
  uint32_t lane_words() const { return blocks * (mag_bits + 1) / 4; }  // 4 x blocks fields of F bits
  uint32_t bits_bytes() const { return 128 * lane_words(); }
  uint32_t bytes() const { return bits_bytes() + 32 * groups; }

  static TileLayout make(const RowLayout& row);  // turbo types only
};

// Where element (token t of a tile, dim d) of a turbo row sits: lane, pair and element of the pair.
struct TileSlot {
  uint32_t lane, pair, elem;
};
TileSlot tile_slot(Side side, uint32_t t, uint32_t d);

struct PageLayout {
  RowLayout row;
  uint32_t page_size;       // tokens per page (a multiple of 16)
  uint32_t kv_heads;

  bool tiled() const { return traits(row.type).is_turbo; }
  uint64_t region_bytes() const { return uint64_t(page_size) * row.device_row_bytes(); }
  uint64_t page_bytes() const { return region_bytes() * kv_heads; }
  uint64_t region_offset(uint32_t page, uint32_t head) const { return page * page_bytes() + head * region_bytes(); }
  // Rows (f16, q8_0):
  uint64_t bits_offset(uint32_t page, uint32_t head, uint32_t slot) const {
    return region_offset(page, head) + uint64_t(slot) * row.bits_row_bytes;
  }
  uint64_t scales_offset(uint32_t page, uint32_t head, uint32_t slot) const {
    return region_offset(page, head) + uint64_t(page_size) * row.bits_row_bytes + uint64_t(slot) * row.scale_row_bytes;
  }
  // Tiles (turbo): the tile holding `slot` (a tile is 16 x device_row_bytes).
  uint64_t tile_offset(uint32_t page, uint32_t head, uint32_t slot) const {
    return region_offset(page, head) + uint64_t(slot / TileLayout::kTokens) * TileLayout::kTokens * row.device_row_bytes();
  }
};

// Rows: converts between one reference row (row_bytes(type, head_dim) bytes) and its device form.
void reference_to_device(const RowLayout& layout, const uint8_t* reference, uint8_t* bits, uint8_t* scales);
void device_to_reference(const RowLayout& layout, const uint8_t* bits, const uint8_t* scales, uint8_t* reference);

// Tiles: writes token t's reference row into a tile image (TileLayout::bytes), leaving the other
// tokens' bits as they are; reads token t's reference row back out of one.
void reference_to_tile(const RowLayout& layout, Side side, const uint8_t* reference, uint32_t t, uint8_t* tile);
void tile_to_reference(const RowLayout& layout, Side side, const uint8_t* tile, uint32_t t, uint8_t* reference);

}  // namespace tkv
