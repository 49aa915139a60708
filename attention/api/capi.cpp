// The C API (include/turbokv/turbokv.h) over the C++ API: each handle holds a C++ handle, each
// function runs inside detail::guarded so that nothing is thrown across the boundary.
#include "turbokv/turbokv.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "attention/api/capi_status.hpp"
#include "kvcache/error.hpp"
#include "turbokv/turbokv.hpp"

struct tkv_engine {
  turbokv::Engine engine;
};
struct tkv_cache {
  turbokv::Cache cache;
};
struct tkv_decoder {
  turbokv::Decoder decoder;
};

namespace {

// A C enum from the caller as its integer: C code may store any int in one, and reading an
// out-of-range value through the C++ enum type is undefined behaviour (UBSan reports it), so the
// bytes are copied; the C++ layer then rejects unknown values with a clear error.
template <class E>
uint32_t raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(uint32_t), "C enums are int-sized");
  uint32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

using turbokv::detail::guarded;

template <class T>
T& need(T* p, const char* what) {
  if (!p) tkv::fail(tkv::ErrorCode::invalid_argument, std::string(what) + " is NULL");
  return *p;
}

std::string need_path(const char* path) {
  if (!path) tkv::fail(tkv::ErrorCode::invalid_argument, "path is NULL");
  return path;
}

void copy_string(char* dst, size_t size, const std::string& src) {
  const size_t n = std::min(size - 1, src.size());
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

turbokv::EngineOptions engine_options(const tkv_engine_options* o) {
  turbokv::EngineOptions r;
  if (!o) return r;
  r.device = o->device ? o->device : "";
  r.cache_dir = o->cache_dir ? o->cache_dir : "";
  r.persist_pipeline_cache = o->persist_pipeline_cache != 0;
  r.validation = o->validation != 0;
  r.wait_timeout_ms = o->wait_timeout_ms;
  return r;
}

turbokv::DecodeOptions decode_options(const tkv_decode_options* o) {
  turbokv::DecodeOptions r;
  if (!o) return r;
  r.scale = o->scale;
  r.softcap = o->softcap;
  r.window = o->window;
  r.splits = o->splits;
  r.variant = turbokv::Variant(raw_enum(o->variant));
  return r;
}

turbokv::DeviceSpan span(const tkv_device_span* s, const char* what) {
  const auto& v = need(s, what);
  return {v.buffer, v.offset, v.bytes, turbokv::Format(raw_enum(v.format))};
}

turbokv::SequenceList sequence_list(const uint32_t* sequences, uint32_t batch) {
  if (batch && !sequences) tkv::fail(tkv::ErrorCode::invalid_argument, "sequences is NULL");
  return {sequences, batch};
}

// Stores a new handle in *out (set to NULL first, so that it is NULL on failure).
template <class Handle, class Make>
tkv_status create(const char* function, Handle** out, Make&& make) {
  if (out) *out = nullptr;
  return guarded(function, [&] {
    need(out, "the output handle pointer");
    *out = new Handle{make()};
  });
}

}  // namespace

