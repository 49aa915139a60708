// turbokv::Cache: the paged, compressed KV cache of one engine. Per layer, K and V of every
// sequence live in device memory as pages of `page_size` tokens in the configured types; appends
// quantize on the GPU. Lengths are per layer: an engine that runs layer by layer appends to layer
// 0, decodes it, appends to layer 1, and so on; length(seq) is the count present on every layer.
//
// Host path: append / append_all_layers copy the rows through the engine's staging memory,
// submit to the engine's queue and wait; rows with NaN or Inf are rejected (Error(numeric))
// before anything changes. Record path: record_append records the same work into the host's
// command buffer from the host's VkBuffers with no copy (see "Recording" below); values are not
// checked there (a NaN row quantizes to a NaN norm).
//
// Recording (record_append here, Decoder::record): the command buffer is a primary command buffer
// of the engine's device in the recording state, from a pool of the engine's queue family, and is
// submitted to a queue of that family (the cache's buffers are VK_SHARING_MODE_EXCLUSIVE). The
// recorded commands start and end with Engine::record_barrier's memory barrier (compute-shader
// and transfer writes -> compute-shader and transfer reads and writes), so:
//   - before: inputs written earlier on the queue by compute shaders or transfer commands
//     (vkCmdCopyBuffer, vkCmdUpdateBuffer, vkCmdFillBuffer) need nothing more; host writes to
//     mapped memory made before vkQueueSubmit need nothing either. Writes by other stages (e.g. a
//     fragment shader) need the host's barrier to VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT /
//     VK_ACCESS_SHADER_READ_BIT, and a buffer owned by another queue family a queue family
//     ownership transfer.
//   - after: the outputs are visible to later compute-shader and transfer reads on the queue; other
//     consumers need the host's barrier from VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT /
//     VK_ACCESS_SHADER_WRITE_BIT (e.g. to VK_PIPELINE_STAGE_HOST_BIT / VK_ACCESS_HOST_READ_BIT
//     before reading mapped memory after the fence).
// Bookkeeping (lengths, pages) changes when the call records, not when the GPU runs it. Recorded
// work of one cache may span several command buffers if they are submitted in record order to
// one queue. Before a host-path call on the cache or its decoders (append, decode), or a call that
// frees pages (truncate, remove_sequence), the recorded work must have completed.
//
// Threads and lifetime: see turbokv/engine.hpp. The cache holds its memory until its last handle
// (and its decoders') is gone; recorded work using it must complete before that.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "turbokv/engine.hpp"
#include "turbokv/types.hpp"

namespace tkv {
class KvCache;
}

namespace turbokv {

class Cache {
 public:
  // An empty handle; every other call on it throws invalid_argument.
  Cache() = default;
  // Allocates the whole capacity on the engine's device. Throws Error(invalid_argument) naming a
  // malformed field, Error(capacity) when the device cannot hold it.
  Cache(const Engine& engine, const CacheConfig& config);

  explicit operator bool() const { return cache_ != nullptr; }
  const CacheConfig& config() const;
  Engine engine() const;

  // A new, empty sequence. Throws Error(capacity) when max_sequences are live.
  SequenceId create_sequence();
  // Frees the sequence's pages; its id stops being valid. Throws Error(not_found) for an unknown id.
  void remove_sequence(SequenceId seq);
  // Drops tokens at positions >= length on every layer (speculative-decoding rollback); length
  // must not exceed length(seq).
  void truncate(SequenceId seq, uint32_t length);
  uint32_t length(SequenceId seq) const;                  // tokens present on every layer
  uint32_t length(SequenceId seq, uint32_t layer) const;  // tokens on one layer
  bool contains(SequenceId seq) const;
  std::vector<SequenceId> sequences() const;              // live sequences, by slot

