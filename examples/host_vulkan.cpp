#include "host_vulkan.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace example {
namespace {

constexpr uint32_t kApiVersion = VK_API_VERSION_1_2;

void check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed (VkResult " + std::to_string(int(r)) + ")");
}

bool validation_requested() {
  const char* env = std::getenv("TKV_VALIDATION");
  if (!env || !*env || std::strcmp(env, "0") == 0) return false;
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(),
                     [](const auto& l) { return std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0; });
}

}  // namespace

HostVulkan::HostVulkan() {
  try {
    create_instance();
    create_device();
  } catch (...) {
    destroy();  // what was created so far
    throw;
  }
}

void HostVulkan::create_instance() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "turbokv decode_loop";
  app.apiVersion = kApiVersion;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;

  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = &HostVulkan::on_message;
  messenger.pUserData = this;
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  features.pNext = &messenger;
  const bool validation = validation_requested();
  if (validation) {
    info.enabledLayerCount = 1;
    info.ppEnabledLayerNames = &layer;
    info.enabledExtensionCount = 1;
    info.ppEnabledExtensionNames = &extension;
    info.pNext = &features;
  }
  check(vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
    check(create(instance_, &messenger, nullptr, &messenger_), "vkCreateDebugUtilsMessengerEXT");
  }
}

void HostVulkan::create_device() {
  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devices(count);
  check(vkEnumeratePhysicalDevices(instance_, &count, devices.data()), "vkEnumeratePhysicalDevices");
  // The engine's requirements per device: a device it cannot run on at all throws no_device.
  turbokv::DeviceRequirements requirements;
  std::string refused;
  for (int pass = 0; pass < 2 && !physical_; ++pass)
    for (VkPhysicalDevice d : devices) {
      VkPhysicalDeviceProperties props;
      vkGetPhysicalDeviceProperties(d, &props);
      if (pass == 0 && props.deviceType != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) continue;
      try {
        requirements = turbokv::Engine::requirements(instance_, d);
      } catch (const turbokv::Error& e) {
        if (pass == 1) refused += std::string(" ") + e.what();
        continue;
      }
      physical_ = d;
      name_ = props.deviceName;
      break;
    }
  if (!physical_)
    throw turbokv::Error(turbokv::ErrorCode::no_device,
                         "no Vulkan device the engine can run on (" + std::to_string(count) + " present)" + refused);

  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, nullptr);
  std::vector<VkQueueFamilyProperties> props(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical_, &families, props.data());
  family_ = families;
  for (uint32_t i = 0; i < families && family_ == families; ++i)
    if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family_ = i;
  if (family_ == families) throw std::runtime_error("the device has no compute queue family");

  // Exactly what the engine lists (its optional extensions are left out here).
  extensions_ = requirements.extensions;
  queue_info_.queueFamilyIndex = family_;
  queue_info_.queueCount = 1;
  queue_info_.pQueuePriorities = &priority_;
  features2_.features.shaderInt16 = requirements.shader_int16;
  features2_.features.shaderInt64 = requirements.shader_int64;
  f11_.storageBuffer16BitAccess = requirements.storage_buffer_16bit_access;
  f12_.storageBuffer8BitAccess = requirements.storage_buffer_8bit_access;
  f12_.shaderFloat16 = requirements.shader_float16;
  f12_.shaderInt8 = requirements.shader_int8;
  features2_.pNext = &f11_;
  f11_.pNext = &f12_;
  create_info_.pNext = &features2_;
  create_info_.queueCreateInfoCount = 1;
  create_info_.pQueueCreateInfos = &queue_info_;
  create_info_.enabledExtensionCount = uint32_t(extensions_.size());
  create_info_.ppEnabledExtensionNames = extensions_.data();
  check(vkCreateDevice(physical_, &create_info_, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, family_, 0, &queue_);

  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool.queueFamilyIndex = family_;
  check(vkCreateCommandPool(device_, &pool, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  check(vkAllocateCommandBuffers(device_, &alloc, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check(vkCreateFence(device_, &fence, nullptr, &fence_), "vkCreateFence");
}

HostVulkan::~HostVulkan() { destroy(); }

void HostVulkan::destroy() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    for (auto& b : buffers_) {
      if (b.mapped) vkUnmapMemory(device_, b.memory);
      vkDestroyBuffer(device_, b.buffer, nullptr);
      vkFreeMemory(device_, b.memory, nullptr);
    }
    buffers_.clear();
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);  // frees the command buffer
    vkDestroyDevice(device_, nullptr);  // the validation layer reports objects left on the device here
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
  device_ = VK_NULL_HANDLE;
  fence_ = VK_NULL_HANDLE;
  pool_ = VK_NULL_HANDLE;
  messenger_ = VK_NULL_HANDLE;
  instance_ = VK_NULL_HANDLE;
}

turbokv::VulkanDevice HostVulkan::device() const {
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

HostBuffer HostVulkan::buffer(VkDeviceSize bytes) {
  HostBuffer b;
  b.size = bytes;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  check(vkCreateBuffer(device_, &info, nullptr, &b.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical_, &mem);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = mem.memoryTypeCount;
  for (uint32_t i = 0; i < mem.memoryTypeCount && type == mem.memoryTypeCount; ++i)
    if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) type = i;
  if (type == mem.memoryTypeCount) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    throw std::runtime_error("no host-visible, coherent memory type for a storage buffer");
  }
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  if (VkResult r = vkAllocateMemory(device_, &alloc, nullptr, &b.memory); r != VK_SUCCESS) {
    vkDestroyBuffer(device_, b.buffer, nullptr);
    check(r, "vkAllocateMemory");
  }
  buffers_.push_back(b);  // from here on the destructor frees it
  check(vkBindBufferMemory(device_, b.buffer, b.memory, 0), "vkBindBufferMemory");
  check(vkMapMemory(device_, b.memory, 0, VK_WHOLE_SIZE, 0, &buffers_.back().mapped), "vkMapMemory");
  return buffers_.back();
}

VkCommandBuffer HostVulkan::begin() {
  VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(vkBeginCommandBuffer(cmd_, &info), "vkBeginCommandBuffer");
  return cmd_;
}

void HostVulkan::submit_and_wait() {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                       nullptr, 0, nullptr);
  check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd_;
  check(vkResetFences(device_, 1, &fence_), "vkResetFences");
  check(vkQueueSubmit(queue_, 1, &submit, fence_), "vkQueueSubmit");
  check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, 60ull * 1000 * 1000 * 1000), "vkWaitForFences");
}

VKAPI_ATTR VkBool32 VKAPI_CALL HostVulkan::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT,
                                                      VkDebugUtilsMessageTypeFlagsEXT,
                                                      const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  ++static_cast<HostVulkan*>(user)->messages_;
  std::fprintf(stderr, "validation: %s\n", data && data->pMessage ? data->pMessage : "");
  return VK_FALSE;
}

}  // namespace example
