// turbokv::Cache over tkv::KvCache.
#include "turbokv/cache.hpp"

#include <string>

#include "attention/api/convert.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"

namespace turbokv {
namespace {

// A device span must hold `elements` elements of its format from its offset.
void check_span(const DeviceSpan& s, uint64_t elements, const char* what) {
  detail::check_format(s.format, what);
  if (!s.buffer) tkv::fail(tkv::ErrorCode::invalid_argument, std::string(what) + ": the buffer is VK_NULL_HANDLE");
  const uint64_t need = elements * format_bytes(s.format);
  if (s.bytes < need)
    tkv::fail(tkv::ErrorCode::invalid_argument, std::string(what) + ": the span holds " + std::to_string(s.bytes) +
                                                    " bytes, the call needs " + std::to_string(need));
  if (s.offset % format_bytes(s.format))
    tkv::fail(tkv::ErrorCode::invalid_argument, std::string(what) + ": offset " + std::to_string(s.offset) +
                                                    " is not a multiple of the element size");
}

}  // namespace

Cache::Cache(const Engine& engine, const CacheConfig& config) : engine_(engine), config_(config) {
  engine.context();  // an empty engine handle throws here
  cache_ = std::make_shared<tkv::KvCache>(engine.ctx_, detail::to_internal(config));
}

tkv::KvCache& Cache::get() const {
  if (!cache_) tkv::fail(tkv::ErrorCode::invalid_argument, "cache: the handle is empty");
  return *cache_;
}

const CacheConfig& Cache::config() const {
  get();
  return config_;
}

Engine Cache::engine() const {
  get();
  return engine_;
}

SequenceId Cache::create_sequence() { return get().create_sequence(); }
void Cache::remove_sequence(SequenceId seq) { get().remove_sequence(seq); }
void Cache::truncate(SequenceId seq, uint32_t length) { get().truncate(seq, length); }
uint32_t Cache::length(SequenceId seq) const { return get().length(seq); }
uint32_t Cache::length(SequenceId seq, uint32_t layer) const { return get().length(seq, layer); }
bool Cache::contains(SequenceId seq) const { return get().contains(seq); }
std::vector<SequenceId> Cache::sequences() const { return get().sequences(); }

void Cache::append(SequenceId seq, uint32_t layer, uint32_t n_tokens, HostRows k, HostRows v) {
  get().append(seq, layer, n_tokens, {k.data, detail::row_format(k.format, "append K")},
               {v.data, detail::row_format(v.format, "append V")});
}

void Cache::append_all_layers(SequenceId seq, uint32_t n_tokens, HostRows k, HostRows v) {
  get().append_all_layers(seq, n_tokens, {k.data, detail::row_format(k.format, "append K")},
                          {v.data, detail::row_format(v.format, "append V")});
}

void Cache::record_append(VkCommandBuffer command_buffer, SequenceId seq, uint32_t layer, uint32_t n_tokens,
                          DeviceSpan k, DeviceSpan v) {
  auto& cache = get();
  if (!command_buffer)
    tkv::fail(tkv::ErrorCode::invalid_argument, "record_append: the command buffer is VK_NULL_HANDLE");
  cache.length(seq, layer);  // unknown sequence or layer: throws before anything is recorded
  if (n_tokens == 0) return;
  const uint64_t elements = uint64_t(n_tokens) * config_.kv_heads * config_.head_dim;
  check_span(k, elements, "record_append K");
  check_span(v, elements, "record_append V");
  tkv::vk::Recorder r(cache.context(), command_buffer);
  r.barrier();  // the host's compute / transfer writes of the rows -> our reads
  cache.record_append(r, seq, layer, n_tokens, {k.buffer, k.offset, tkv::RowFormat(uint32_t(k.format))},
                      {v.buffer, v.offset, tkv::RowFormat(uint32_t(v.format))});
}

uint64_t Cache::bytes_per_token() const { return get().bytes_per_token(); }
uint64_t Cache::total_bytes() const { return get().total_bytes(); }
uint64_t Cache::capacity_tokens() const { return get().capacity_tokens(); }
uint64_t Cache::free_tokens() const { return uint64_t(get().free_pages()) * get().config().page_size; }

}  // namespace turbokv
