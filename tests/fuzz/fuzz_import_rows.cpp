// Fuzz target: reference rows from untrusted bytes, on two paths.
//  1. KvCache::import_rows with fuzzed layer, side, head, begin and bytes (any length) into a
//     sequence that already holds a fuzzed number of rows, on a small cache of the fuzzed type
//     and head_dim. Properties: an import either throws tkv::Error or its rows export back as
//     imported (turbo4's reserved half-word reads as 0); the sequence's pages return on removal.
//  2. The CPU codec's dequantize_row (kvcache/codec.hpp) on every whole row of the bytes, and
//     the inverse rotation of turbo rows. Property: a group whose scale (f16 element, q8_0 d,
//     turbo norm) is a finite half dequantizes to finite values.
//
// Input: byte 0: type (mod 5) and head_dim choice (bits 4-5: 32, 64, 96, 128); byte 1: layer
// (mod 3: layer 2 does not exist); byte 2: side (bit 0) and head (bits 1-2, mod 3: head 2 does
// not exist); byte 3: rows already there (mod 40); byte 4: begin (mod rows there + 3); rest: the
// reference bytes.
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "fuzz_common.hpp"
#include "kvcache/codec.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/types.hpp"

using namespace tkv;

namespace {

constexpr uint32_t kHeadDims[] = {32, 64, 96, 128};

KvCache& cache(KvType type, uint32_t head_dim) {
  static std::map<std::pair<KvType, uint32_t>, std::unique_ptr<KvCache>> caches;
  auto& c = caches[{type, head_dim}];
  if (!c)
    c = std::make_unique<KvCache>(fuzz::context(), CacheConfig{.layers = 2, .kv_heads = 2, .head_dim = head_dim,
                                                               .k_type = type, .v_type = type, .page_size = 16,
                                                               .capacity_tokens = 64, .max_sequences = 2});
  return *c;
}

bool half_finite(const uint8_t* p) { return ((p[0] | p[1] << 8) & 0x7c00) != 0x7c00; }

// Zeroes turbo4's reserved half-words: what the cache stores of a row.
std::vector<uint8_t> as_stored(KvType type, uint32_t head_dim, std::span<const uint8_t> rows) {
  std::vector<uint8_t> out(rows.begin(), rows.end());
  if (type != KvType::turbo4) return out;
  const uint32_t bb = block_bytes(type, head_dim);
  for (size_t at = 0; at + bb <= out.size(); at += bb) out[at + 2] = out[at + 3] = 0;
  return out;
}

void check_codec(KvType type, uint32_t head_dim, std::span<const uint8_t> bytes) {
  const size_t rb = row_bytes(type, head_dim);
  const uint32_t padded = padded_head_dim(type, head_dim);
  const uint32_t blocks = blocks_per_row(type, head_dim), bb = block_bytes(type, head_dim);
  const uint32_t per_block = type == KvType::f16 ? 1 : padded / blocks;
  std::vector<float> out(padded), unrotated(padded);
  for (size_t r = 0; r < 8 && (r + 1) * rb <= bytes.size(); ++r) {
    const auto row = bytes.subspan(r * rb, rb);
    dequantize_row(type, head_dim, row, out);
    for (uint32_t b = 0; b < blocks; ++b) {
      if (!half_finite(row.data() + size_t(b) * bb)) continue;
      for (uint32_t i = b * per_block; i < (b + 1) * per_block && i < padded; ++i)
        fuzz::check(std::isfinite(out[i]), std::string(type_name(type)) + ": a finite scale gave a non-finite value");
    }
    if (traits(type).is_turbo) inverse_rotate_row(head_dim, out, unrotated);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  const KvType type = kAllTypes[data[0] % 5];
  const uint32_t head_dim = kHeadDims[(data[0] >> 4) & 3];
  const uint32_t layer = data[1] % 3;
  const Side side = (data[2] & 1) ? Side::v : Side::k;
  const uint32_t head = (data[2] >> 1 & 3) % 3;
  uint32_t there = data[3] % 40;
  const uint32_t begin = data[4] % (there + 3);
  const std::span<const uint8_t> bytes(data + 5, size - 5);

  check_codec(type, head_dim, bytes);

  KvCache& c = cache(type, head_dim);
  const SequenceId seq = c.create_sequence();
  const size_t rb = row_bytes(type, head_dim);
  // Rows already there: a pattern from the bytes' first row (or zeros), on the fuzzed layer.
  if (there > 0) {
    std::vector<uint8_t> prefill(there * rb, 0);
    for (size_t i = 0; i < prefill.size() && i < bytes.size(); ++i) prefill[i] = bytes[i % std::min(rb, bytes.size())];
    try {
      c.import_rows(seq, layer % 2, side, 0, 0, prefill);
    } catch (const Error& e) {  // a pattern with NaN / Inf values is refused whole: no rows there
      fuzz::check(e.code() == ErrorCode::numeric, std::string("prefill: unexpected error: ") + e.what());
      there = 0;
    }
  }
  bool imported = false;
  try {
    c.import_rows(seq, layer, side, head, begin, bytes);
    imported = true;
  } catch (const Error& e) {
    fuzz::check(e.code() == ErrorCode::invalid_argument || e.code() == ErrorCode::capacity ||
                    e.code() == ErrorCode::numeric,
                std::string("import: unexpected error kind: ") + e.what());
  }
  if (imported && !bytes.empty()) {
    const uint32_t n = uint32_t(bytes.size() / rb);
    // (An import succeeds only on an existing layer, the one the rows already there are on.)
    fuzz::check(c.length(seq, layer) == std::max(there, begin + n),
                "import: the layer's length is not max(rows there, begin + imported rows)");
    fuzz::check(c.export_rows(seq, layer, side, head, begin, begin + n) == as_stored(type, head_dim, bytes),
                "import: the rows do not export back as imported");
  }
  c.remove_sequence(seq);
  fuzz::check(c.sequences().empty() && c.free_pages() == c.total_pages(), "pages left behind after removal");
  return 0;
}
