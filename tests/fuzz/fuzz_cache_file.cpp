// Fuzz target: the cache-file loader (kvcache/persist.hpp) fed bytes.
//
// Input: byte 0 chooses how the rest is used; the rest is the file.
//   bit 0  reseal: recompute the header and trailing checksums before loading, so that mutated
//          files get past the checksums to the checks and the import behind them
//   bit 1  the cache: A (turbo3 K, q8_0 V, head_dim 64, 2 KV heads, 2 layers, 16-token pages)
//          or B (f16 K, turbo4 V, head_dim 96, 1 KV head, 1 layer, 32-token pages)
//   bit 2  synthesize: the rest is not a file but the recipe of a well-formed one for the cache
//          (a sequence count, per-layer lengths, then row bytes used cyclically), so that the
//          import, the room checks at their edges and the round trip get arbitrary contents
// Properties beyond "no crash, no sanitizer report": a load either throws tkv::Error and leaves
// the cache empty, or returns sequences whose saved file equals the input (cache A, whose types
// keep every byte) or saves to the same bytes twice (cache B: turbo4's reserved half-word is
// written as 0); inspect_cache_file agrees with the loader on validity.
#include <xxhash.h>

#include <cstring>
#include <span>
#include <vector>

#include "fuzz_common.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/persist.hpp"

using namespace tkv;

namespace {

KvCache& cache(bool b) {
  static KvCache a(fuzz::context(), {.layers = 2, .kv_heads = 2, .head_dim = 64, .k_type = KvType::turbo3,
                                     .v_type = KvType::q8_0, .page_size = 16, .capacity_tokens = 256,
                                     .max_sequences = 4});
  static KvCache bb(fuzz::context(), {.layers = 1, .kv_heads = 1, .head_dim = 96, .k_type = KvType::f16,
                                      .v_type = KvType::turbo4, .page_size = 32, .capacity_tokens = 128,
                                      .max_sequences = 3});
  return b ? bb : a;
}

uint32_t u32_at(const std::vector<uint8_t>& f, size_t at) {
  return uint32_t(f[at]) | uint32_t(f[at + 1]) << 8 | uint32_t(f[at + 2]) << 16 | uint32_t(f[at + 3]) << 24;
}
void put_u64(std::vector<uint8_t>& f, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) f[at + i] = uint8_t(v >> (8 * i));
}

// The checksums of the layout in persist.hpp, recomputed where the file is long enough.
void reseal(std::vector<uint8_t>& f) {
  if (f.size() < 36) return;
  const uint64_t header = 36 + 4 * uint64_t(u32_at(f, 28)) * u32_at(f, 32);
  if (header + 8 > f.size()) return;
  put_u64(f, header, XXH3_64bits(f.data(), header));
  if (header + 16 <= f.size()) put_u64(f, f.size() - 8, XXH3_64bits(f.data(), f.size() - 8));
}

// A well-formed file for cache `c` from a recipe: byte 0: sequences (mod 6: the caches have fewer
// slots); then one byte per (sequence, layer): its length (mod 3 pages + 5 tokens); the remaining
// bytes fill the rows, repeated (zeros when none are left).
std::vector<uint8_t> synthesize(const KvCache& c, std::span<const uint8_t> recipe) {
  const CacheConfig& cfg = c.config();
  size_t at = 0;
  auto next = [&]() -> uint8_t { return at < recipe.size() ? recipe[at++] : 0; };
  const uint32_t seqs = next() % 6;
  std::vector<uint8_t> f = {'T', 'K', 'V', 'C', 'A', 'C', 'H', 'E'};
  auto put_u32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) f.push_back(uint8_t(v >> (8 * i)));
  };
  put_u32(kCacheFileVersion);
  put_u32(uint32_t(cfg.k_type));
  put_u32(uint32_t(cfg.v_type));
  put_u32(cfg.head_dim);
  put_u32(cfg.kv_heads);
  put_u32(cfg.layers);
  put_u32(seqs);
  uint64_t rows = 0;
  const uint64_t per_token = (row_bytes(cfg.k_type, cfg.head_dim) + row_bytes(cfg.v_type, cfg.head_dim)) * cfg.kv_heads;
  for (uint32_t i = 0; i < seqs * cfg.layers; ++i) {
    const uint32_t len = next() % (3 * cfg.page_size + 5);
    put_u32(len);
    rows += len * per_token;
  }
  f.resize(f.size() + 8);
  const std::span<const uint8_t> fill = recipe.subspan(at);
  for (uint64_t i = 0; i < rows; ++i) f.push_back(fill.empty() ? 0 : fill[i % fill.size()]);
  f.resize(f.size() + 8);
  reseal(f);
  return f;
}

bool cache_is_empty(const KvCache& c) { return c.sequences().empty() && c.free_pages() == c.total_pages(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  KvCache& c = cache(mode & 2);
  std::vector<uint8_t> file(data + 1, data + size);
  if (mode & 4) file = synthesize(c, std::span<const uint8_t>(data + 1, size - 1));
  else if (mode & 1) reseal(file);
  fuzz::check(cache_is_empty(c), "the cache is not empty before a load");

  bool valid = true;
  try {
    (void)inspect_cache_file(std::span<const uint8_t>(file));
  } catch (const Error& e) {
    valid = false;
    fuzz::check(e.code() == ErrorCode::io, std::string("inspect: not an io error: ") + e.what());
  }

  std::vector<SequenceId> loaded;
  try {
    loaded = load_sequences(c, std::span<const uint8_t>(file));
  } catch (const Error& e) {
    // A file inspect accepts may still not fit this cache (shape, room); one it rejects never loads.
    fuzz::check(cache_is_empty(c), std::string("a failed load left sequences or pages behind: ") + e.what());
    fuzz::check(valid || e.code() == ErrorCode::io, std::string("invalid file, non-io error: ") + e.what());
    fuzz::check(!valid || e.code() != ErrorCode::io, std::string("valid file, io error: ") + e.what());
    return 0;
  }
  fuzz::check(valid, "the loader accepted a file inspect_cache_file rejects");
  const auto saved = save_sequences_to_bytes(c, loaded);
  for (SequenceId s : loaded) c.remove_sequence(s);
  if (!(mode & 2)) {
    fuzz::check(saved == file, "cache A: saving the loaded sequences does not give back the file");
  } else {
    fuzz::check(saved.size() == file.size(), "cache B: the saved file has another size");
    const auto again = load_sequences(c, std::span<const uint8_t>(saved));
    const auto saved_again = save_sequences_to_bytes(c, again);
    for (SequenceId s : again) c.remove_sequence(s);
    fuzz::check(saved_again == saved, "cache B: save, load, save is not stable");
  }
  fuzz::check(cache_is_empty(c), "removing the loaded sequences left pages behind");
  return 0;
}
