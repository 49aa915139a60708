// turbokv::Engine: one Vulkan device with the engine's pipelines, command pool and queue. Either
// the engine's own instance and device (create), or the host application's device and queue
// (adopt), on which caches and decoders then allocate and into whose command buffers they record.
//
// Handles: Engine, Cache and Decoder are shared handles (copies refer to the same object; an
// object lives until its last handle is gone). A Cache keeps its Engine alive and a Decoder its
// Cache, so handles may be dropped in any order; an adopted engine must be dropped before the host
// destroys its VkDevice.
//
// Threads: an engine and everything made from it (its caches and their decoders) are used by one
// thread at a time; the caller serialises. Different engines may run on different threads at once,
// on one device or several: the library keeps no per-process state besides the log. The one
// shared resource is a VkQueue: calls that submit (those taking host memory or files:
// Cache::append, Decoder::decode, Cache::save / load, ...) submit to the engine's queue, so the
// host must not use that queue from another thread during them, as Vulkan requires (queue access
// is externally synchronised).
// Recording calls never touch the queue.
//
// Several engines per device: each holds its own pipelines and pool; a model's KV heads may be
// sharded across engines (each cache holding a range of KV heads with the matching query heads)
// and the shards' outputs concatenated per head. See README.md, "Embedding".
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>

#include "turbokv/types.hpp"

namespace tkv::vk {
class Context;
}

namespace turbokv {

namespace detail {
struct Access;
}

class Engine {
 public:
  // An empty handle (operator bool is false); every other call on it throws invalid_argument.
  Engine() = default;

  // The engine's own Vulkan instance and device: the best supported device, or options.device.
  // Throws Error(no_device) with install advice when there is none.
  static Engine create(const EngineOptions& options = {});

  // The host's instance, physical device, device and queue; the engine never destroys them and
  // never waits for the whole device. The device must have been created with what
  // requirements() lists for its physical device, which is checked against device.create_info:
  // Error(invalid_argument) names each missing extension or feature, a null handle, a queue
  // family without compute or absent from the create info, an instance older than Vulkan 1.2;
  // Error(no_device) when the physical device cannot run the engine at all. options.device and
  // options.validation are ignored (the host's own layers see the engine's calls). The queue must
  // outlive the engine; the engine creates a command pool and a fence on the device.
  static Engine adopt(const VulkanDevice& device, const EngineOptions& options = {});

  // What a device must enable for adopt() on `physical_device` (one of `instance`'s). Throws
  // Error(no_device) naming the reason when the device cannot run the engine at all.
  static DeviceRequirements requirements(VkInstance instance, VkPhysicalDevice physical_device);

  explicit operator bool() const { return ctx_ != nullptr; }
  DeviceInfo info() const;
  bool adopted() const;

  // The Vulkan objects the engine runs on (the host's after adopt). Valid while the engine lives.
  VkInstance vk_instance() const;
  VkPhysicalDevice vk_physical_device() const;
  VkDevice vk_device() const;
  VkQueue vk_queue() const;
  uint32_t queue_family_index() const;

  // Records the memory barrier the engine puts at the start and end of everything it records:
  // compute-shader and transfer writes made available and visible to compute-shader and transfer
  // reads and writes. For hosts that want the same between their own passes.
  void record_barrier(VkCommandBuffer command_buffer) const;

 private:
  explicit Engine(std::shared_ptr<tkv::vk::Context> ctx) : ctx_(std::move(ctx)) {}
  tkv::vk::Context& context() const;
  std::shared_ptr<tkv::vk::Context> ctx_;
  friend struct detail::Access;
  friend class Cache;
};

}  // namespace turbokv
