#include "kvcache/layout.hpp"

#include <cstring>
#include <vector>

#include "kvcache/codec.hpp"
#include "kvcache/error.hpp"

namespace tkv {

RowLayout RowLayout::make(KvType type, uint32_t head_dim) {
  check_head_dim(head_dim);
  RowLayout l{};
  l.type = type;
  l.head_dim = head_dim;
  const auto& t = traits(type);
  if (type == KvType::f16) {
    l.stored_dim = (head_dim + 7) / 8 * 8;
    l.groups = 0;
    l.group_elems = l.stored_dim;
    l.bits_row_bytes = l.stored_dim * 2;
  } else {
    l.stored_dim = padded_head_dim(type, head_dim);
    l.groups = blocks_per_row(type, head_dim);
    l.group_elems = l.stored_dim / l.groups;
    l.bits_row_bytes = l.stored_dim * t.index_bits / 8;
  }
  l.scale_row_bytes = 2 * l.groups;
  return l;
}

namespace {
// Bytes of a reference block that precede the bits: the norm / d (and turbo4's reserved half).
uint32_t header_bytes(KvType type) { return type == KvType::f16 ? 0 : type == KvType::turbo4 ? 4 : 2; }
}  // namespace

void reference_to_device(const RowLayout& l, const uint8_t* ref, uint8_t* bits, uint8_t* scales) {
  if (l.type == KvType::f16) {
    std::memset(bits, 0, l.bits_row_bytes);
    std::memcpy(bits, ref, size_t(l.head_dim) * 2);
    return;
  }
  const uint32_t block = block_bytes(l.type, l.head_dim), header = header_bytes(l.type);
  const uint32_t body = block - header;
  for (uint32_t g = 0; g < l.groups; ++g) {
    std::memcpy(scales + 2 * g, ref + g * block, 2);
    std::memcpy(bits + g * body, ref + g * block + header, body);
  }
}

void device_to_reference(const RowLayout& l, const uint8_t* bits, const uint8_t* scales, uint8_t* ref) {
  if (l.type == KvType::f16) {
    std::memcpy(ref, bits, size_t(l.head_dim) * 2);
    return;
  }
  const uint32_t block = block_bytes(l.type, l.head_dim), header = header_bytes(l.type);
  const uint32_t body = block - header;
  for (uint32_t g = 0; g < l.groups; ++g) {
    std::memcpy(ref + g * block, scales + 2 * g, 2);
    if (header == 4) std::memset(ref + g * block + 2, 0, 2);
    std::memcpy(ref + g * block + header, bits + g * body, body);
  }
}

TileLayout TileLayout::make(const RowLayout& row) {
  if (!traits(row.type).is_turbo)
    fail(ErrorCode::invalid_argument, "tile layout: " + std::string(type_name(row.type)) + " is stored as rows");
  TileLayout t;
  t.mag_bits = traits(row.type).index_bits - 1;
  t.blocks = row.stored_dim / 16;
  t.groups = row.groups;
  return t;
}

TileSlot tile_slot(Side side, uint32_t t, uint32_t d) {
  const uint32_t blk = d / 16, dd = d % 16;
  if (side == Side::k) {  // token g + 8 (r >> 1), dims 16 blk + 8 (r & 1) + 2c + e
    const uint32_t g = t % 8, c = (dd % 8) / 2;
    return {4 * g + c, 4 * blk + 2 * (t / 8) + dd / 8, dd % 2};
  }
  // V: dim 16 blk + g + 8 (r >> 1), tokens 2c + 8 (r & 1) + e
  const uint32_t g = dd % 8, c = (t % 8) / 2;
  return {4 * g + c, 4 * blk + 2 * (dd / 8) + t / 8, t % 2};
}

namespace {

// Bits [bit, bit + n) of lane L's little-endian word sequence in a tile (word w at 32 w + L).
uint32_t get_lane_bits(const uint8_t* tile, uint32_t lane, uint32_t bit, uint32_t n) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < n; ++i, ++bit) {
    uint32_t word;
    std::memcpy(&word, tile + 4 * (32 * (bit / 32) + lane), 4);
    v |= ((word >> (bit % 32)) & 1u) << i;
  }
  return v;
}

void put_lane_bits(uint8_t* tile, uint32_t lane, uint32_t bit, uint32_t n, uint32_t value) {
  for (uint32_t i = 0; i < n; ++i, ++bit) {
    uint8_t* at = tile + 4 * (32 * (bit / 32) + lane);
    uint32_t word;
    std::memcpy(&word, at, 4);
    const uint32_t m = 1u << (bit % 32);
    word = ((value >> i) & 1u) ? word | m : word & ~m;
    std::memcpy(at, &word, 4);
  }
}

// Bit positions of element (pair, elem) in its lane's sequence: its magnitude, its negative bit.
uint32_t mag_bit(const TileLayout& tl, const TileSlot& s) { return tl.field_bits() * s.pair + tl.mag_bits * s.elem; }
uint32_t sign_bit(const TileLayout& tl, const TileSlot& s) {
  return tl.field_bits() * s.pair + 2 * tl.mag_bits + s.elem;
}

// Byte offset of group grp's norm of token t in a tile.
uint32_t norm_offset(const TileLayout& tl, uint32_t grp, uint32_t t) { return tl.bits_bytes() + 32 * grp + 4 * (t % 8) + 2 * (t / 8); }

}  // namespace

void reference_to_tile(const RowLayout& l, Side side, const uint8_t* ref, uint32_t t, uint8_t* tile) {
  const TileLayout tl = TileLayout::make(l);
  const uint32_t block = block_bytes(l.type, l.head_dim), half = 1u << tl.mag_bits;
  for (uint32_t d = 0; d < l.stored_dim; ++d) {
    const uint32_t idx = unpack_index(l.type, l.group_elems, ref + d / l.group_elems * block, d % l.group_elems);
    const bool negative = idx < half;
    const TileSlot s = tile_slot(side, t, d);
    put_lane_bits(tile, s.lane, mag_bit(tl, s), tl.mag_bits, negative ? half - 1 - idx : idx - half);
    put_lane_bits(tile, s.lane, sign_bit(tl, s), 1, negative ? 1 : 0);
  }
  for (uint32_t grp = 0; grp < l.groups; ++grp) std::memcpy(tile + norm_offset(tl, grp, t), ref + grp * block, 2);
}

void tile_to_reference(const RowLayout& l, Side side, const uint8_t* tile, uint32_t t, uint8_t* ref) {
  const TileLayout tl = TileLayout::make(l);
  const uint32_t block = block_bytes(l.type, l.head_dim), half = 1u << tl.mag_bits;
  std::vector<uint8_t> idx(l.group_elems);
  for (uint32_t grp = 0; grp < l.groups; ++grp) {
    for (uint32_t j = 0; j < l.group_elems; ++j) {
      const TileSlot s = tile_slot(side, t, grp * l.group_elems + j);
      const uint32_t mi = get_lane_bits(tile, s.lane, mag_bit(tl, s), tl.mag_bits);
      const bool negative = get_lane_bits(tile, s.lane, sign_bit(tl, s), 1) != 0;
      idx[j] = uint8_t(negative ? half - 1 - mi : half + mi);
    }
    uint16_t norm;
    std::memcpy(&norm, tile + norm_offset(tl, grp, t), 2);
    pack_turbo(l.type, l.group_elems, block, norm, idx.data(), ref + grp * block);
  }
}

}  // namespace tkv
