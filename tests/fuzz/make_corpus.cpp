// Writes the binary seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/): cache files
// made by the saver for fuzz_cache_file (with its leading mode byte), and reference rows made by
// the CPU codec for fuzz_import_rows. The policy seeds are hand-written JSON files.
// Usage: fuzz_make_corpus <corpus dir>   (tests/fuzz/corpus; overwrites the files it writes)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "kvcache/codec.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/persist.hpp"

using namespace tkv;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, uint8_t lead, std::span<const uint8_t> bytes, bool with_lead = true) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (with_lead) out.put(char(lead));
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size() + (with_lead ? 1 : 0));
}

std::vector<float> gaussian(std::mt19937& rng, size_t n) {
  std::normal_distribution<float> nd;
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  return x;
}

SequenceId add(KvCache& c, std::mt19937& rng, const std::vector<uint32_t>& lengths) {
  const SequenceId s = c.create_sequence();
  for (uint32_t l = 0; l < c.config().layers; ++l) {
    if (!lengths[l]) continue;
    const auto k = gaussian(rng, size_t(lengths[l]) * c.config().kv_heads * c.config().head_dim);
    const auto v = gaussian(rng, k.size());
    c.append(s, l, lengths[l], {k.data()}, {v.data()});
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  std::mt19937 rng(2024);

  // fuzz_cache_file: the same caches as the target (A: turbo3/q8_0, B: f16/turbo4).
  const fs::path cf = root / "fuzz_cache_file";
  fs::create_directories(cf);
  KvCache a(fuzz::context(), {.layers = 2, .kv_heads = 2, .head_dim = 64, .k_type = KvType::turbo3,
                              .v_type = KvType::q8_0, .page_size = 16, .capacity_tokens = 256, .max_sequences = 8});
  KvCache b(fuzz::context(), {.layers = 1, .kv_heads = 1, .head_dim = 96, .k_type = KvType::f16,
                              .v_type = KvType::turbo4, .page_size = 32, .capacity_tokens = 128, .max_sequences = 3});
  const SequenceId a1 = add(a, rng, {5, 3}), a2 = add(a, rng, {0, 0}), a3 = add(a, rng, {17, 16});
  const SequenceId b1 = add(b, rng, {9});
  const std::vector<SequenceId> a12 = {a1, a2}, a3v = {a3}, none = {}, b1v = {b1};
  write(cf / "a_two_sequences", 0, save_sequences_to_bytes(a, a12));
  write(cf / "a_two_sequences_reseal", 1, save_sequences_to_bytes(a, a12));
  write(cf / "a_page_crossing", 0, save_sequences_to_bytes(a, a3v));
  write(cf / "a_no_sequences", 0, save_sequences_to_bytes(a, none));
  write(cf / "a_file_for_b", 0, save_sequences_to_bytes(b, b1v));  // shape mismatch
  const std::vector<SequenceId> five = {a1, a2, add(a, rng, {1, 1}), add(a, rng, {2, 0}), add(a, rng, {0, 1})};
  write(cf / "a_too_many_sequences", 1, save_sequences_to_bytes(a, five));
  write(cf / "b_one_sequence", 2, save_sequences_to_bytes(b, b1v));
  write(cf / "b_one_sequence_reseal", 3, save_sequences_to_bytes(b, b1v));
  // Recipes (mode bit 2): sequence count, lengths per (sequence, layer), row bytes.
  const std::vector<uint8_t> recipe_a = {3, 16, 15, 33, 0, 1, 49, 0x5a, 0x3c, 0x00, 0xff, 0x81};
  write(cf / "a_recipe", 4, recipe_a);
  const std::vector<uint8_t> recipe_b = {2, 64, 101, 0x00, 0x3c, 0x12, 0x34};
  write(cf / "b_recipe", 6, recipe_b);

  // fuzz_import_rows: byte 0 type | head_dim choice << 4, layer, side | head << 1, rows there,
  // begin; then codec rows.
  const fs::path ir = root / "fuzz_import_rows";
  fs::create_directories(ir);
  const uint32_t dims[] = {32, 64, 96, 128};
  for (uint32_t t = 0; t < 5; ++t)
    for (uint32_t d : {1u, 2u}) {
      const KvType type = kAllTypes[t];
      const uint32_t hd = dims[d], rows = 3;
      const size_t rb = row_bytes(type, hd);
      std::vector<uint8_t> in(5 + rows * rb);
      const uint8_t lead[5] = {uint8_t(t | d << 4), uint8_t(t % 2), uint8_t((t & 1) | (d & 1) << 1), uint8_t(4 * t),
                               uint8_t(2 * t)};
      std::copy(lead, lead + 5, in.begin());
      for (uint32_t r = 0; r < rows; ++r) {
        const auto x = gaussian(rng, hd);
        quantize_row(type, hd, x, std::span(in).subspan(5 + r * rb, rb));
      }
      write(ir / (std::string(type_name(type)) + "_hd" + std::to_string(hd)), 0, in, false);
    }
  return 0;
}
