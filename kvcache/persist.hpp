// Saving sequences of a KvCache to a file and loading them back ("cache files").
//
// A cache file holds the reference block bytes (kv-formats.md) of some sequences, so it does not
// depend on the device layout or the page size: a file saved from a cache with 64-token pages
// loads into one with 16-token pages. Types, head_dim, kv_heads and layers must match.
//
// Format, version 1 (all integers little-endian, no padding):
//
//   header   magic "TKVCACHE" (8 bytes), u32 version (1),
//            u32 k_type, u32 v_type (KvType values), u32 head_dim, u32 kv_heads, u32 layers,
//            u32 sequence count S, then S x layers u32 lengths ([sequence][layer] tokens),
//            u64 XXH3-64 of the header bytes before it (so a damaged length reads as corrupt,
//            not as a truncated file)
//   rows     for each sequence, layer, side (K then V), KV head: the reference rows of positions
//            [0, length(sequence, layer)), row_bytes(type of the side, head_dim) bytes each, as
//            KvCache::export_rows gives them
//   trailer  u64 XXH3-64 of every byte before it
//
// Loading validates the whole file (magic, version, header checksum, shape against the cache,
// room in the cache, length, checksum) before it creates a sequence, then imports; the cache is
// left as it was when anything fails, including an import that fails midway (the sequences the
// load created are removed). Errors are tkv::Error: io for a file that is unreadable, truncated,
// corrupt, not a cache file or of a newer version; invalid_argument for a file whose types or
// shape differ from the cache's; capacity when the cache has no room (sequence slots or pages);
// not_found for an unknown sequence to save. Messages name the file (or "cache bytes"/"cache
// stream") and the problem.
//
// Files are streamed: saving exports and writes one head's rows at a time (in chunks of at most
// ~1 MiB), and loading reads the file twice (validation, then import), holding one chunk.
//
// Thread safety: as KvCache (one thread at a time per cache). The functions keep no state.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "kvcache/kv_cache.hpp"
#include "kvcache/types.hpp"

namespace tkv {

inline constexpr uint32_t kCacheFileVersion = 1;

// What a cache file's header says.
struct CacheFileInfo {
  uint32_t version = 0;
  KvType k_type = KvType::f16;
  KvType v_type = KvType::f16;
  uint32_t head_dim = 0;
  uint32_t kv_heads = 0;
  uint32_t layers = 0;
  std::vector<std::vector<uint32_t>> lengths;  // [sequence][layer], tokens
  uint64_t file_bytes = 0;                     // the whole file, trailer included
};

// ---- Saving ----
// Writes the sequences `seqs` (in that order; each at most once) of `cache`, with their per-layer
// lengths. Checks every id before writing anything. The stream overload writes from the stream's
// current position and throws Error(io) when the stream fails; the path overload writes a
// temporary file beside `path` and renames it over `path`, so a reader never sees half a file.
void save_sequences(const KvCache& cache, std::span<const SequenceId> seqs, std::ostream& out);
void save_sequences(const KvCache& cache, std::span<const SequenceId> seqs, const std::string& path);
std::vector<uint8_t> save_sequences_to_bytes(const KvCache& cache, std::span<const SequenceId> seqs);
// The whole cache: every live sequence, in the order of KvCache::sequences().
void save_cache(const KvCache& cache, std::ostream& out);
void save_cache(const KvCache& cache, const std::string& path);

// ---- Loading ----
// Validates the file against `cache`, then creates one sequence per sequence of the file and
// imports its rows. Returns the new ids, in the file's order. The stream must be seekable (it is
// read twice, from its current position); a non-seekable stream is refused before anything is
// read, with Error(invalid_argument). Bytes after the trailer are an error (io).
std::vector<SequenceId> load_sequences(KvCache& cache, std::istream& in);
std::vector<SequenceId> load_sequences(KvCache& cache, const std::string& path);
std::vector<SequenceId> load_sequences(KvCache& cache, std::span<const uint8_t> bytes);

// Validates a whole cache file without a cache (magic, version, header, length, checksum) and
// returns its header. Throws Error(io) as load_sequences does.
CacheFileInfo inspect_cache_file(std::istream& in);
CacheFileInfo inspect_cache_file(const std::string& path);
CacheFileInfo inspect_cache_file(std::span<const uint8_t> bytes);

}  // namespace tkv
