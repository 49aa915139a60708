#include "kvcache/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/types.hpp"

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
  uint32_t n_tokens;  // rows of the dispatch
};

// Tokens per workgroup of shaders/quantize.comp (a subgroup each).
constexpr uint32_t kQuantizeTokensPerWorkgroup = 4;

// shaders/quantize.comp's specialization constants, in id order.
std::vector<uint32_t> quantize_constants(const PageLayout& l, RowFormat format, Side side, const DeviceCaps& caps) {
  return {uint32_t(l.row.type), l.row.head_dim, l.row.stored_dim,   l.row.groups,
          l.row.group_elems,    l.row.bits_row_bytes, l.page_size, l.kv_heads,
          format == RowFormat::f16 ? 1u : 0u, side == Side::v ? 1u : 0u, caps.smallest_subgroup(),
          kQuantizeTokensPerWorkgroup * caps.smallest_subgroup()};
}

size_t element_bytes(RowFormat f) { return f == RowFormat::f16 ? 2 : 4; }

// Rejects NaN / Inf before anything is written, naming where it is (rows of `layers` layers of
// n_tokens tokens each; the layer is named when there are several).
void check_finite(const HostRows& rows, size_t count, uint32_t per_token, uint32_t n_tokens, uint32_t layers,
                  const char* side) {
  for (size_t i = 0; i < count; ++i) {
    const float v = rows.format == RowFormat::f16 ? half_to_float(static_cast<const uint16_t*>(rows.data)[i])
                                                  : static_cast<const float*>(rows.data)[i];
    if (!std::isfinite(v)) {
      const size_t token = i / per_token;
      fail(ErrorCode::numeric, std::string("append: ") + side + " row value " + std::to_string(v) +
                                   (layers > 1 ? " in layer " + std::to_string(token / n_tokens) + "'s rows" : "") +
                                   " at token " + std::to_string(token % n_tokens) + ", element " +
                                   std::to_string(i % per_token) + " is not finite; nothing was appended");
    }
  }
}

void check_side(Side side, const char* call) {
  if (side != Side::k && side != Side::v)
    fail(ErrorCode::invalid_argument, std::string(call) + ": Side value " + std::to_string(uint32_t(side)) +
                                          " is neither k (0) nor v (1)");
}

void check_format(RowFormat format, const char* call, const char* side) {
  if (format != RowFormat::f32 && format != RowFormat::f16)
    fail(ErrorCode::invalid_argument, std::string(call) + ": " + side + " RowFormat value " +
                                          std::to_string(uint32_t(format)) + " is neither f32 (0) nor f16 (1)");
}

