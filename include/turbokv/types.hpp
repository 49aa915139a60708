// The value types of the public C++ API: element types and formats, configurations, options, views
// of host and device memory, and what the engine reports (device, plan). Plain data, no handles
// owned: copy them freely. C++17 or later.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "turbokv/error.hpp"

namespace turbokv {

// The library's version, "MAJOR.MINOR.PATCH".
std::string_view version();

// How the cache stores K or V (../shared/spec/kv-formats.md): bits per element 16, 8.5, 2.125,
// 3.125, 4.25. turbo types rotate each 128-element group (64 when head_dim % 128 != 0).
enum class KvType : uint32_t { f16 = 0, q8_0 = 1, turbo2 = 2, turbo3 = 3, turbo4 = 4 };
std::string_view kv_type_name(KvType type);  // "turbo3"
// Throws Error(invalid_argument) naming the unknown name and listing the valid ones.
KvType parse_kv_type(std::string_view name);

// Element format of rows, queries and outputs the caller hands over: f32, or IEEE binary16 (f16,
// stored as uint16_t).
enum class Format : uint32_t { f32 = 0, f16 = 1 };
inline constexpr size_t format_bytes(Format format) { return format == Format::f16 ? 2 : 4; }

// How the decode kernel turns stored bits into values; automatic: the dispatch policy's choice
// (device, K type, context depth; `turboprof tune` writes a device's policy file). Results agree
// across variants to float rounding; only speed differs.
enum class Variant : uint32_t { lut8 = 0, mag4 = 1, alu = 2, reglut = 3, qlut = 4, smem = 5, tc = 6, automatic = 255 };
std::string_view variant_name(Variant variant);
Variant parse_variant(std::string_view name);  // throws Error(invalid_argument)

// A sequence of the cache (a request's tokens). Ids of removed sequences are never valid again
// for the cache that issued them (until 65536 reuses of a slot).
using SequenceId = uint32_t;

// A view of the sequences of one call (the batch), in order: a vector, an array, a pointer and a
// count, or one id (batch 1). Does not own: the ids must outlive the call it is passed to.
class SequenceList {
 public:
  SequenceList(const SequenceId* ids, size_t count) : ids_(ids), count_(count) {}
  SequenceList(const std::vector<SequenceId>& ids) : ids_(ids.data()), count_(ids.size()) {}
  template <size_t N>
  SequenceList(const SequenceId (&ids)[N]) : ids_(ids), count_(N) {}
  SequenceList(const SequenceId& one) : ids_(&one), count_(1) {}
  const SequenceId* data() const { return ids_; }
  size_t size() const { return count_; }

