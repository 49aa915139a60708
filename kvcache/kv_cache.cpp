#include "kvcache/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"

namespace tkv {
namespace {

constexpr uint32_t kSlotBits = 16;  // SequenceId = generation << 16 | slot

std::string seq_name(SequenceId seq) { return "sequence " + std::to_string(seq); }

struct QuantizePush {
  uint32_t src_offset;
  uint32_t src_token_stride;
  uint32_t src_head_stride;
  uint32_t table_offset;
  uint32_t first_pos;
};

std::vector<uint32_t> quantize_constants(const PageLayout& l, RowFormat format) {
  return {uint32_t(l.row.type), l.row.head_dim, l.row.stored_dim,   l.row.groups,
          l.row.group_elems,    l.row.bits_row_bytes, l.page_size, l.kv_heads,
          format == RowFormat::f16 ? 1u : 0u};
}

size_t element_bytes(RowFormat f) { return f == RowFormat::f16 ? 2 : 4; }

// Rejects NaN / Inf before anything is written, naming where it is.
void check_finite(const HostRows& rows, size_t count, uint32_t per_token, const char* side) {
  for (size_t i = 0; i < count; ++i) {
    const float v = rows.format == RowFormat::f16 ? half_to_float(static_cast<const uint16_t*>(rows.data)[i])
                                                  : static_cast<const float*>(rows.data)[i];
    if (!std::isfinite(v))
      fail(ErrorCode::numeric, std::string("append: ") + side + " row value " + std::to_string(v) + " at token " +
                                   std::to_string(i / per_token) + ", element " + std::to_string(i % per_token) +
                                   " is not finite; nothing was appended");
  }
}

}  // namespace

void KvCache::validate(const DeviceCaps& caps, const CacheConfig& c) {
  if (c.layers == 0) fail(ErrorCode::invalid_argument, "cache config: layers must be at least 1");
  if (c.kv_heads == 0) fail(ErrorCode::invalid_argument, "cache config: kv_heads must be at least 1");
  check_head_dim(c.head_dim);
  traits(c.k_type);
  traits(c.v_type);
  if (c.page_size == 0 || c.page_size % 16 != 0 || c.page_size > 4096)
    fail(ErrorCode::invalid_argument, "cache config: page_size " + std::to_string(c.page_size) +
                                          " must be a multiple of 16 between 16 and 4096");
  if (c.capacity_tokens == 0) fail(ErrorCode::invalid_argument, "cache config: capacity_tokens must be at least 1");
  if (c.max_sequences == 0 || c.max_sequences > (1u << kSlotBits))
    fail(ErrorCode::invalid_argument, "cache config: max_sequences must be between 1 and 65536");
  const PageLayout k{RowLayout::make(c.k_type, c.head_dim), c.page_size, c.kv_heads};
  const PageLayout v{RowLayout::make(c.v_type, c.head_dim), c.page_size, c.kv_heads};
  const uint64_t pages = (c.capacity_tokens + c.page_size - 1) / c.page_size;
  const uint64_t page_bytes = std::max(k.page_bytes(), v.page_bytes());
  const uint64_t layer_bytes = pages * page_bytes;
  const uint64_t limit = std::min<uint64_t>(caps.max_storage_buffer_range, 0xffffffffull);
  if (layer_bytes > limit)
    fail(ErrorCode::capacity, "cache config: one layer's pool would need " + std::to_string(layer_bytes) +
                                  " bytes, above this device's limit of " + std::to_string(limit) +
                                  " bytes per buffer; lower capacity_tokens (at most " +
                                  std::to_string(limit / page_bytes * c.page_size) + " tokens here)");
  const uint64_t need = c.layers * pages * (k.page_bytes() + v.page_bytes()) + uint64_t(c.max_sequences) * pages * 4;
  if (uint64_t have = caps.device_local_bytes(); have && need > have)
    fail(ErrorCode::capacity, "cache config: needs " + std::to_string(need) + " bytes of device memory, " +
                                  caps.name + " has " + std::to_string(have));
}

KvCache::KvCache(std::shared_ptr<vk::Context> ctx, const CacheConfig& config) : ctx_(std::move(ctx)), config_(config) {
  validate(ctx_->caps(), config);
  const auto& c = config_;
  k_layout_ = {RowLayout::make(c.k_type, c.head_dim), c.page_size, c.kv_heads};
  v_layout_ = {RowLayout::make(c.v_type, c.head_dim), c.page_size, c.kv_heads};
  const uint64_t pages = (c.capacity_tokens + c.page_size - 1) / c.page_size;
  const uint64_t table_bytes = uint64_t(c.max_sequences) * pages * 4;
  total_pages_ = uint32_t(pages);

  for (uint32_t l = 0; l < c.layers; ++l) {
    k_buffers_.emplace_back(*ctx_, pages * k_layout_.page_bytes(), vk::MemoryKind::device);
    v_buffers_.emplace_back(*ctx_, pages * v_layout_.page_bytes(), vk::MemoryKind::device);
  }
  page_table_ = vk::Buffer(*ctx_, table_bytes, vk::MemoryKind::device);
  // Zeroed pools: padding and never-written slots read as zeros, never as stale memory.
  ctx_->run([&](vk::Recorder& r) {
    for (uint32_t l = 0; l < c.layers; ++l) {
      r.fill(k_buffers_[l], 0, VK_WHOLE_SIZE, 0);
      r.fill(v_buffers_[l], 0, VK_WHOLE_SIZE, 0);
    }
    r.fill(page_table_, 0, VK_WHOLE_SIZE, 0);
    r.barrier();
  });
  free_pages_.resize(pages);
  for (uint32_t i = 0; i < pages; ++i) free_pages_[i] = uint32_t(pages - 1 - i);  // pop_back gives page 0 first
  sequences_.resize(c.max_sequences);
  seq_generation_.assign(c.max_sequences, 0);
}

KvCache::~KvCache() = default;

// ---------------------------------------------------------------------------------------------
// Sequences

const KvCache::Sequence& KvCache::get(SequenceId seq) const {
  const uint32_t slot = seq & ((1u << kSlotBits) - 1);
  if (slot >= sequences_.size() || !sequences_[slot].live || seq_generation_[slot] != (seq >> kSlotBits))
    fail(ErrorCode::not_found, seq_name(seq) + " does not exist (never created, or removed)");
  return sequences_[slot];
}

KvCache::Sequence& KvCache::get(SequenceId seq) {
  return const_cast<Sequence&>(static_cast<const KvCache*>(this)->get(seq));
}

void KvCache::check_layer(uint32_t layer) const {
  if (layer >= config_.layers)
    fail(ErrorCode::invalid_argument, "layer " + std::to_string(layer) + " is out of range (the cache has " +
                                          std::to_string(config_.layers) + " layers)");
}

SequenceId KvCache::create_sequence() {
  for (uint32_t slot = 0; slot < sequences_.size(); ++slot) {
    if (sequences_[slot].live) continue;
    sequences_[slot] = Sequence{true, {}, std::vector<uint32_t>(config_.layers, 0)};
    return (seq_generation_[slot] << kSlotBits) | slot;
  }
  fail(ErrorCode::capacity, "cannot create a sequence: all " + std::to_string(config_.max_sequences) +
                                " sequence slots are in use (raise max_sequences)");
}

void KvCache::remove_sequence(SequenceId seq) {
  Sequence& s = get(seq);
  release_pages_beyond(s, 0);
  s = Sequence{};
  const uint32_t slot = seq & ((1u << kSlotBits) - 1);
  seq_generation_[slot] = (seq_generation_[slot] + 1) & 0xffffu;  // stale ids stop matching
}

uint32_t KvCache::length(SequenceId seq) const {
  const auto& l = get(seq).lengths;
  return *std::min_element(l.begin(), l.end());
}

uint32_t KvCache::length(SequenceId seq, uint32_t layer) const {
  check_layer(layer);
  return get(seq).lengths[layer];
}

bool KvCache::contains(SequenceId seq) const {
  const uint32_t slot = seq & ((1u << kSlotBits) - 1);
  return slot < sequences_.size() && sequences_[slot].live && seq_generation_[slot] == (seq >> kSlotBits);
}

std::vector<SequenceId> KvCache::sequences() const {
  std::vector<SequenceId> out;
  for (uint32_t slot = 0; slot < sequences_.size(); ++slot)
    if (sequences_[slot].live) out.push_back((seq_generation_[slot] << kSlotBits) | slot);
  return out;
}

void KvCache::truncate(SequenceId seq, uint32_t new_length) {
  Sequence& s = get(seq);
  const uint32_t current = length(seq);
  if (new_length > current)
    fail(ErrorCode::invalid_argument, "truncate: " + seq_name(seq) + " has " + std::to_string(current) +
                                          " tokens, cannot truncate to " + std::to_string(new_length));
  for (auto& l : s.lengths) l = std::min(l, new_length);
  release_pages_beyond(s, new_length);
}

uint32_t KvCache::page_table_offset(SequenceId seq) const {
  get(seq);
  return (seq & ((1u << kSlotBits) - 1)) * total_pages_;
}

const vk::Buffer& KvCache::buffer(uint32_t layer, Side side) const {
  check_layer(layer);
  return side == Side::k ? k_buffers_[layer] : v_buffers_[layer];
}

uint64_t KvCache::bytes_per_token() const {
  return uint64_t(config_.layers) * config_.kv_heads * (k_layout_.row.device_row_bytes() + v_layout_.row.device_row_bytes());
}

uint64_t KvCache::total_bytes() const {
  uint64_t total = page_table_.size();
  for (uint32_t l = 0; l < config_.layers; ++l) total += k_buffers_[l].size() + v_buffers_[l].size();
  return total;
}

// ---------------------------------------------------------------------------------------------
// Pages

uint32_t KvCache::reserve(Sequence& s, uint64_t tokens) {
  const uint64_t needed = (tokens + config_.page_size - 1) / config_.page_size;
  const uint32_t first_new = uint32_t(s.pages.size());
  if (needed <= s.pages.size()) return first_new;
  const uint64_t more = needed - s.pages.size();
  if (more > free_pages_.size())
    fail(ErrorCode::capacity, "cache full: " + std::to_string(tokens) + " positions need " + std::to_string(more) +
                                  " more pages of " + std::to_string(config_.page_size) + " tokens, " +
                                  std::to_string(free_pages_.size()) + " of " + std::to_string(total_pages_) +
                                  " are free");
  for (uint64_t i = 0; i < more; ++i) {
    s.pages.push_back(free_pages_.back());
    free_pages_.pop_back();
  }
  return first_new;
}

void KvCache::release_pages_beyond(Sequence& s, uint64_t tokens) {
  const uint64_t keep = (tokens + config_.page_size - 1) / config_.page_size;
  while (s.pages.size() > keep) {
    free_pages_.push_back(s.pages.back());
    s.pages.pop_back();
  }
}

void KvCache::record_page_table_update(vk::Recorder& r, SequenceId seq, uint32_t first_new) {
  const Sequence& s = get(seq);
  if (first_new >= s.pages.size()) return;
  const uint64_t offset = (uint64_t(page_table_offset(seq)) + first_new) * 4;
  r.update(page_table_, offset, std::as_bytes(std::span(s.pages).subspan(first_new)));
  r.barrier();
}

// ---------------------------------------------------------------------------------------------
// Append

void KvCache::record_quantize(vk::Recorder& r, SequenceId seq, uint32_t layer, Side side, uint32_t first_pos,
                              uint32_t n_tokens, VkBuffer src, uint64_t src_offset, RowFormat format,
                              uint64_t src_token_stride) {
  const PageLayout& l = layout(side);
  const auto& pipeline =
      ctx_->pipelines().get({"quantize", quantize_constants(l, format), 3, uint32_t(sizeof(QuantizePush))});
  const size_t eb = element_bytes(format);
  // The shader indexes 32-bit words from the binding's start; bind at a 16-byte aligned offset
  // (storage-buffer offset alignment) and pass the remainder in elements.
  const uint64_t aligned = src_offset & ~uint64_t(255);
  if ((src_offset - aligned) % eb != 0)
    fail(ErrorCode::invalid_argument, "append: source offset is not a multiple of the element size");
  // Workgroup counts are limited to 65535 per dimension: long prefills go in chunks.
  constexpr uint32_t kChunk = 65535;
  for (uint32_t done = 0; done < n_tokens; done += kChunk) {
    const uint64_t elem = (src_offset - aligned) / eb + uint64_t(done) * src_token_stride;
    if (elem > 0xffffffffull) fail(ErrorCode::invalid_argument, "append: source rows beyond 4G elements");
    QuantizePush push{uint32_t(elem), uint32_t(src_token_stride), config_.head_dim, page_table_offset(seq),
                      first_pos + done};
    r.bind(pipeline, {vk::BufferRange(src, aligned), buffer(layer, side), page_table_}, push);
    r.dispatch(std::min(kChunk, n_tokens - done), config_.kv_heads);
  }
}

void KvCache::append(SequenceId seq, uint32_t layer, uint32_t n_tokens, HostRows k, HostRows v) {
  check_layer(layer);
  append_host(seq, layer, 1, n_tokens, k, v);
}

void KvCache::append_all_layers(SequenceId seq, uint32_t n_tokens, HostRows k, HostRows v) {
  append_host(seq, 0, config_.layers, n_tokens, k, v);
}

void KvCache::append_host(SequenceId seq, uint32_t first_layer, uint32_t layer_count, uint32_t n_tokens, HostRows k,
                          HostRows v) {
  Sequence& s = get(seq);
  if (n_tokens == 0) return;
  if (!k.data || !v.data) fail(ErrorCode::invalid_argument, "append: K or V rows are null");
  const uint32_t per_token = config_.kv_heads * config_.head_dim;
  const size_t count = size_t(layer_count) * n_tokens * per_token;
  check_finite(k, count, per_token, "K");
  check_finite(v, count, per_token, "V");

  uint64_t furthest = 0;
  for (uint32_t l = first_layer; l < first_layer + layer_count; ++l)
    furthest = std::max<uint64_t>(furthest, uint64_t(s.lengths[l]) + n_tokens);
  if (furthest > 0xffffffffull) fail(ErrorCode::capacity, "append: sequence length would overflow");
  const uint32_t first_new = reserve(s, furthest);

  try {
    const size_t k_bytes = count * element_bytes(k.format), v_bytes = count * element_bytes(v.format);
    const size_t v_at = (k_bytes + 255) & ~size_t(255);
    if (!staging_ || staging_.size() < v_at + v_bytes)
      staging_ = vk::Buffer(*ctx_, std::max<uint64_t>(v_at + v_bytes, 2 * staging_.size()), vk::MemoryKind::upload);
    std::memcpy(staging_.mapped(), k.data, k_bytes);
    std::memcpy(static_cast<std::byte*>(staging_.mapped()) + v_at, v.data, v_bytes);

    ctx_->run([&](vk::Recorder& r) {
      record_page_table_update(r, seq, first_new);
      for (uint32_t i = 0; i < layer_count; ++i) {
        const uint32_t layer = first_layer + i;
        const uint64_t layer_elems = uint64_t(i) * n_tokens * per_token;
        record_quantize(r, seq, layer, Side::k, s.lengths[layer], n_tokens, staging_.handle(),
                        layer_elems * element_bytes(k.format), k.format, per_token);
        record_quantize(r, seq, layer, Side::v, s.lengths[layer], n_tokens, staging_.handle(),
                        v_at + layer_elems * element_bytes(v.format), v.format, per_token);
      }
      r.barrier();
    });
  } catch (...) {
    release_pages_beyond(s, *std::max_element(s.lengths.begin(), s.lengths.end()));
    throw;
  }
  for (uint32_t l = first_layer; l < first_layer + layer_count; ++l) s.lengths[l] += n_tokens;
}

void KvCache::record_append(vk::Recorder& r, SequenceId seq, uint32_t layer, uint32_t n_tokens, DeviceRows k,
                            DeviceRows v) {
  check_layer(layer);
  Sequence& s = get(seq);
  if (n_tokens == 0) return;
  if (!k.buffer || !v.buffer) fail(ErrorCode::invalid_argument, "record_append: K or V buffer is null");
  const uint32_t first_new = reserve(s, uint64_t(s.lengths[layer]) + n_tokens);
  const uint32_t per_token = config_.kv_heads * config_.head_dim;
  try {
    record_page_table_update(r, seq, first_new);
    record_quantize(r, seq, layer, Side::k, s.lengths[layer], n_tokens, k.buffer, k.offset, k.format, per_token);
    record_quantize(r, seq, layer, Side::v, s.lengths[layer], n_tokens, v.buffer, v.offset, v.format, per_token);
    r.barrier();
  } catch (...) {
    // A rejected append (e.g. a misaligned source offset) must not keep the pages it reserved. A
    // page-table update already recorded only names pages beyond the sequence's length: harmless.
    release_pages_beyond(s, *std::max_element(s.lengths.begin(), s.lengths.end()));
    throw;
  }
  s.lengths[layer] += n_tokens;
}

// ---------------------------------------------------------------------------------------------
// Export / import of reference bytes

namespace {

// Copy regions between a pool and a packed [bits rows][scale rows] staging area for positions
// [begin, end) of one head, one pair of regions per run of positions inside a page.
std::vector<VkBufferCopy> row_regions(const PageLayout& l, const std::vector<uint32_t>& pages, uint32_t head,
                                      uint32_t begin, uint32_t end, bool to_pool) {
  std::vector<VkBufferCopy> regions;
  const uint64_t n = end - begin;
  const uint64_t scales_at = n * l.row.bits_row_bytes;
  for (uint32_t pos = begin; pos < end;) {
    const uint32_t page = pages[pos / l.page_size], slot = pos % l.page_size;
    const uint32_t run = std::min(end - pos, l.page_size - slot);
    const uint64_t i = pos - begin;
    VkBufferCopy bits{l.bits_offset(page, head, slot), i * l.row.bits_row_bytes, uint64_t(run) * l.row.bits_row_bytes};
    VkBufferCopy scales{l.scales_offset(page, head, slot), scales_at + i * l.row.scale_row_bytes,
                        uint64_t(run) * l.row.scale_row_bytes};
    for (VkBufferCopy* c : {&bits, &scales}) {
      if (c->size == 0) continue;
      if (to_pool) std::swap(c->srcOffset, c->dstOffset);
      regions.push_back(*c);
    }
    pos += run;
  }
  return regions;
}

}  // namespace

std::vector<uint8_t> KvCache::export_rows(SequenceId seq, uint32_t layer, Side side, uint32_t head, uint32_t begin,
                                          uint32_t end) const {
  check_layer(layer);
  const Sequence& s = get(seq);
  if (head >= config_.kv_heads)
    fail(ErrorCode::invalid_argument, "export: head " + std::to_string(head) + " is out of range");
  if (begin > end || end > s.lengths[layer])
    fail(ErrorCode::invalid_argument, "export: range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                          ") is outside the " + std::to_string(s.lengths[layer]) +
                                          " tokens of layer " + std::to_string(layer));
  const PageLayout& l = layout(side);
  const uint64_t n = end - begin;
  std::vector<uint8_t> out(n * row_bytes(l.row.type, l.row.head_dim));
  if (n == 0) return out;
  vk::Buffer staging(*ctx_, n * l.row.device_row_bytes(), vk::MemoryKind::readback);
  const auto regions = row_regions(l, s.pages, head, begin, end, false);
  ctx_->run([&](vk::Recorder& r) {
    r.copy(buffer(layer, side).handle(), staging.handle(), regions);
    r.host_barrier();
  });
  const auto* bits = static_cast<const uint8_t*>(staging.mapped());
  const auto* scales = bits + n * l.row.bits_row_bytes;
  const size_t ref = row_bytes(l.row.type, l.row.head_dim);
  for (uint64_t i = 0; i < n; ++i)
    device_to_reference(l.row, bits + i * l.row.bits_row_bytes, scales + i * l.row.scale_row_bytes, out.data() + i * ref);
  return out;
}

