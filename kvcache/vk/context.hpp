// The Vulkan runtime shared by kvcache/ and attention/: instance, device selection, the logical
// device with one compute queue, a command pool, the lazily built pipelines and the on-disk
// pipeline cache. Every object is owned by an RAII value; factories return a live object or
// throw tkv::Error. Thread safety: submissions are serialised inside a Context, but recording
// and command-buffer allocation are not: use a Context from one thread at a time. A Context either
// creates its instance and device (create) or adopts the host application's (adopt).
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kvcache/vk/caps.hpp"

namespace tkv::vk {

class Recorder;
class PipelineStore;

struct InstanceOptions {
  // Enables VK_LAYER_KHRONOS_validation; also turned on by TKV_VALIDATION=1.
  bool validation = false;
};

class Instance {
 public:
  static std::shared_ptr<Instance> create(const InstanceOptions& options = {});
  // A view of the host application's instance: enumerates its devices, never destroys it, and
  // installs no validation messenger (the host's own layers and messengers see our calls).
  static std::shared_ptr<Instance> adopt(VkInstance instance);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  const std::vector<VkPhysicalDevice>& physical_devices() const { return physical_devices_; }
  // Capability records of every device, in enumeration order.
  std::vector<DeviceCaps> devices() const;
  bool validation_enabled() const { return validation_; }
  bool owned() const { return owned_; }
  // Number of validation messages of warning or error severity seen so far.
  uint64_t validation_message_count() const { return validation_messages_; }

 private:
  Instance() = default;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<VkPhysicalDevice> physical_devices_;
  bool validation_ = false;
  bool owned_ = true;
  uint64_t validation_messages_ = 0;
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT*, void*);
};

DeviceCaps query_caps(VkInstance instance, VkPhysicalDevice physical_device, uint32_t index);

// Validation messages of warning or error severity seen by every Instance of this process (the
// test runner fails when it is not zero).
uint64_t validation_messages_total();

// Picks a device: by index ("1") or name substring ("H100") when `selector` is non-empty
// (or TKV_DEVICE is set), else the best supported one (discrete > integrated > virtual > CPU).
// Throws no_device with install advice when there is none.
uint32_t select_device(const std::vector<DeviceCaps>& devices, const std::string& selector);

struct ContextOptions {
  InstanceOptions instance;
  std::string device;          // index or name substring; empty: best (or TKV_DEVICE)
  std::string cache_dir;       // pipeline cache directory; empty: TKV_CACHE_DIR or ~/.cache/turbokv
  bool persist_pipeline_cache = true;
  // How long a submission may run before the wait for it gives up with an error (a hung device
  // must not hang the caller); 0: 60 s on GPUs, 10 minutes on CPU drivers (which compile a
  // pipeline's shader at its first dispatch, inside the wait).
  uint32_t wait_timeout_ms = 0;
};

// The host application's Vulkan objects, for Context::adopt. The host keeps ownership: it
// destroys them, after every Context adopting them.
struct ExternalDevice {
  VkInstance instance = VK_NULL_HANDLE;
  // VkApplicationInfo::apiVersion the instance was created with: at least VK_API_VERSION_1_2.
  uint32_t instance_api_version = 0;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;  // one of the instance's devices
  VkDevice device = VK_NULL_HANDLE;
  // The create info the device was created with (read during adopt only): its extensions and
  // features are checked against device_requirements (kvcache/vk/requirements.hpp).
  const VkDeviceCreateInfo* create_info = nullptr;
  VkQueue queue = VK_NULL_HANDLE;  // a queue of queue_family, which must support compute
  uint32_t queue_family = 0;
};

