// Compute pipelines: one embedded SPIR-V module + specialization constants + a push-descriptor
// set of storage buffers + push constants, created lazily on first use and kept, keyed by all of
// those. A VkPipelineCache persists the driver's compiled code on disk between runs.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace tkv::vk {

class Context;

struct PipelineKey {
  std::string shader;                 // file stem of shaders/<name>.comp
  std::vector<uint32_t> constants;    // specialization constants, ids 0..n-1 (32-bit each)
  uint32_t buffers = 1;               // storage buffers at bindings 0..buffers-1 of set 0
  uint32_t push_constant_bytes = 0;
  uint32_t required_subgroup_size = 0;  // 0: driver's choice
  // Specialize the SPIR-V on the host (specialize.hpp) instead of passing the constants to the
  // driver (the decoder sets it for the scalar kernel unless TKV_SPECIALIZE=0).
  bool host_specialize = false;
  // Off: the driver's bounds checks on storage buffer accesses are turned off where the device
  // allows it (VK_EXT_pipeline_robustness), for kernels whose every address the host has
  // validated (the decode kernels: page tables, lengths and shapes are checked before recording).
  bool bounds_checks = true;
  // The shader's NV cooperative matrices as KHR ones (coopmat_khr.hpp; Context::coopmat_khr()).
  bool coopmat_khr = false;
  auto operator<=>(const PipelineKey&) const = default;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t buffers = 0;
  uint32_t push_constant_bytes = 0;
  std::string statistics;  // the compiler's statistics ("Register Count = 96, ..."), when captured
};

class PipelineStore {
 public:
  // cache_dir empty: TKV_CACHE_DIR, else $XDG_CACHE_HOME/turbokv, else ~/.cache/turbokv.
  PipelineStore(Context& ctx, std::string cache_dir, bool persist);
  ~PipelineStore();
  PipelineStore(const PipelineStore&) = delete;
  PipelineStore& operator=(const PipelineStore&) = delete;

  // Returns the pipeline for `key`, building it on first use. Thread-safe.
  const Pipeline& get(const PipelineKey& key);
  size_t size() const;
  // Writes the VkPipelineCache to disk now (also done on destruction).
  void save();
  std::string cache_file() const { return cache_file_; }
  // Where the host-specialized SPIR-V of `key` is kept between runs (<cache dir>/spirv/; empty:
  // not persisted), so that the optimizer runs once per key and machine.
  std::string specialized_file(const PipelineKey& key) const;

 private:
  Pipeline build(const PipelineKey& key);
  VkShaderModule module_for(const PipelineKey& key, bool& owned);
  std::vector<uint32_t> specialized_words(const PipelineKey& key, std::span<const uint32_t> words);
  std::string spirv_file(const PipelineKey& key, std::span<const uint32_t> words) const;
  void load();
  Context& ctx_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_file_;
  mutable std::mutex mutex_;
  std::map<PipelineKey, Pipeline> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
};

}  // namespace tkv::vk
