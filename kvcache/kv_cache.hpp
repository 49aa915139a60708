// The paged KV cache: per layer, one device buffer for K and one for V, each a pool of pages of
// `page_size` tokens (kvcache/layout.hpp). Sequences own lists of pages (their page tables, kept
// on the device for the attention kernel); pages are shared by the layers, so one page table
// serves every layer. Appends quantize on the GPU (shaders/quantize.comp).
//
// Lengths are per layer: an engine that runs layer by layer appends to layer 0, runs its
// attention, then appends to layer 1, and so on. length(seq) is the count present on every layer.
//
// Thread safety: a KvCache is used by one thread at a time (callers serialise).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kvcache/layout.hpp"
#include "kvcache/vk/caps.hpp"
#include "kvcache/types.hpp"
#include "kvcache/vk/buffer.hpp"

namespace tkv {

namespace vk {
class Context;
class Recorder;
}  // namespace vk

struct CacheConfig {
  uint32_t layers = 0;
  uint32_t kv_heads = 0;
  uint32_t head_dim = 0;
  KvType k_type = KvType::f16;
  KvType v_type = KvType::f16;
  uint32_t page_size = 64;         // tokens per page; a multiple of 16
  uint64_t capacity_tokens = 0;    // across all sequences, rounded up to whole pages
  uint32_t max_sequences = 64;
};

enum class RowFormat : uint32_t { f32 = 0, f16 = 1 };

// New tokens' rows in host memory, laid out [token][kv_head][head_dim] for one layer, or
// [layer][token][kv_head][head_dim] for append_all_layers. f16 rows are IEEE halves (uint16_t).
struct HostRows {
  const void* data = nullptr;
  RowFormat format = RowFormat::f32;
};

// The same layout in a device buffer, starting at `offset` bytes.
struct DeviceRows {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;
  RowFormat format = RowFormat::f32;
};

using SequenceId = uint32_t;

class KvCache {
 public:
  KvCache(std::shared_ptr<vk::Context> ctx, const CacheConfig& config);
  // The checks the constructor makes, without allocating: a clear error when `config` is
  // malformed or does not fit `caps` (buffer range, device memory).
  static void validate(const DeviceCaps& caps, const CacheConfig& config);
  ~KvCache();
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  const CacheConfig& config() const { return config_; }
  vk::Context& context() const { return *ctx_; }
  const PageLayout& layout(Side side) const { return side == Side::k ? k_layout_ : v_layout_; }

  SequenceId create_sequence();
  void remove_sequence(SequenceId seq);
  // Drops tokens at positions >= length on every layer (speculative-decoding rollback).
  void truncate(SequenceId seq, uint32_t length);
  uint32_t length(SequenceId seq) const;
  uint32_t length(SequenceId seq, uint32_t layer) const;
  bool contains(SequenceId seq) const;
  std::vector<SequenceId> sequences() const;

  // Quantizes and appends n_tokens rows of K and V to one layer, and waits. Rows with NaN or Inf
  // are rejected (tkv::Error numeric) before anything changes.
  void append(SequenceId seq, uint32_t layer, uint32_t n_tokens, HostRows k, HostRows v);
  void append_all_layers(SequenceId seq, uint32_t n_tokens, HostRows k, HostRows v);
  // Records the same append from device buffers into the caller's command buffer (nothing is
  // submitted; the values are not checked: NaN/Inf rows quantize to NaN norms). The recorded work
  // must be submitted before the cache is used again. The sequence's length advances when the
  // append is recorded: if the command buffer is never submitted, or its submission fails (e.g.
  // out of memory), truncate the sequence back to its earlier length.
  void record_append(vk::Recorder& r, SequenceId seq, uint32_t layer, uint32_t n_tokens, DeviceRows k,
                     DeviceRows v);

  // Makes room for n_tokens more positions of seq on `layer` (pages; the page-table update is
  // recorded) and advances that layer's length, for a dispatch recorded next that writes the new
  // rows itself (record_append's quantize dispatches, or the decoder's fused append,
  // Decoder::record_append_decode). Throws capacity with nothing changed. retract_extend undoes
  // it when the call fails before recording that dispatch.
  void record_extend(vk::Recorder& r, SequenceId seq, uint32_t layer, uint32_t n_tokens);
  void retract_extend(SequenceId seq, uint32_t layer, uint32_t n_tokens);

  // Reference block bytes (kv-formats.md) of positions [begin, end) of one head: (end - begin)
  // rows of row_bytes(type, head_dim) each.
  std::vector<uint8_t> export_rows(SequenceId seq, uint32_t layer, Side side, uint32_t head, uint32_t begin,
                                   uint32_t end) const;
  // Writes reference rows at positions [begin, begin + n) of one head; begin <= length(seq, layer).
  // Positions beyond the layer's length extend it; the other heads' rows there hold unspecified
  // values until they are imported too (a loader imports every head).
  void import_rows(SequenceId seq, uint32_t layer, Side side, uint32_t head, uint32_t begin,
                   std::span<const uint8_t> reference_bytes);

  // Bytes stored per token over all layers, heads, K and V: the formats' bytes as the device
  // holds them (RowLayout::device_row_bytes), with no other copy of the data.
  uint64_t bytes_per_token() const;
  // Device bytes held: the page pools of every layer plus the page tables.
  uint64_t total_bytes() const;
  uint32_t total_pages() const { return total_pages_; }
  uint32_t free_pages() const { return uint32_t(free_pages_.size()); }
  uint64_t capacity_tokens() const { return uint64_t(total_pages_) * config_.page_size; }

  // For the attention kernel.
  const vk::Buffer& buffer(uint32_t layer, Side side) const;
  const vk::Buffer& page_table() const { return page_table_; }
  uint32_t page_table_offset(SequenceId seq) const;  // in uint32 entries
  uint32_t max_pages_per_sequence() const { return total_pages_; }

 private:
  struct Sequence {
    bool live = false;
    std::vector<uint32_t> pages;
    std::vector<uint32_t> lengths;  // per layer
  };
  const Sequence& get(SequenceId seq) const;
  Sequence& get(SequenceId seq);
  void check_layer(uint32_t layer) const;
  // Throws capacity when `tokens` positions of `s` would not fit the free pages.
  void check_room(const Sequence& s, uint64_t tokens) const;
  // Allocates pages so that `tokens` positions fit; returns the index of the first new page in
  // seq.pages. Throws capacity without changing anything when the pool is short.
  uint32_t reserve(Sequence& s, uint64_t tokens);
  void record_page_table_update(vk::Recorder& r, SequenceId seq, uint32_t first_new);
  void record_quantize(vk::Recorder& r, SequenceId seq, uint32_t layer, Side side, uint32_t first_pos,
                       uint32_t n_tokens, VkBuffer src, uint64_t src_offset, RowFormat format,
                       uint64_t src_token_stride);
  void append_host(SequenceId seq, uint32_t first_layer, uint32_t layer_count, uint32_t n_tokens, HostRows k,
                   HostRows v);
  void release_pages_beyond(Sequence& s, uint64_t tokens);

  std::shared_ptr<vk::Context> ctx_;
  CacheConfig config_;
  PageLayout k_layout_, v_layout_;
  uint32_t total_pages_ = 0;
  std::vector<vk::Buffer> k_buffers_, v_buffers_;
  vk::Buffer page_table_;
  vk::Buffer staging_;
  std::vector<uint32_t> free_pages_;
  std::vector<Sequence> sequences_;
  std::vector<uint32_t> seq_generation_;
};

}  // namespace tkv