class Context {
 public:
  static std::shared_ptr<Context> create(const ContextOptions& options = {});
  // A context on the host's device and queue (options.instance and options.device are ignored).
  // Creates only its own command pool, fence and pipelines on that device; never destroys the
  // host's objects and never waits for the whole device. Throws invalid_argument naming what the
  // device lacks (an extension or feature it was created without, a queue family without compute)
  // and no_device when the physical device cannot run the engine at all.
  static std::shared_ptr<Context> adopt(const ExternalDevice& external, const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceCaps& caps() const { return caps_; }
  const Instance& instance() const { return *instance_; }
  VkPhysicalDevice physical_device() const { return physical_device_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  uint32_t queue_family() const { return queue_family_; }
  PipelineStore& pipelines() { return *pipelines_; }
  PFN_vkCmdPushDescriptorSetKHR push_descriptor_fn() const { return push_descriptor_; }
  // Whether the driver reports compiler statistics of pipelines (VK_KHR_pipeline_executable_properties).
  bool pipeline_statistics() const { return pipeline_statistics_; }
  // Whether the tc pipelines run their NV cooperative matrices as KHR ones (PipelineKey::coopmat_khr):
  // VK_KHR_cooperative_matrix enabled, its fragments laid out as the tc kernel expects (probed),
  // and not turned off by TKV_COOPMAT_KHR=0.
  bool coopmat_khr() const { return coopmat_khr_; }
  // Whether shaders may read the device's real-time clock (VK_KHR_shader_clock's
  // shaderDeviceClock, enabled on devices this context created): turboprof's timeline.
  bool device_clock() const { return device_clock_; }
  // Whether pipelines may turn the driver's bounds checks off (VK_EXT_pipeline_robustness enabled
  // on a device this context created).
  bool pipeline_robustness() const { return pipeline_robustness_; }
  // Whether this context created its device (false: adopted from the host).
  bool owns_device() const { return owns_device_; }

  // Index of a memory type with all of `required` (and, if possible, `preferred`) flags.
  uint32_t memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                       VkMemoryPropertyFlags preferred = 0) const;
  bool memory_type_has(uint32_t index, VkMemoryPropertyFlags flags) const;

  // Records with `record`, submits on the queue and waits for completion.
  void run(const std::function<void(Recorder&)>& record);
  // Submits a recorded primary command buffer and waits. A wait that times out leaves the work
  // running on the device: the context then takes no new work and frees nothing that work may
  // use until it has finished (settled()).
  void submit_and_wait(VkCommandBuffer command_buffer);
  // Whether no timed-out submission is still running; waits up to the wait timeout for one that
  // is.
  bool settled();
  // While timed-out work still runs, objects it may use are not destroyed under it: these take
  // them (true) and destroy them once it has finished (or leave them, with the device, when the
  // context goes first); false: nothing runs, the caller destroys the object itself.
  bool defer_if_running(VkCommandBuffer command_buffer);  // (only the timed-out one is deferred)
  bool defer_if_running(VkBuffer buffer, VkDeviceMemory memory, uint64_t memory_bytes);
  VkCommandPool command_pool() const { return command_pool_; }

 private:
  Context() = default;
  std::shared_ptr<Instance> instance_;
  DeviceCaps caps_;
  VkPhysicalDevice physical_device_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_properties_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::mutex submit_mutex_;
  uint64_t wait_ns_ = 0;                // the wait timeout
  std::atomic<bool> timed_out_{false};  // a submission timed out and fence_ has not signaled since
  VkCommandBuffer timed_out_command_ = VK_NULL_HANDLE;
  struct Deferred {
    VkCommandBuffer command_buffer = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t memory_bytes = 0;
  };
  std::vector<Deferred> deferred_;  // destroyed once the timed-out work has finished
  bool settled_locked();
  [[noreturn]] void refuse_unsettled() const;
  PFN_vkCmdPushDescriptorSetKHR push_descriptor_ = nullptr;
  bool pipeline_statistics_ = false;
  bool coopmat_khr_enabled_ = false;  // the extension and its feature enabled on the device
  bool coopmat_khr_ = false;
  bool pipeline_robustness_ = false;
  bool device_clock_ = false;
  bool owns_device_ = true;
  std::unique_ptr<PipelineStore> pipelines_;
  // Fills physical_device_, caps_, memory properties from instance_; throws when unsupported.
  void select_physical(uint32_t index);
  // Creates the command pool, fence, push-descriptor entry point and pipeline store.
  void finish(const ContextOptions& options);
};

}  // namespace tkv::vk