extern "C" {

const char* tkv_version(void) { return turbokv::version().data(); }

// ---- Engine

void tkv_engine_options_init(tkv_engine_options* options) {
  if (!options) return;
  *options = tkv_engine_options{};
  options->persist_pipeline_cache = 1;
}

tkv_status tkv_engine_create(const tkv_engine_options* options, tkv_engine** engine) {
  return create("tkv_engine_create", engine, [&] { return turbokv::Engine::create(engine_options(options)); });
}

tkv_status tkv_engine_adopt(const tkv_vulkan_device* device, const tkv_engine_options* options, tkv_engine** engine) {
  return create("tkv_engine_adopt", engine, [&] {
    const auto& d = need(device, "device");
    turbokv::VulkanDevice v;
    v.instance = d.instance;
    v.instance_api_version = d.instance_api_version;
    v.physical_device = d.physical_device;
    v.device = d.device;
    v.create_info = d.create_info;
    v.queue = d.queue;
    v.queue_family_index = d.queue_family_index;
    return turbokv::Engine::adopt(v, engine_options(options));
  });
}

tkv_status tkv_get_device_requirements(VkInstance instance, VkPhysicalDevice physical_device,
                                       tkv_device_requirements* requirements) {
  return guarded("tkv_get_device_requirements", [&] {
    auto& out = need(requirements, "requirements");
    const auto r = turbokv::Engine::requirements(instance, physical_device);
    const size_t capacity = sizeof(out.extensions) / sizeof(out.extensions[0]);
    if (r.extensions.size() > capacity || r.optional_extensions.size() > capacity)
      tkv::fail(tkv::ErrorCode::invalid_argument, "more extensions than tkv_device_requirements holds");
    out = tkv_device_requirements{};
    out.extension_count = uint32_t(r.extensions.size());
    std::copy(r.extensions.begin(), r.extensions.end(), out.extensions);
    out.optional_extension_count = uint32_t(r.optional_extensions.size());
    std::copy(r.optional_extensions.begin(), r.optional_extensions.end(), out.optional_extensions);
    out.shader_int16 = r.shader_int16;
    out.shader_int64 = r.shader_int64;
    out.storage_buffer_16bit_access = r.storage_buffer_16bit_access;
    out.storage_buffer_8bit_access = r.storage_buffer_8bit_access;
    out.shader_float16 = r.shader_float16;
    out.shader_int8 = r.shader_int8;
    out.vulkan_memory_model = r.vulkan_memory_model;
  });
}

void tkv_engine_destroy(tkv_engine* engine) { delete engine; }

tkv_status tkv_engine_get_info(const tkv_engine* engine, tkv_device_info* info) {
  return guarded("tkv_engine_get_info", [&] {
    const auto i = need(engine, "engine").engine.info();
    auto& out = need(info, "info");
    out = tkv_device_info{};
    copy_string(out.name, sizeof(out.name), i.name);
    copy_string(out.device_class, sizeof(out.device_class), i.device_class);
    copy_string(out.driver_name, sizeof(out.driver_name), i.driver_name);
    out.vendor_id = i.vendor_id;
    out.device_id = i.device_id;
    out.api_version = i.api_version;
    out.subgroup_size = i.subgroup_size;
    out.compute_units = i.compute_units;
    out.device_local_bytes = i.device_local_bytes;
    out.adopted = i.adopted ? 1 : 0;
  });
}

tkv_status tkv_engine_record_barrier(const tkv_engine* engine, VkCommandBuffer command_buffer) {
  return guarded("tkv_engine_record_barrier",
                 [&] { need(engine, "engine").engine.record_barrier(command_buffer); });
}

// ---- Cache

void tkv_cache_config_init(tkv_cache_config* config) {
  if (!config) return;
  *config = tkv_cache_config{};
  config->k_type = TKV_KV_F16;
  config->v_type = TKV_KV_F16;
  config->page_size = 64;
  config->max_sequences = 64;
}

tkv_status tkv_cache_create(tkv_engine* engine, const tkv_cache_config* config, tkv_cache** cache) {
  return create("tkv_cache_create", cache, [&] {
    const auto& c = need(config, "config");
    turbokv::CacheConfig cfg;
    cfg.layers = c.layers;
    cfg.kv_heads = c.kv_heads;
    cfg.head_dim = c.head_dim;
    cfg.k_type = turbokv::KvType(raw_enum(c.k_type));
    cfg.v_type = turbokv::KvType(raw_enum(c.v_type));
    cfg.page_size = c.page_size;
    cfg.capacity_tokens = c.capacity_tokens;
    cfg.max_sequences = c.max_sequences;
    return turbokv::Cache(need(engine, "engine").engine, cfg);
  });
}

void tkv_cache_destroy(tkv_cache* cache) { delete cache; }

tkv_status tkv_cache_create_sequence(tkv_cache* cache, uint32_t* sequence) {
  return guarded("tkv_cache_create_sequence", [&] {
    auto& c = need(cache, "cache").cache;
    need(sequence, "sequence") = c.create_sequence();
  });
}

tkv_status tkv_cache_remove_sequence(tkv_cache* cache, uint32_t sequence) {
  return guarded("tkv_cache_remove_sequence", [&] { need(cache, "cache").cache.remove_sequence(sequence); });
}

tkv_status tkv_cache_truncate(tkv_cache* cache, uint32_t sequence, uint32_t length) {
  return guarded("tkv_cache_truncate", [&] { need(cache, "cache").cache.truncate(sequence, length); });
}

tkv_status tkv_cache_length(const tkv_cache* cache, uint32_t sequence, uint32_t layer, uint32_t* length) {
  return guarded("tkv_cache_length", [&] {
    const auto& c = need(cache, "cache").cache;
    auto& out = need(length, "length");
    out = layer == TKV_ALL_LAYERS ? c.length(sequence) : c.length(sequence, layer);
  });
}

tkv_status tkv_cache_append(tkv_cache* cache, uint32_t sequence, uint32_t layer, uint32_t n_tokens, const void* k,
                            tkv_format k_format, const void* v, tkv_format v_format) {
  return guarded("tkv_cache_append", [&] {
    auto& c = need(cache, "cache").cache;
    const turbokv::HostRows kr{k, turbokv::Format(raw_enum(k_format))}, vr{v, turbokv::Format(raw_enum(v_format))};
    if (layer == TKV_ALL_LAYERS)
      c.append_all_layers(sequence, n_tokens, kr, vr);
    else
      c.append(sequence, layer, n_tokens, kr, vr);
  });
}

tkv_status tkv_cache_record_append(tkv_cache* cache, VkCommandBuffer command_buffer, uint32_t sequence, uint32_t layer,
                                   uint32_t n_tokens, const tkv_device_span* k, const tkv_device_span* v) {
  return guarded("tkv_cache_record_append", [&] {
    need(cache, "cache").cache.record_append(command_buffer, sequence, layer, n_tokens, span(k, "k"), span(v, "v"));
  });
}

tkv_status tkv_cache_get_memory(const tkv_cache* cache, tkv_cache_memory* memory) {
  return guarded("tkv_cache_get_memory", [&] {
    const auto& c = need(cache, "cache").cache;
    auto& out = need(memory, "memory");
    out.bytes_per_token = c.bytes_per_token();
    out.total_bytes = c.total_bytes();
    out.capacity_tokens = c.capacity_tokens();
    out.free_tokens = c.free_tokens();
  });
}

// ---- Cache files

tkv_status tkv_cache_save(const tkv_cache* cache, const uint32_t* sequences, uint32_t count, const char* path) {
  return guarded("tkv_cache_save", [&] {
    const auto& c = need(cache, "cache").cache;
    c.save(need_path(path), sequence_list(sequences, count));
  });
}

tkv_status tkv_cache_save_all(const tkv_cache* cache, const char* path) {
  return guarded("tkv_cache_save_all", [&] { need(cache, "cache").cache.save_all(need_path(path)); });
}

tkv_status tkv_cache_load(tkv_cache* cache, const char* path, uint32_t* sequences, uint32_t capacity,
                          uint32_t* count) {
  if (count) *count = 0;
  uint32_t file_sequences = 0;  // reported in *count when the array is too small
  const tkv_status status = guarded("tkv_cache_load", [&] {
    auto& c = need(cache, "cache").cache;
    const std::string file = need_path(path);
    need(count, "count");
    if (capacity && !sequences)
      tkv::fail(tkv::ErrorCode::invalid_argument, "sequences is NULL with capacity " + std::to_string(capacity));
    const auto too_small = [&](size_t n) {
      file_sequences = uint32_t(n);
      tkv::fail(tkv::ErrorCode::capacity, "cache file " + file + ": holds " + std::to_string(n) +
                                              " sequences, the sequences array has room for " +
                                              std::to_string(capacity) + "; nothing was loaded");
    };
    // A load can return at most as many ids as the cache has free slots: only a smaller array
    // needs the file's count first (inspect reads the file once more).
    const uint64_t free_slots = c.config().max_sequences - c.sequences().size();
    if (capacity < free_slots) {
      const auto n = turbokv::inspect_cache_file(file).lengths.size();
      if (n > capacity) too_small(n);
    }
    const auto ids = c.load(file);
    if (ids.size() > capacity) {  // the file was replaced since it was inspected
      for (const auto id : ids) c.remove_sequence(id);
      too_small(ids.size());
    }
    for (size_t i = 0; i < ids.size(); ++i) sequences[i] = ids[i];
    *count = uint32_t(ids.size());
  });
  if (status != TKV_SUCCESS && count) *count = file_sequences;
  return status;
}

tkv_status tkv_cache_file_inspect(const char* path, tkv_cache_file_info* info) {
  if (info) *info = tkv_cache_file_info{};
  return guarded("tkv_cache_file_inspect", [&] {
    const std::string file = need_path(path);
    auto& out = need(info, "info");
    const auto f = turbokv::inspect_cache_file(file);
    out.version = f.version;
    out.k_type = tkv_kv_type(uint32_t(f.k_type));
    out.v_type = tkv_kv_type(uint32_t(f.v_type));
    out.head_dim = f.head_dim;
    out.kv_heads = f.kv_heads;
    out.layers = f.layers;
    out.sequence_count = uint32_t(f.lengths.size());
    for (const auto& lengths : f.lengths)
      out.tokens += lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    out.file_bytes = f.file_bytes;
  });
}

// ---- Decoder

void tkv_decode_options_init(tkv_decode_options* options) {
  if (!options) return;
  *options = tkv_decode_options{};
  options->variant = TKV_VARIANT_AUTOMATIC;
}

tkv_status tkv_decoder_create(tkv_cache* cache, uint32_t q_heads, tkv_decoder** decoder) {
  return create("tkv_decoder_create", decoder,
                [&] { return turbokv::Decoder(need(cache, "cache").cache, q_heads); });
}

void tkv_decoder_destroy(tkv_decoder* decoder) { delete decoder; }

tkv_status tkv_decode(tkv_decoder* decoder, uint32_t layer, const uint32_t* sequences, uint32_t batch, uint32_t m,
                      const void* q, size_t q_bytes, tkv_format q_format, void* out, size_t out_bytes,
                      tkv_format out_format, const tkv_decode_options* options) {
  return guarded("tkv_decode", [&] {
    need(decoder, "decoder").decoder.decode(layer, sequence_list(sequences, batch), m,
                                            {q, q_bytes, turbokv::Format(raw_enum(q_format))},
                                            {out, out_bytes, turbokv::Format(raw_enum(out_format))},
                                            decode_options(options));
  });
}

tkv_status tkv_decoder_record(tkv_decoder* decoder, VkCommandBuffer command_buffer, uint32_t layer,
                              const uint32_t* sequences, uint32_t batch, uint32_t m, const tkv_device_span* q,
                              const tkv_device_span* out, const tkv_decode_options* options) {
  return guarded("tkv_decoder_record", [&] {
    need(decoder, "decoder").decoder.record(command_buffer, layer, sequence_list(sequences, batch), m, span(q, "q"),
                                            span(out, "out"), decode_options(options));
  });
}

tkv_status tkv_decoder_record_append_decode(tkv_decoder* decoder, VkCommandBuffer command_buffer, uint32_t layer,
                                            const uint32_t* sequences, uint32_t batch, uint32_t m,
                                            const tkv_device_span* k, const tkv_device_span* v,
                                            const tkv_device_span* q, const tkv_device_span* out,
                                            const tkv_decode_options* options) {
  return guarded("tkv_decoder_record_append_decode", [&] {
    need(decoder, "decoder").decoder.record_append_decode(command_buffer, layer, sequence_list(sequences, batch), m,
                                                          span(k, "k"), span(v, "v"), span(q, "q"), span(out, "out"),
                                                          decode_options(options));
  });
}

tkv_status tkv_decoder_plan(const tkv_decoder* decoder, uint32_t layer, const uint32_t* sequences, uint32_t batch,
                            uint32_t m, const tkv_decode_options* options, tkv_plan* plan) {
  return guarded("tkv_decoder_plan", [&] {
    const auto p = need(decoder, "decoder").decoder.plan(layer, sequence_list(sequences, batch), m,
                                                         decode_options(options));
    auto& out = need(plan, "plan");
    out = tkv_plan{};
    out.splits = p.splits;
    out.chunk = p.chunk;
    out.workgroup = p.workgroup;
    out.workgroups = p.workgroups;
    out.shared_bytes = p.shared_bytes;
    out.variant = tkv_variant(uint32_t(p.variant));
    copy_string(out.description, sizeof(out.description), p.description);
  });
}

}  // extern "C"
