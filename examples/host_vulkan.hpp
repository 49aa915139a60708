// A host application's Vulkan objects, made with raw Vulkan and owned by the application (the
// example decode loop, and the tests of the host-owned path): an instance (with the Khronos
// validation layer and synchronization validation under TKV_VALIDATION=1, counting the layer's
// messages itself), a device created with what turbokv::Engine::requirements lists (or, for
// tests, deliberately less), a compute queue, a command pool, buffers and submission. turbokv
// adopts the device (Engine::adopt) and records into the application's command buffers; the
// application destroys everything here after the turbokv objects, and the layer then reports any
// object left behind.
#pragma once

#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <turbokv/turbokv.hpp>

namespace example {

inline void vk_ok(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed: " + std::to_string(int(r)));
}

// What the host's device leaves out, to see adopt refuse it.
struct HostDeviceOptions {
  bool push_descriptor = true;
  bool storage_16bit = true;
  bool use_vulkan11_struct = true;  // else the older VkPhysicalDevice16BitStorageFeatures
};

struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;  // host-visible buffers only
  VkDeviceSize size = 0;
};

class HostVulkan {
 public:
  explicit HostVulkan(const HostDeviceOptions& options = {}) {
    const char* env = std::getenv("TKV_VALIDATION");
    validation_ = env && *env && std::strcmp(env, "0") != 0 && has_validation_layer();

    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "turbokv host application";
    app.apiVersion = kApiVersion;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    const char* layer = "VK_LAYER_KHRONOS_validation";
    const char* ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity =
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    messenger_info.pfnUserCallback = &HostVulkan::on_message;
    messenger_info.pUserData = this;
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = &sync;
    features.pNext = &messenger_info;
    if (validation_) {
      info.enabledLayerCount = 1;
      info.ppEnabledLayerNames = &layer;
      info.enabledExtensionCount = 1;
      info.ppEnabledExtensionNames = &ext;
      info.pNext = &features;
    }
    vk_ok(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
    if (validation_) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
      vk_ok(create(instance_, &messenger_info, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
    }

    uint32_t count = 0;
    vk_ok(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
    if (count == 0) throw std::runtime_error("no Vulkan device");
    std::vector<VkPhysicalDevice> devices(count);
    vk_ok(vkEnumeratePhysicalDevices(instance_, &count, devices.data()), "vkEnumeratePhysicalDevices");
    physical_ = devices[0];  // a discrete GPU if there is one, else the first device (lavapipe in CI)
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(d, &p);
      if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
        physical_ = d;
        break;
      }
    }
    VkPhysicalDeviceProperties props0;
    vkGetPhysicalDeviceProperties(physical_, &props0);
    name_ = props0.deviceName;
    // (A CPU driver runs the kernels on the CPU, slower still under sanitizers and beside other
    // tests: its submissions get the 600 s the library's own waits give it, a GPU's 60 s.)
    wait_ns_ = (props0.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? 600ull : 60ull) * 1000 * 1000 * 1000;

    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
    family_ = families;
    for (uint32_t i = 0; i < families && family_ == families; ++i)
      if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family_ = i;
    if (family_ == families) throw std::runtime_error("no compute queue family");

    // The device, with what the engine asks for (turbokv::Engine::requirements) unless told not to.
    requirements_ = turbokv::Engine::requirements(instance_, physical_);
    for (const char* e : requirements_.extensions)
      if (options.push_descriptor || std::strcmp(e, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) != 0)
        extensions_.push_back(e);
    queue_info_.queueFamilyIndex = family_;
    queue_info_.queueCount = 1;
    queue_info_.pQueuePriorities = &priority_;
    features2_.features.shaderInt16 = requirements_.shader_int16;
    features2_.features.shaderInt64 = requirements_.shader_int64;
    f12_.storageBuffer8BitAccess = requirements_.storage_buffer_8bit_access;
    f12_.shaderFloat16 = requirements_.shader_float16;
    f12_.shaderInt8 = requirements_.shader_int8;
    f12_.vulkanMemoryModel = f12_.vulkanMemoryModelDeviceScope = requirements_.vulkan_memory_model;
    const bool s16 = options.storage_16bit && requirements_.storage_buffer_16bit_access;
    if (options.use_vulkan11_struct) {
      f11_.storageBuffer16BitAccess = s16;
      features2_.pNext = &f11_;
      f11_.pNext = &f12_;
    } else {
      storage16_.storageBuffer16BitAccess = s16;
      features2_.pNext = &storage16_;
      storage16_.pNext = &f12_;
    }
    create_info_.pNext = &features2_;
    create_info_.queueCreateInfoCount = 1;
    create_info_.pQueueCreateInfos = &queue_info_;
    create_info_.enabledExtensionCount = uint32_t(extensions_.size());
    create_info_.ppEnabledExtensionNames = extensions_.data();
    vk_ok(vkCreateDevice(physical_, &create_info_, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, family_, 0, &queue_);

    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = family_;
    vk_ok(vkCreateCommandPool(device_, &pool_info, nullptr, &pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vk_ok(vkCreateFence(device_, &fence_info, nullptr, &fence_), "vkCreateFence");
  }

  ~HostVulkan() { destroy(); }

  // Waits for the device and destroys every object (the destructor does the same); the engine
  // adopting the device must be gone before. messages() stays readable: the layer reports any
  // object left on the device at vkDestroyDevice.
  void destroy() {
    if (device_) vkDeviceWaitIdle(device_);
    for (auto& b : buffers_) {
      if (b.mapped) vkUnmapMemory(device_, b.memory);
      vkDestroyBuffer(device_, b.buffer, nullptr);
      vkFreeMemory(device_, b.memory, nullptr);
    }
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    if (device_) vkDestroyDevice(device_, nullptr);  // the layer reports objects left on the device here
    if (messenger_) {
      auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
      destroy(instance_, messenger_, nullptr);
    }
    if (instance_) vkDestroyInstance(instance_, nullptr);
    buffers_.clear();
    fence_ = VK_NULL_HANDLE;
    pool_ = VK_NULL_HANDLE;
    device_ = VK_NULL_HANDLE;
    messenger_ = VK_NULL_HANDLE;
    instance_ = VK_NULL_HANDLE;
  }
  HostVulkan(const HostVulkan&) = delete;
  HostVulkan& operator=(const HostVulkan&) = delete;

  // What Engine::adopt takes.
  turbokv::VulkanDevice device_handles() const {
    turbokv::VulkanDevice d;
    d.instance = instance_;
    d.instance_api_version = kApiVersion;
    d.physical_device = physical_;
    d.device = device_;
    d.create_info = &create_info_;
    d.queue = queue_;
    d.queue_family_index = family_;
    return d;
  }
  VkDevice device() const { return device_; }
  const std::string& device_name() const { return name_; }
  bool validation() const { return validation_; }
  uint64_t messages() const { return messages_->load(); }
  // The message count, readable after the host is destroyed (leaks are reported at destruction).
  std::shared_ptr<const std::atomic<uint64_t>> message_counter() const { return messages_; }

  // A storage + transfer buffer; host-visible (mapped) or device-local.
  HostBuffer buffer(VkDeviceSize size, bool host_visible = true) {
    HostBuffer b;
    b.size = size;
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vk_ok(vkCreateBuffer(device_, &info, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
    const VkMemoryPropertyFlags want =
        host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                     : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = mem.memoryTypeCount;
    for (uint32_t i = 0; i < mem.memoryTypeCount && type == mem.memoryTypeCount; ++i)
      if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) type = i;
    if (type == mem.memoryTypeCount) throw std::runtime_error("no memory type");
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    vk_ok(vkAllocateMemory(device_, &alloc, nullptr, &b.memory), "vkAllocateMemory");
    vk_ok(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
    if (host_visible) vk_ok(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
    buffers_.push_back(b);
    return b;
  }

  // A primary command buffer of the host's pool, begun.
  VkCommandBuffer begin() {
    VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool_;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer cmd;
    vk_ok(vkAllocateCommandBuffers(device_, &info, &cmd), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_ok(vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    return cmd;
  }

  // Ends, submits on the host's queue, waits on the host's fence, frees.
  void submit_and_wait(VkCommandBuffer cmd) {
    vk_ok(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cmd;
    vk_ok(vkResetFences(device_, 1, &fence_), "vkResetFences");
    vk_ok(vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
    vk_ok(vkWaitForFences(device_, 1, &fence_, VK_TRUE, wait_ns_), "vkWaitForFences");
    vkFreeCommandBuffers(device_, pool_, 1, &cmd);
  }

  // The host's own transfer of bytes into a device buffer (vkCmdCopyBuffer from a mapped one).
  void copy(VkCommandBuffer cmd, const HostBuffer& src, VkDeviceSize src_offset, const HostBuffer& dst,
            VkDeviceSize dst_offset, VkDeviceSize size) {
    VkBufferCopy region{src_offset, dst_offset, size};
    vkCmdCopyBuffer(cmd, src.buffer, dst.buffer, 1, &region);
  }

  // Transfer writes -> host reads (before reading a mapped buffer after the fence).
  static void host_read_barrier(VkCommandBuffer cmd) {
    VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    b.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0, nullptr, 0, nullptr);
  }

  static constexpr uint32_t kApiVersion = VK_API_VERSION_1_2;

 private:
  static bool has_validation_layer() {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    return std::any_of(layers.begin(), layers.end(),
                       [](const auto& l) { return std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0; });
  }
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                   VkDebugUtilsMessageTypeFlagsEXT,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
    ++*static_cast<HostVulkan*>(user)->messages_;
    std::fprintf(stderr, "host vulkan validation: %s\n", data && data->pMessage ? data->pMessage : "");
    return VK_FALSE;
  }

  bool validation_ = false;
  std::shared_ptr<std::atomic<uint64_t>> messages_ = std::make_shared<std::atomic<uint64_t>>(0);
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  std::string name_;
  uint64_t wait_ns_ = 0;  // a submission's wait for its fence
  uint32_t family_ = 0;
  turbokv::DeviceRequirements requirements_;
  std::vector<const char*> extensions_;
  float priority_ = 1.0f;
  VkDeviceQueueCreateInfo queue_info_{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  VkPhysicalDeviceVulkan11Features f11_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceVulkan12Features f12_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features2_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkDeviceCreateInfo create_info_{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  std::vector<HostBuffer> buffers_;
};

}  // namespace example