  // Appends n_tokens rows of K and V to one layer of seq and waits (host path, above). k and v:
  // [n_tokens][kv_heads][head_dim] each, in their own formats. Throws Error(capacity) when the
  // pages run out (nothing changes then), Error(numeric) on NaN / Inf.
  void append(SequenceId seq, uint32_t layer, uint32_t n_tokens, HostRows k, HostRows v);
  // The same for every layer at once: k and v are [layers][n_tokens][kv_heads][head_dim].
  void append_all_layers(SequenceId seq, uint32_t n_tokens, HostRows k, HostRows v);
  // Records the append of n_tokens rows from the host's buffers into the host's command buffer
  // (record path, above): k and v each hold [n_tokens][kv_heads][head_dim] elements of their
  // format from their offset; `bytes` must cover that. Nothing is submitted. On error (as
  // append's, and Error(capacity) with nothing changed) at most a memory barrier has been recorded.
  void record_append(VkCommandBuffer command_buffer, SequenceId seq, uint32_t layer, uint32_t n_tokens,
                     DeviceSpan k, DeviceSpan v);

  // Device bytes stored per token over all layers, heads, K and V.
  uint64_t bytes_per_token() const;
  // Device bytes held: page pools of every layer plus the page tables.
  uint64_t total_bytes() const;
  uint64_t capacity_tokens() const;  // whole pages
  uint64_t free_tokens() const;      // in pages not held by any sequence

  // ---- Cache files ----
  // A cache file holds sequences' K and V as the reference bytes of kv-formats.md (what the cache
  // stores, bit for bit) with each sequence's length per layer, the types and shape, a format
  // version and XXH3-64 checksums. It does not depend on the device or the page size: a file saved
  // from one cache loads into any cache with the same k_type, v_type, head_dim, kv_heads and
  // layers (CacheFileInfo). A loaded sequence decodes exactly as the saved one did in a cache of
  // the same page size on the same device (the same plan); otherwise to float rounding.
  // save / save_all / load are host-path calls: they copy through the engine's staging memory,
  // submit to the engine's queue and wait (see "Threads" in turbokv/engine.hpp); work recorded on
  // this cache must have completed before them. They hold one chunk of about 1 MiB at a time.
  //
  // Writes the sequences `seqs` (in that order, each at most once, with their length on every
  // layer) to the file `path`. The file is written beside `path` under a temporary name and then
  // renamed over it, so that a reader never sees half a file and `path` is untouched when the call
  // fails. Throws Error(not_found) for an unknown sequence and Error(invalid_argument) for one
  // listed twice (both before anything is written), Error(io) naming the path and the reason when
  // the file cannot be written. The cache does not change.
  void save(const std::string& path, SequenceList seqs) const;
  // The same for every live sequence, in the order of sequences().
  void save_all(const std::string& path) const;
  // Adds the file's sequences to this cache as new sequences and returns their ids in the file's
  // order (element i holds the file's sequence i, with its lengths and rows). The whole file is
  // checked before anything is created (it is read twice). When the call fails the cache is left
  // as it was (sequences, lengths, contents, free tokens and slots; a sequence half imported is
  // removed again), and it throws:
  //   Error(io)               the file cannot be read, is truncated, corrupt (a checksum differs),
  //                           not a cache file, or of a newer format version
  //   Error(invalid_argument) its types, head_dim, kv_heads or layers differ from the cache's
  //                           (the message names the field and both values)
  //   Error(capacity)         the cache lacks free sequence slots or pages for it
  std::vector<SequenceId> load(const std::string& path);

 private:
  std::shared_ptr<tkv::KvCache> cache_;
  Engine engine_;
  CacheConfig config_;
  tkv::KvCache& get() const;
  friend struct detail::Access;
  friend class Decoder;
};

// Checks the whole cache file at `path` (magic, version, header, size, both checksums) and returns
// its header, without an engine or a cache (no Vulkan). Throws Error(io) as Cache::load does. Keeps
// no state: any thread, any time.
CacheFileInfo inspect_cache_file(const std::string& path);

}  // namespace turbokv