void KvCache::import_rows(SequenceId seq, uint32_t layer, Side side, uint32_t head, uint32_t begin,
                          std::span<const uint8_t> reference_bytes) {
  check_layer(layer);
  Sequence& s = get(seq);
  if (head >= config_.kv_heads)
    fail(ErrorCode::invalid_argument, "import: head " + std::to_string(head) + " is out of range");
  const PageLayout& l = layout(side);
  const size_t ref = row_bytes(l.row.type, l.row.head_dim);
  if (reference_bytes.size() % ref != 0)
    fail(ErrorCode::invalid_argument, "import: " + std::to_string(reference_bytes.size()) +
                                          " bytes is not a whole number of " + std::to_string(ref) + "-byte rows");
  if (begin > s.lengths[layer])
    fail(ErrorCode::invalid_argument, "import: position " + std::to_string(begin) + " is beyond the " +
                                          std::to_string(s.lengths[layer]) + " tokens of layer " +
                                          std::to_string(layer));
  const uint64_t n = reference_bytes.size() / ref;
  if (n == 0) return;
  const uint64_t end = begin + n;
  if (end > 0xffffffffull) fail(ErrorCode::capacity, "import: sequence length would overflow");
  const uint32_t first_new = reserve(s, std::max<uint64_t>(end, *std::max_element(s.lengths.begin(), s.lengths.end())));
  try {
    vk::Buffer staging(*ctx_, n * l.row.device_row_bytes(), vk::MemoryKind::upload);
    auto* bits = static_cast<uint8_t*>(staging.mapped());
    auto* scales = bits + n * l.row.bits_row_bytes;
    for (uint64_t i = 0; i < n; ++i)
      reference_to_device(l.row, reference_bytes.data() + i * ref, bits + i * l.row.bits_row_bytes,
                          scales + i * l.row.scale_row_bytes);
    const auto regions = row_regions(l, s.pages, head, begin, uint32_t(end), true);
    ctx_->run([&](vk::Recorder& r) {
      record_page_table_update(r, seq, first_new);
      r.copy(staging.handle(), buffer(layer, side).handle(), regions);
      r.barrier();
    });
  } catch (...) {
    release_pages_beyond(s, *std::max_element(s.lengths.begin(), s.lengths.end()));
    throw;
  }
  s.lengths[layer] = std::max<uint32_t>(s.lengths[layer], uint32_t(end));
}

}  // namespace tkv
