// The example's own Vulkan objects, as an inference engine that already runs on Vulkan holds them:
// an instance, a device created with what turbokv::Engine::requirements lists, a compute queue, a
// command pool with one command buffer, a fence and host-visible storage buffers. turbokv adopts
// the device (Engine::adopt) and records into the command buffer; the example owns and destroys
// everything here, after the turbokv objects are gone.
//
// Validation: with TKV_VALIDATION=1 (and the Khronos layer installed) the instance runs the layer
// with synchronization validation; validation_messages() counts what it reported (printed to
// stderr), turbokv's calls on this device included.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include <turbokv/turbokv.hpp>

namespace example {

// A host-visible, host-coherent storage buffer, mapped for its whole life.
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
};

class HostVulkan {
 public:
  // Picks the first discrete GPU the engine can run on, else the first device it can run on.
  // Throws std::runtime_error (naming the Vulkan call) or turbokv::Error(no_device).
  HostVulkan();
  ~HostVulkan();
  HostVulkan(const HostVulkan&) = delete;
  HostVulkan& operator=(const HostVulkan&) = delete;

  // Waits for the device to be idle and destroys every Vulkan object (the destructor does the
  // same). The engine adopting the device and its caches and decoders must be gone before.
  // validation_messages() stays readable, with what the layer reported at destruction (objects
  // left on the device).
  void destroy();

  // What Engine::adopt takes; valid until destroy().
  turbokv::VulkanDevice device() const;
  std::string device_name() const { return name_; }
  uint64_t validation_messages() const { return messages_.load(); }

  // A new host-visible storage buffer of `bytes`, destroyed with this object.
  HostBuffer buffer(VkDeviceSize bytes);

  // The command buffer, begun (its previous contents reset).
  VkCommandBuffer begin();
  // Records a barrier from compute-shader writes to host reads (what reading a mapped output
  // after the fence needs), ends the command buffer, submits it to the queue and waits.
  void submit_and_wait();

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);
  void create_instance();
  void create_device();

  std::atomic<uint64_t> messages_{0};
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  std::string name_;
  uint32_t family_ = 0;
  // The device's create info and what it points to, kept for Engine::adopt to check.
  std::vector<const char*> extensions_;
  float priority_ = 1.0f;
  VkDeviceQueueCreateInfo queue_info_{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  VkPhysicalDeviceVulkan11Features f11_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features2_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkDeviceCreateInfo create_info_{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<HostBuffer> buffers_;
};

}  // namespace example
