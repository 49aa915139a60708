#include "kvcache/layout.hpp"

#include <cstring>

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

}  // namespace tkv