 private:
  const SequenceId* ids_;
  size_t count_;
};

// The cache's shape. Memory: capacity_tokens x bytes_per_token (Cache::bytes_per_token), held by
// the cache from creation, plus a page table of max_sequences x pages x 4 bytes.
struct CacheConfig {
  uint32_t layers = 0;
  uint32_t kv_heads = 0;          // KV heads this cache holds (a shard's share of the model's)
  uint32_t head_dim = 0;          // 1..256
  KvType k_type = KvType::f16;
  KvType v_type = KvType::f16;
  uint32_t page_size = 64;        // tokens per page; a multiple of 16, at most 4096
  uint64_t capacity_tokens = 0;   // across all sequences, rounded up to whole pages
  uint32_t max_sequences = 64;    // live sequences at once, 1..65536
};

// What a cache file's header says (Cache::save writes one, inspect_cache_file reads it). A file
// loads into a cache whose k_type, v_type, head_dim, kv_heads and layers equal these; its page
// size and capacity may differ.
struct CacheFileInfo {
  uint32_t version = 0;                        // format version of the file (this build writes 1)
  KvType k_type = KvType::f16;
  KvType v_type = KvType::f16;
  uint32_t head_dim = 0;
  uint32_t kv_heads = 0;
  uint32_t layers = 0;
  std::vector<std::vector<uint32_t>> lengths;  // [sequence][layer] tokens, in the file's order
  uint64_t file_bytes = 0;                     // the whole file
};

// New tokens' K or V rows in host memory for one layer: [n_tokens][kv_heads][head_dim],
// contiguous; for append_all_layers: [layers][n_tokens][kv_heads][head_dim].
struct HostRows {
  const void* data = nullptr;
  Format format = Format::f32;
};

// A range of one of the host's VkBuffers: `bytes` bytes from `offset` (a multiple of the element
// size). The buffer must have been created with VK_BUFFER_USAGE_STORAGE_BUFFER_BIT on the
// engine's device; the engine binds it as a storage buffer, never copies it, never keeps it past
// the call that records it (the recorded commands use it until they complete).
struct DeviceSpan {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize bytes = 0;
  Format format = Format::f32;
};

// Queries in host memory, [batch][m][q_heads][head_dim] contiguous; `bytes` must be exactly
// batch x m x q_heads x head_dim x format_bytes(format).
struct HostTensor {
  const void* data = nullptr;
  size_t bytes = 0;
  Format format = Format::f32;
};

// Where the output goes in host memory, [batch][m][q_heads][head_dim]; at least the size above.
struct HostOutput {
  void* data = nullptr;
  size_t bytes = 0;
  Format format = Format::f32;
};

enum class AppendFusion : uint32_t { automatic = 0, fused = 1, separate = 2 };

// Attention semantics of one decode call. The m queries of a sequence are its m newest tokens
// (already appended): query i attends to positions [0, length - m + i], causal among the new ones.
struct DecodeOptions {
  float scale = 0.0f;      // softmax scale; 0: 1 / sqrt(head_dim)
  float softcap = 0.0f;    // logit soft-cap: cap * tanh(s / cap); 0: off
  uint32_t window = 0;     // sliding window: attend to the last `window` positions; 0: off
  uint32_t splits = 0;     // split-K count; 0: the plan's choice
  Variant variant = Variant::automatic;
  // Decoder::record_append_decode only: the append in the decode dispatch (fused), or an append
  // and then a decode call (separate); automatic: fused (faster on an H100 for every type from
  // 4K to 32K), separate where the device's shared memory cannot hold the fused kernel.
  AppendFusion fusion = AppendFusion::automatic;
};

// What a decode call would run with (Decoder::plan): the kernel's schedule and why.
struct Plan {
  uint32_t splits = 1;         // splits per sequence (flash-decoding); 1: no reduce pass
  uint32_t chunk = 1;          // tokens per split
  uint32_t workgroup = 0;      // invocations per workgroup
  uint32_t workgroups = 0;     // decode workgroups launched
  uint32_t rows = 1;           // query rows per workgroup
  uint32_t dims_per_lane = 0;
  uint32_t team = 0;           // lanes per token
  uint32_t unroll = 0;         // tokens per team per step
  uint32_t shared_bytes = 0;   // shared memory per workgroup
  Variant variant = Variant::automatic;
  std::string reason;          // the policy's and the planner's reasons
  std::string description;     // one line with all of the above
};

// The engine's device.
struct DeviceInfo {
  std::string name;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string device_class;    // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver_name;
  std::string driver_info;
  uint32_t api_version = 0;    // VkPhysicalDeviceProperties::apiVersion
  uint32_t subgroup_size = 0;
  uint32_t compute_units = 0;  // SMs / CUs; 0 when the driver does not say
  uint64_t device_local_bytes = 0;
  bool adopted = false;        // the host's device (Engine::adopt) rather than the engine's own
};

// For Engine::create (the engine's own instance and device).
struct EngineOptions {
  std::string device;          // index ("1") or name substring ("H100"); empty: TKV_DEVICE, else the best
  std::string cache_dir;       // on-disk pipeline cache; empty: TKV_CACHE_DIR, else ~/.cache/turbokv
  bool persist_pipeline_cache = true;
  bool validation = false;     // Khronos validation layer on the engine's own instance (or TKV_VALIDATION=1)
  // How long a call waits for its GPU work before failing (a hung device must not hang the
  // caller); 0: 60 s on GPUs, 10 minutes on CPU drivers. Work that timed out keeps running: the
  // engine refuses new work, and frees nothing that work may use, until it has finished.
  uint32_t wait_timeout_ms = 0;
};

// The host application's Vulkan objects, for Engine::adopt. The host keeps ownership.
struct VulkanDevice {
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t instance_api_version = 0;   // VkApplicationInfo::apiVersion of the instance; >= VK_API_VERSION_1_2
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  // What the device was created with; read during adopt only (extensions, features, queues are
  // checked against Engine::requirements).
  const VkDeviceCreateInfo* create_info = nullptr;
  VkQueue queue = VK_NULL_HANDLE;      // the queue the host submits the engine's work to
  uint32_t queue_family_index = 0;     // its family; must support compute
};

// What the host's VkDevice must enable for Engine::adopt, per physical device: the extensions
// (add to ppEnabledExtensionNames) and each feature marked true.
struct DeviceRequirements {
  std::vector<const char*> extensions;             // static strings
  std::vector<const char*> optional_extensions;    // used when enabled; never required
  bool shader_int16 = false;                       // VkPhysicalDeviceFeatures
  bool shader_int64 = false;                       // VkPhysicalDeviceFeatures
  bool storage_buffer_16bit_access = false;        // VkPhysicalDeviceVulkan11Features
  bool storage_buffer_8bit_access = false;         // VkPhysicalDeviceVulkan12Features
  bool shader_float16 = false;                     // VkPhysicalDeviceVulkan12Features
  bool shader_int8 = false;                        // VkPhysicalDeviceVulkan12Features
  // VkPhysicalDeviceVulkan12Features vulkanMemoryModel and vulkanMemoryModelDeviceScope (both):
  // optional, what the tensor-core kernels' SPIR-V needs; without them the engine does not use them.
  bool vulkan_memory_model = false;
};

}  // namespace turbokv