// Reference rows from outside (a file, another process) must not smuggle NaN / Inf into the
// cache: every f16 element, q8_0 scale and turbo norm must be finite.
void check_finite_reference(KvType type, uint32_t head_dim, std::span<const uint8_t> bytes) {
  const size_t rb = row_bytes(type, head_dim);
  const uint32_t blocks = blocks_per_row(type, head_dim), bb = block_bytes(type, head_dim);
  for (size_t r = 0; r < bytes.size() / rb; ++r) {
    const uint8_t* row = bytes.data() + r * rb;
    for (uint32_t b = 0; b < blocks; ++b) {
      const uint8_t* h = row + size_t(b) * bb;  // f16: every element; else the block's scale
      const float v = half_to_float(uint16_t(h[0] | (h[1] << 8)));
      if (!std::isfinite(v))
        fail(ErrorCode::numeric, "import: row " + std::to_string(r) + (type == KvType::f16 ? ", element " : ", block ") +
                                     std::to_string(b) + " of the " + std::string(type_name(type)) +
                                     " reference bytes holds " + std::to_string(v) + "; nothing was imported");
    }
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
  // Whole pages, without overflowing for capacity_tokens near 2^64.
  const uint64_t pages = c.capacity_tokens / c.page_size + (c.capacity_tokens % c.page_size != 0);
  const uint64_t page_bytes = std::max(k.page_bytes(), v.page_bytes());
  const uint64_t limit = std::min<uint64_t>(caps.max_storage_buffer_range, 0xffffffffull);
  if (pages > limit / page_bytes)  // pages * page_bytes > limit, without overflow
    fail(ErrorCode::capacity, "cache config: capacity_tokens " + std::to_string(c.capacity_tokens) +
                                  " needs one layer's pool of " + std::to_string(pages) + " pages of " +
                                  std::to_string(page_bytes) + " bytes, above this device's limit of " +
                                  std::to_string(limit) + " bytes per buffer; lower capacity_tokens (at most " +
                                  std::to_string(limit / page_bytes * c.page_size) + " tokens here)");
  // pages <= 2^32 / 16 from here on: the products below fit 64 bits (layers < 2^32).
  const uint64_t table_bytes = uint64_t(c.max_sequences) * pages * 4;
  if (table_bytes > limit)
    fail(ErrorCode::capacity, "cache config: the page table (max_sequences " + std::to_string(c.max_sequences) +
                                  " x " + std::to_string(pages) + " pages x 4 bytes) exceeds this device's limit of " +
                                  std::to_string(limit) + " bytes per buffer; lower max_sequences or capacity_tokens");
  const uint64_t per_layer = pages * (k.page_bytes() + v.page_bytes());  // < 2^34
  const bool huge = per_layer > (UINT64_MAX - table_bytes) / c.layers;
  const uint64_t need = huge ? UINT64_MAX : c.layers * per_layer + table_bytes;
  if (uint64_t have = caps.device_local_bytes(); have && need > have)
    fail(ErrorCode::capacity, "cache config: needs " + (huge ? std::string("more than 2^64") : std::to_string(need)) +
                                  " bytes of device memory (capacity_tokens " + std::to_string(c.capacity_tokens) +
                                  ", " + std::to_string(c.layers) + " layers), " + caps.name + " has " +
                                  std::to_string(have));
}

KvCache::KvCache(std::shared_ptr<vk::Context> ctx, const CacheConfig& config) : ctx_(std::move(ctx)), config_(config) {
  if (!ctx_) fail(ErrorCode::invalid_argument, "cache: the Vulkan context is null");
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
  check_side(side, "buffer");
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

void KvCache::check_room(const Sequence& s, uint64_t tokens) const {
  const uint64_t needed = tokens / config_.page_size + (tokens % config_.page_size != 0);
  if (needed <= s.pages.size()) return;
  const uint64_t more = needed - s.pages.size();
  if (more > free_pages_.size())
    fail(ErrorCode::capacity, "cache full: " + std::to_string(tokens) + " positions need " + std::to_string(more) +
                                  " more pages of " + std::to_string(config_.page_size) + " tokens, " +
                                  std::to_string(free_pages_.size()) + " of " + std::to_string(total_pages_) +
                                  " are free");
}

uint32_t KvCache::reserve(Sequence& s, uint64_t tokens) {
  check_room(s, tokens);
  const uint64_t needed = tokens / config_.page_size + (tokens % config_.page_size != 0);
  const uint32_t first_new = uint32_t(s.pages.size());
  if (needed <= s.pages.size()) return first_new;
  const uint64_t more = needed - s.pages.size();
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
      ctx_->pipelines().get({"quantize", quantize_constants(l, format, side, ctx_->caps()), 3, uint32_t(sizeof(QuantizePush))});
  const size_t eb = element_bytes(format);
  // The shader indexes 32-bit words from the binding's start; bind at a 16-byte aligned offset
  // (storage-buffer offset alignment) and pass the remainder in elements.
  const uint64_t aligned = src_offset & ~uint64_t(255);
  if ((src_offset - aligned) % eb != 0)
    fail(ErrorCode::invalid_argument, "append: source offset is not a multiple of the element size");
  // Workgroup counts are limited to 65535 per dimension: long prefills go in chunks.
  constexpr uint32_t kChunk = 65535 * kQuantizeTokensPerWorkgroup;
  for (uint32_t done = 0; done < n_tokens; done += kChunk) {
    const uint64_t elem = (src_offset - aligned) / eb + uint64_t(done) * src_token_stride;
    if (elem > 0xffffffffull) fail(ErrorCode::invalid_argument, "append: source rows beyond 4G elements");
    const uint32_t count = std::min(kChunk, n_tokens - done);
    QuantizePush push{uint32_t(elem), uint32_t(src_token_stride), config_.head_dim, page_table_offset(seq),
                      first_pos + done, count};
    r.bind(pipeline, {vk::BufferRange(src, aligned), buffer(layer, side), page_table_}, push);
    r.dispatch((count + kQuantizeTokensPerWorkgroup - 1) / kQuantizeTokensPerWorkgroup, config_.kv_heads);
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
  check_format(k.format, "append", "K");
  check_format(v.format, "append", "V");
  if (n_tokens == 0) return;
  if (!k.data) fail(ErrorCode::invalid_argument, "append: K rows are null (n_tokens " + std::to_string(n_tokens) + ")");
  if (!v.data) fail(ErrorCode::invalid_argument, "append: V rows are null (n_tokens " + std::to_string(n_tokens) + ")");
  const uint32_t per_token = config_.kv_heads * config_.head_dim;
  const size_t count = size_t(layer_count) * n_tokens * per_token;

  uint64_t furthest = 0;
  for (uint32_t l = first_layer; l < first_layer + layer_count; ++l)
    furthest = std::max<uint64_t>(furthest, uint64_t(s.lengths[l]) + n_tokens);
  if (furthest > 0xffffffffull) fail(ErrorCode::capacity, "append: sequence length would overflow");
  // Room first: an n_tokens beyond the capacity must fail before the rows are read (the caller's
  // buffer need not be that long).
  check_room(s, furthest);
  check_finite(k, count, per_token, n_tokens, layer_count, "K");
  check_finite(v, count, per_token, n_tokens, layer_count, "V");
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
  if (&r.context() != ctx_.get())
    fail(ErrorCode::invalid_argument, "record_append: the recorder belongs to another Vulkan context (" +
                                          r.context().caps().name + ") than the cache's (" + ctx_->caps().name + ")");
  check_format(k.format, "record_append", "K");
  check_format(v.format, "record_append", "V");
  if (n_tokens == 0) return;
  if (!k.buffer) fail(ErrorCode::invalid_argument, "record_append: K buffer is null");
  if (!v.buffer) fail(ErrorCode::invalid_argument, "record_append: V buffer is null");
  record_extend(r, seq, layer, n_tokens);
  const uint32_t at = s.lengths[layer] - n_tokens, per_token = config_.kv_heads * config_.head_dim;
  try {
    record_quantize(r, seq, layer, Side::k, at, n_tokens, k.buffer, k.offset, k.format, per_token);
    record_quantize(r, seq, layer, Side::v, at, n_tokens, v.buffer, v.offset, v.format, per_token);
    r.barrier();
  } catch (...) {
    // A rejected append (e.g. a misaligned source offset) must not keep its length or the pages
    // it reserved.
    retract_extend(seq, layer, n_tokens);
    throw;
  }
}

void KvCache::record_extend(vk::Recorder& r, SequenceId seq, uint32_t layer, uint32_t n_tokens) {
  check_layer(layer);
  Sequence& s = get(seq);
  if (uint64_t(s.lengths[layer]) + n_tokens > 0xffffffffull) fail(ErrorCode::capacity, "append: sequence length would overflow");
  const uint32_t first_new = reserve(s, uint64_t(s.lengths[layer]) + n_tokens);
  try {
    record_page_table_update(r, seq, first_new);
  } catch (...) {
    // A page-table update already recorded only names pages beyond the sequence's length: harmless.
    release_pages_beyond(s, *std::max_element(s.lengths.begin(), s.lengths.end()));
    throw;
  }
  s.lengths[layer] += n_tokens;
}

void KvCache::retract_extend(SequenceId seq, uint32_t layer, uint32_t n_tokens) {
  Sequence& s = get(seq);
  s.lengths[layer] -= std::min(s.lengths[layer], n_tokens);
  release_pages_beyond(s, *std::max_element(s.lengths.begin(), s.lengths.end()));
}

// ---------------------------------------------------------------------------------------------
// Export / import of reference bytes

namespace {

// Copy regions between a pool and a packed [bits rows][scale rows] staging area for positions
// [begin, end) of one head, one pair of regions per run of positions inside a page (row layouts).
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

// The tiles that hold positions [begin, end) of one head (tile layouts), packed one after the
// other in a staging area: one copy region per page, and where each position's tile landed.
struct TileRuns {
  std::vector<VkBufferCopy> regions;  // pool -> staging
  std::vector<uint64_t> at;           // per position: its tile's offset in the staging area
  uint64_t bytes = 0;
};

TileRuns tile_runs(const PageLayout& l, const std::vector<uint32_t>& pages, uint32_t head, uint32_t begin,
                   uint32_t end) {
  TileRuns r;
  const uint64_t tile = TileLayout::kTokens * uint64_t(l.row.device_row_bytes());
  for (uint32_t pos = begin; pos < end;) {
    const uint32_t page = pages[pos / l.page_size], slot = pos % l.page_size;
    const uint32_t run = std::min(end - pos, l.page_size - slot);
    const uint32_t first = slot / TileLayout::kTokens, last = (slot + run - 1) / TileLayout::kTokens;
    r.regions.push_back({l.tile_offset(page, head, slot), r.bytes, (last - first + 1) * tile});
    for (uint32_t i = 0; i < run; ++i) r.at.push_back(r.bytes + ((slot + i) / TileLayout::kTokens - first) * tile);
    r.bytes += (last - first + 1) * tile;
    pos += run;
  }
  return r;
}

}  // namespace

std::vector<uint8_t> KvCache::export_rows(SequenceId seq, uint32_t layer, Side side, uint32_t head, uint32_t begin,
                                          uint32_t end) const {
  check_layer(layer);
  check_side(side, "export");
  const Sequence& s = get(seq);
  if (head >= config_.kv_heads)
    fail(ErrorCode::invalid_argument, "export: head " + std::to_string(head) + " is out of range (the cache has " +
                                          std::to_string(config_.kv_heads) + " KV heads)");
  if (begin > end || end > s.lengths[layer])
    fail(ErrorCode::invalid_argument, "export: range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                          ") is outside the " + std::to_string(s.lengths[layer]) +
                                          " tokens of layer " + std::to_string(layer));
  const PageLayout& l = layout(side);
  const uint64_t n = end - begin;
  const size_t ref = row_bytes(l.row.type, l.row.head_dim);
  std::vector<uint8_t> out(n * ref);
  if (n == 0) return out;
  if (l.tiled()) {
    const TileRuns runs = tile_runs(l, s.pages, head, begin, end);
    vk::Buffer staging(*ctx_, runs.bytes, vk::MemoryKind::readback);
    ctx_->run([&](vk::Recorder& r) {
      r.copy(buffer(layer, side).handle(), staging.handle(), runs.regions);
      r.host_barrier();
    });
    const auto* tiles = static_cast<const uint8_t*>(staging.mapped());
    for (uint64_t i = 0; i < n; ++i)
      tile_to_reference(l.row, side, tiles + runs.at[i], (begin + i) % TileLayout::kTokens, out.data() + i * ref);
    return out;
  }
  vk::Buffer staging(*ctx_, n * l.row.device_row_bytes(), vk::MemoryKind::readback);
  const auto regions = row_regions(l, s.pages, head, begin, end, false);
  ctx_->run([&](vk::Recorder& r) {
    r.copy(buffer(layer, side).handle(), staging.handle(), regions);
    r.host_barrier();
  });
  const auto* bits = static_cast<const uint8_t*>(staging.mapped());
  const auto* scales = bits + n * l.row.bits_row_bytes;
  for (uint64_t i = 0; i < n; ++i)
    device_to_reference(l.row, bits + i * l.row.bits_row_bytes, scales + i * l.row.scale_row_bytes, out.data() + i * ref);
  return out;
}

void KvCache::import_rows(SequenceId seq, uint32_t layer, Side side, uint32_t head, uint32_t begin,
                          std::span<const uint8_t> reference_bytes) {
  check_layer(layer);
  check_side(side, "import");
  Sequence& s = get(seq);
  if (head >= config_.kv_heads)
    fail(ErrorCode::invalid_argument, "import: head " + std::to_string(head) + " is out of range (the cache has " +
                                          std::to_string(config_.kv_heads) + " KV heads)");
  if (!reference_bytes.data() && !reference_bytes.empty())
    fail(ErrorCode::invalid_argument, "import: reference bytes are null (size " +
                                          std::to_string(reference_bytes.size()) + ")");
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
  check_room(s, std::max<uint64_t>(end, *std::max_element(s.lengths.begin(), s.lengths.end())));
  check_finite_reference(l.row.type, l.row.head_dim, reference_bytes);
  const uint32_t first_new = reserve(s, std::max<uint64_t>(end, *std::max_element(s.lengths.begin(), s.lengths.end())));
  try {
    if (l.tiled()) {
      // The rows' tiles hold other tokens' bits too: read them, write the rows in, write them back
      // (through one host-coherent staging buffer).
      const TileRuns runs = tile_runs(l, s.pages, head, begin, uint32_t(end));
      vk::Buffer staging(*ctx_, runs.bytes, vk::MemoryKind::readback);
      ctx_->run([&](vk::Recorder& r) {
        record_page_table_update(r, seq, first_new);
        r.copy(buffer(layer, side).handle(), staging.handle(), runs.regions);
        r.host_barrier();
      });
      auto* tiles = static_cast<uint8_t*>(staging.mapped());
      for (uint64_t i = 0; i < n; ++i)
        reference_to_tile(l.row, side, reference_bytes.data() + i * ref, (begin + i) % TileLayout::kTokens,
                          tiles + runs.at[i]);
      auto regions = runs.regions;
      for (VkBufferCopy& c : regions) std::swap(c.srcOffset, c.dstOffset);
      ctx_->run([&](vk::Recorder& r) {
        r.copy(staging.handle(), buffer(layer, side).handle(), regions);
        r.barrier();
      });
    } else {
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
    }
  } catch (...) {
    release_pages_beyond(s, *std::max_element(s.lengths.begin(), s.lengths.end()));
    throw;
  }
  s.lengths[layer] = std::max<uint32_t>(s.lengths[layer], uint32_t(end));
}

}  // namespace tkv
