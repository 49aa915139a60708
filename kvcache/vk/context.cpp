#include "kvcache/vk/context.hpp"
#include "kvcache/vk/coopmat_probe.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kvcache/error.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/live_objects.hpp"
#include "kvcache/vk/pipeline.hpp"
#include "kvcache/vk/requirements.hpp"

namespace tkv::vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr const char* kInstallAdvice =
    "no Vulkan device found. On Debian/Ubuntu install the CPU driver (lavapipe) and the loader with "
    "`apt-get install mesa-vulkan-drivers libvulkan1`, or install your GPU's Vulkan driver";

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

bool has_layer(const char* name) {
  uint32_t count = 0;
  vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  vkEnumerateInstanceLayerProperties(&count, layers.data());
  return std::any_of(layers.begin(), layers.end(), [&](const auto& l) { return std::strcmp(l.layerName, name) == 0; });
}

std::string hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

std::atomic<uint64_t> g_validation_messages{0};

}  // namespace

uint64_t validation_messages_total() { return g_validation_messages.load(std::memory_order_relaxed); }

// ---------------------------------------------------------------------------------------------
// Instance

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                    void* user) {
  auto* self = static_cast<Instance*>(user);
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++self->validation_messages_;
    g_validation_messages.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("vulkan validation: {}", data->pMessage ? data->pMessage : "");
  } else {
    spdlog::debug("vulkan: {}", data->pMessage ? data->pMessage : "");
  }
  return VK_FALSE;
}

std::shared_ptr<Instance> Instance::create(const InstanceOptions& options) {
  std::shared_ptr<Instance> self(new Instance());
  self->validation_ = options.validation || env_flag("TKV_VALIDATION");
  if (self->validation_ && !has_layer(kValidationLayer)) {
    spdlog::warn("validation requested but {} is not installed (apt-get install vulkan-validationlayers)",
                 kValidationLayer);
    self->validation_ = false;
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "turbokv";
  app.pEngineName = "turbokv";
  app.apiVersion = VK_API_VERSION_1_2;

  std::vector<const char*> layers, extensions;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = &Instance::on_message;
  messenger_info.pUserData = self.get();
  VkValidationFeatureEnableEXT sync_validation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  validation_features.enabledValidationFeatureCount = 1;
  validation_features.pEnabledValidationFeatures = &sync_validation;
  validation_features.pNext = &messenger_info;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  if (self->validation_) {
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    info.pNext = &validation_features;
  }
  info.enabledLayerCount = uint32_t(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();

  VkResult r = vkCreateInstance(&info, nullptr, &self->instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) fail(ErrorCode::no_device, kInstallAdvice);
  check(r, "vkCreateInstance");

  if (self->validation_) {
    auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(self->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create_messenger) check(create_messenger(self->instance_, &messenger_info, nullptr, &self->messenger_),
                                "vkCreateDebugUtilsMessengerEXT");
  }

  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(self->instance_, &count, nullptr), "vkEnumeratePhysicalDevices");
  self->physical_devices_.resize(count);
  check(vkEnumeratePhysicalDevices(self->instance_, &count, self->physical_devices_.data()),
        "vkEnumeratePhysicalDevices");
  return self;
}

std::shared_ptr<Instance> Instance::adopt(VkInstance instance) {
  if (!instance) fail(ErrorCode::invalid_argument, "adopt: the VkInstance is VK_NULL_HANDLE");
  std::shared_ptr<Instance> self(new Instance());
  self->instance_ = instance;
  self->owned_ = false;
  uint32_t count = 0;
  check(vkEnumeratePhysicalDevices(instance, &count, nullptr), "vkEnumeratePhysicalDevices");
  self->physical_devices_.resize(count);
  check(vkEnumeratePhysicalDevices(instance, &count, self->physical_devices_.data()), "vkEnumeratePhysicalDevices");
  return self;
}

Instance::~Instance() {
  if (!owned_) return;
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

std::vector<DeviceCaps> Instance::devices() const {
  std::vector<DeviceCaps> caps;
  for (uint32_t i = 0; i < physical_devices_.size(); ++i) caps.push_back(query_caps(instance_, physical_devices_[i], i));
  return caps;
}

// ---------------------------------------------------------------------------------------------
// Capability records

DeviceCaps query_caps(VkInstance instance, VkPhysicalDevice pd, uint32_t index) {
  const auto extensions = device_extension_names(pd);
  auto has = [&](const char* name) { return extensions.count(name) != 0; };

  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties size_control{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCoreProperties2AMD amd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  subgroup.pNext = &driver;
  void** tail = &driver.pNext;
  const bool size_control_ok = has(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  if (size_control_ok) { *tail = &size_control; tail = &size_control.pNext; }
  if (has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) { *tail = &sm; tail = &sm.pNext; }
  if (has(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME)) { *tail = &amd; tail = &amd.pNext; }
  vkGetPhysicalDeviceProperties2(pd, &props);

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  f11.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(pd, &features);

  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(pd, &memory);

  const auto& p = props.properties;
  DeviceCaps c;
  c.index = index;
  c.name = p.deviceName;
  c.vendor_id = p.vendorID;
  c.device_id = p.deviceID;
  c.vendor = vendor_from_id(p.vendorID);
  switch (p.deviceType) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: c.device_class = DeviceClass::discrete; break;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: c.device_class = DeviceClass::integrated; break;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: c.device_class = DeviceClass::virtual_gpu; break;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: c.device_class = DeviceClass::cpu; break;
    default: c.device_class = DeviceClass::other; break;
  }
  c.driver_name = driver.driverName;
  c.driver_info = driver.driverInfo;
  c.driver_version = p.driverVersion;
  c.api_version = p.apiVersion;
  c.pipeline_cache_uuid = hex(p.pipelineCacheUUID, VK_UUID_SIZE);

  c.subgroup_size = subgroup.subgroupSize;
  c.min_subgroup_size = size_control_ok ? size_control.minSubgroupSize : subgroup.subgroupSize;
  c.max_subgroup_size = size_control_ok ? size_control.maxSubgroupSize : subgroup.subgroupSize;
  const bool compute = subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT;
  c.subgroup_arithmetic = compute && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  c.subgroup_shuffle = compute && (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  if (has(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) c.compute_units = sm.shaderSMCount;
  if (has(VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME)) c.compute_units = amd.activeComputeUnitCount;
  c.max_shared_memory = p.limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = p.limits.maxComputeWorkGroupInvocations;
  c.max_push_constants = p.limits.maxPushConstantsSize;
  c.max_storage_buffer_range = p.limits.maxStorageBufferRange;
  c.max_allocation_size = 0;  // filled below when the 1.1 maintenance3 limit is known

  c.fp16_arithmetic = f12.shaderFloat16;
  c.int8_arithmetic = f12.shaderInt8;
  c.storage_16bit = f11.storageBuffer16BitAccess;
  c.storage_8bit = f12.storageBuffer8BitAccess;
  c.integer_dot_product = has("VK_KHR_shader_integer_dot_product");
  c.cooperative_matrix = has("VK_KHR_cooperative_matrix") || has("VK_NV_cooperative_matrix");
  c.push_descriptor = has(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  c.cooperative_matrix_nv = has(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  if (c.cooperative_matrix_nv) {
    auto fn = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    uint32_t n = 0;
    if (fn && fn(pd, &n, nullptr) == VK_SUCCESS && n) {
      std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
      if (fn(pd, &n, props.data()) == VK_SUCCESS) {
        auto type = [](VkComponentTypeNV t) -> std::string {
          switch (t) {
            case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
            case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
            case VK_COMPONENT_TYPE_SINT8_NV: return "s8";
            case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
            case VK_COMPONENT_TYPE_SINT32_NV: return "s32";
            case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
            default: return "t" + std::to_string(int(t));
          }
        };
        for (const auto& m : props)
          c.cooperative_matrix_shapes.push_back(std::to_string(m.MSize) + "x" + std::to_string(m.NSize) + "x" +
                                                std::to_string(m.KSize) + " " + type(m.AType) + "*" + type(m.BType) +
                                                "+" + type(m.CType) + (m.scope == VK_SCOPE_SUBGROUP_NV ? " subgroup" : ""));
      }
    }
  }
  c.timestamps = p.limits.timestampComputeAndGraphics && p.limits.timestampPeriod > 0;
  c.timestamp_period_ns = p.limits.timestampPeriod;

  VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props_m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props_m3.pNext = &m3;
  vkGetPhysicalDeviceProperties2(pd, &props_m3);
  c.max_allocation_size = m3.maxMemoryAllocationSize;

  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i)
    c.heaps.push_back({memory.memoryHeaps[i].size, bool(memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)});
  return c;
}

uint32_t select_device(const std::vector<DeviceCaps>& devices, const std::string& selector_in) {
  std::string selector = selector_in;
  if (selector.empty())
    if (const char* env = std::getenv("TKV_DEVICE")) selector = env;
  if (devices.empty()) fail(ErrorCode::no_device, kInstallAdvice);

  if (!selector.empty()) {
    const bool numeric = std::all_of(selector.begin(), selector.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    for (const auto& d : devices) {
      const bool match = numeric ? std::to_string(d.index) == selector
                                 : d.name.find(selector) != std::string::npos;
      if (!match) continue;
      if (auto why = d.unsupported_reason(); !why.empty())
        fail(ErrorCode::no_device, "device " + std::to_string(d.index) + " (" + d.name + ") cannot run turbokv: " + why);
      return d.index;
    }
    std::string names;
    for (const auto& d : devices) names += "\n  " + std::to_string(d.index) + ": " + d.name;
    fail(ErrorCode::not_found, "no Vulkan device matches '" + selector + "'; devices present:" + names);
  }

  auto rank = [](DeviceClass c) {
    switch (c) {
      case DeviceClass::discrete: return 0;
      case DeviceClass::integrated: return 1;
      case DeviceClass::virtual_gpu: return 2;
      case DeviceClass::cpu: return 3;
      default: return 4;
    }
  };
  const DeviceCaps* best = nullptr;
  std::string reasons;
  for (const auto& d : devices) {
    if (auto why = d.unsupported_reason(); !why.empty()) {
      reasons += "\n  " + d.name + ": " + why;
      continue;
    }
    if (!best || rank(d.device_class) < rank(best->device_class)) best = &d;
  }
  if (!best) fail(ErrorCode::no_device, std::string("no usable Vulkan device:") + reasons);
  return best->index;
}

// ---------------------------------------------------------------------------------------------
// Context

void Context::select_physical(uint32_t index) {
  physical_device_ = instance_->physical_devices()[index];
  caps_ = query_caps(instance_->handle(), physical_device_, index);
  vkGetPhysicalDeviceMemoryProperties(physical_device_, &memory_properties_);
}

std::shared_ptr<Context> Context::create(const ContextOptions& options) {
  std::shared_ptr<Context> self(new Context());
  self->instance_ = Instance::create(options.instance);
  const auto all = self->instance_->devices();
  self->select_physical(select_device(all, options.device));
  const auto& caps = self->caps_;

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(self->physical_device_, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(self->physical_device_, &family_count, families.data());
  // Prefer a compute queue family with timestamps; a graphics+compute family is fine too.
  std::optional<uint32_t> family;
  for (uint32_t i = 0; i < family_count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (!family || (families[i].timestampValidBits > 0 && families[*family].timestampValidBits == 0)) family = i;
  }
  if (!family) fail(ErrorCode::no_device, "device " + caps.name + " has no compute queue");
  self->queue_family_ = *family;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = *family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  // The same list Context::adopt checks a host's device against.
  const DeviceRequirements req = device_requirements(self->physical_device_);
  std::vector<const char*> extensions = req.extensions;
  extensions.insert(extensions.end(), req.optional_extensions.begin(), req.optional_extensions.end());
  auto optional = [&](const char* name) {
    return std::any_of(req.optional_extensions.begin(), req.optional_extensions.end(),
                       [&](const char* e) { return std::strcmp(e, name) == 0; });
  };
  const bool size_control = optional(VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  const bool exec_props = optional(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  const bool coopmat = optional(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  // VK_KHR_cooperative_matrix beside the NV one (unless TKV_COOPMAT_KHR=0): the tc kernels' NV
  // matrices can then run as KHR ones (coopmat_khr.hpp), whose B operands the driver need not
  // transpose before each MMA (H100: turbo3 128K 77.3 -> 73.0 us); the probe at the end of
  // create() decides. (Vulkan 1.3.239's headers predate the extension: its feature structure is spelled out.)
  struct CoopmatFeaturesKhr {
    VkStructureType sType = VkStructureType(1000506000);  // ..._COOPERATIVE_MATRIX_FEATURES_KHR
    void* pNext = nullptr;
    VkBool32 cooperativeMatrix = VK_FALSE;
    VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
  } ekhr, supported_khr;
  const char* khr_name = "VK_KHR_cooperative_matrix";
  const char* khr_env = std::getenv("TKV_COOPMAT_KHR");
  const bool want_khr = coopmat && !(khr_env && std::string(khr_env) == "0");

  VkPhysicalDeviceSubgroupSizeControlFeatures sc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  if (size_control) {
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &sc;
    vkGetPhysicalDeviceFeatures2(self->physical_device_, &supported);
  }

  // Enable only what we use, where present.
  VkPhysicalDeviceVulkan11Features e11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features e12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceSubgroupSizeControlFeatures esc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceFeatures2 enabled{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  enabled.features.shaderInt16 = req.shader_int16;
  enabled.features.shaderInt64 = req.shader_int64;
  enabled.pNext = &e11;
  e11.pNext = &e12;
  e11.storageBuffer16BitAccess = req.storage_buffer_16bit_access;
  e12.storageBuffer8BitAccess = req.storage_buffer_8bit_access;
  e12.shaderFloat16 = req.shader_float16;
  e12.shaderInt8 = req.shader_int8;
  e12.vulkanMemoryModel = e12.vulkanMemoryModelDeviceScope = req.vulkan_memory_model;
  void** chain = &e12.pNext;
  if (size_control) {
    *chain = &esc;
    chain = &esc.pNext;
    esc.subgroupSizeControl = sc.subgroupSizeControl;
    esc.computeFullSubgroups = sc.computeFullSubgroups;
  }
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR eexec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (exec_props) {
    eexec.pipelineExecutableInfo = VK_TRUE;
    *chain = &eexec;
    chain = &eexec.pNext;
  }
  self->pipeline_statistics_ = exec_props;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV ecm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  if (coopmat) {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV supported_cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &supported_cm;
    vkGetPhysicalDeviceFeatures2(self->physical_device_, &supported);
    ecm.cooperativeMatrix = supported_cm.cooperativeMatrix;
    *chain = &ecm;
    chain = &ecm.pNext;
  }
  // (The tc kernels' SPIR-V uses the Vulkan memory model: no tensor cores without it.)
  self->caps_.cooperative_matrix_nv = coopmat && ecm.cooperativeMatrix && req.vulkan_memory_model;
  const auto device_extensions = device_extension_names(self->physical_device_);
  if (want_khr && device_extensions.count(khr_name)) {
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &supported_khr;
    vkGetPhysicalDeviceFeatures2(self->physical_device_, &supported);
    ekhr.cooperativeMatrix = supported_khr.cooperativeMatrix;
    *chain = &ekhr;
    chain = &ekhr.pNext;
    extensions.push_back(khr_name);
    self->coopmat_khr_enabled_ = ekhr.cooperativeMatrix == VK_TRUE;
  }
  VkPhysicalDevicePipelineRobustnessFeaturesEXT erb{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
  if (optional(VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME)) {
    VkPhysicalDevicePipelineRobustnessFeaturesEXT supported_rb{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &supported_rb;
    vkGetPhysicalDeviceFeatures2(self->physical_device_, &supported);
    erb.pipelineRobustness = supported_rb.pipelineRobustness;
    *chain = &erb;
    chain = &erb.pNext;
  }
  self->pipeline_robustness_ = erb.pipelineRobustness;
  // The device's real-time clock in shaders, where present: only turboprof's timeline kernels
  // read it (shaders/timeline.glsl); nothing else changes with it.
  VkPhysicalDeviceShaderClockFeaturesKHR eclock{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
  if (device_extensions.count(VK_KHR_SHADER_CLOCK_EXTENSION_NAME)) {
    VkPhysicalDeviceShaderClockFeaturesKHR supported_clock{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CLOCK_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    supported.pNext = &supported_clock;
    vkGetPhysicalDeviceFeatures2(self->physical_device_, &supported);
    if (supported_clock.shaderDeviceClock) {
      eclock.shaderDeviceClock = VK_TRUE;
      *chain = &eclock;
      chain = &eclock.pNext;
      extensions.push_back(VK_KHR_SHADER_CLOCK_EXTENSION_NAME);
      self->device_clock_ = true;
    }
  }

  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &enabled;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = uint32_t(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  TKV_VK(vkCreateDevice(self->physical_device_, &info, nullptr, &self->device_));
  vkGetDeviceQueue(self->device_, *family, 0, &self->queue_);
  self->finish(options);
  return self;
}

std::shared_ptr<Context> Context::adopt(const ExternalDevice& ext, const ContextOptions& options) {
  const char* null_handle = !ext.instance ? "instance" : !ext.physical_device ? "physical_device"
                            : !ext.device ? "device" : !ext.queue ? "queue" : nullptr;
  if (null_handle) fail(ErrorCode::invalid_argument, std::string("adopt: the host's ") + null_handle + " is VK_NULL_HANDLE");
  if (!ext.create_info)
    fail(ErrorCode::invalid_argument, "adopt: pass the VkDeviceCreateInfo the device was created with (create_info is "
                                      "null); turbokv checks its extensions and features");
  if (VK_API_VERSION_MAJOR(ext.instance_api_version) < 1 ||
      (VK_API_VERSION_MAJOR(ext.instance_api_version) == 1 && VK_API_VERSION_MINOR(ext.instance_api_version) < 2))
    fail(ErrorCode::invalid_argument, "adopt: the instance was created with apiVersion " +
                                          api_version_string(ext.instance_api_version) +
                                          "; turbokv needs VK_API_VERSION_1_2 or later");

  std::shared_ptr<Context> self(new Context());
  self->owns_device_ = false;
  self->instance_ = Instance::adopt(ext.instance);
  const auto& pds = self->instance_->physical_devices();
  const auto it = std::find(pds.begin(), pds.end(), ext.physical_device);
  if (it == pds.end())
    fail(ErrorCode::invalid_argument, "adopt: the physical device is not one of the instance's devices");
  self->select_physical(uint32_t(it - pds.begin()));
  const auto& caps = self->caps_;
  if (auto why = caps.unsupported_reason(); !why.empty())
    fail(ErrorCode::no_device, "adopt: device " + caps.name + " cannot run turbokv: " + why);

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(ext.physical_device, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(ext.physical_device, &family_count, families.data());
  if (ext.queue_family >= family_count)
    fail(ErrorCode::invalid_argument, "adopt: queue family " + std::to_string(ext.queue_family) + " does not exist on " +
                                          caps.name + " (it has " + std::to_string(family_count) + ")");
  if (!(families[ext.queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    fail(ErrorCode::invalid_argument, "adopt: queue family " + std::to_string(ext.queue_family) + " of " + caps.name +
                                          " does not support compute");

  const EnabledDevice enabled = read_device_create_info(*ext.create_info);
  if (std::find(enabled.queue_families.begin(), enabled.queue_families.end(), ext.queue_family) ==
      enabled.queue_families.end())
    fail(ErrorCode::invalid_argument, "adopt: the device was created without a queue of family " +
                                          std::to_string(ext.queue_family));
  const DeviceRequirements req = device_requirements(ext.physical_device);
  if (const std::string missing = missing_requirements(req, enabled); !missing.empty()) {
    std::string list;
    for (size_t at = 0, nl; at <= missing.size(); at = nl + 1) {
      nl = missing.find('\n', at);
      if (nl == std::string::npos) nl = missing.size();
      list += "\n  " + missing.substr(at, nl - at);
    }
    fail(ErrorCode::invalid_argument, "adopt: device " + caps.name +
                                          " was created without what turbokv needs (it supports them; enable what "
                                          "device_requirements lists):" + list);
  }
  // Optional extensions are used when the host enabled them.
  self->pipeline_statistics_ = enabled.has_extension(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  self->caps_.cooperative_matrix_nv =
      self->caps_.cooperative_matrix_nv && enabled.cooperative_matrix_nv && enabled.vulkan_memory_model;

  self->device_ = ext.device;
  self->queue_ = ext.queue;
  self->queue_family_ = ext.queue_family;
  self->finish(options);
  spdlog::debug("turbokv: adopted the host's device {} (queue family {})", caps.name, ext.queue_family);
  return self;
}

void Context::finish(const ContextOptions& options) {
  push_descriptor_ = reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(
      vkGetDeviceProcAddr(device_, "vkCmdPushDescriptorSetKHR"));
  if (!push_descriptor_) fail(ErrorCode::vulkan, "vkGetDeviceProcAddr(vkCmdPushDescriptorSetKHR) returned null");

  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = queue_family_;
  TKV_VK(vkCreateCommandPool(device_, &pool_info, nullptr, &command_pool_));
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  TKV_VK(vkCreateFence(device_, &fence_info, nullptr, &fence_));
  wait_ns_ = options.wait_timeout_ms ? uint64_t(options.wait_timeout_ms) * 1000 * 1000
                                     : (caps_.device_class == DeviceClass::cpu ? 600 : 60) * 1000000000ull;

  pipelines_ = std::make_unique<PipelineStore>(*this, options.persist_pipeline_cache ? options.cache_dir : "",
                                               options.persist_pipeline_cache);
  if (caps_.cooperative_matrix_nv && caps_.subgroup_size == 32) {
    std::string why;
    try {
      caps_.mma_fragment_layout = probe_mma_fragment_layout(*this, false, &why);
    } catch (const Error& e) {
      why = e.what();
    }
    if (!caps_.mma_fragment_layout) spdlog::info("turbokv: no tc decode variant on {}: {}", caps_.name, why);
    if (caps_.mma_fragment_layout && coopmat_khr_enabled_) {
      try {
        coopmat_khr_ = probe_mma_fragment_layout(*this, true, &why);
      } catch (const Error& e) {
        why = e.what();
      }
      caps_.mma_b_native = coopmat_khr_;
      spdlog::debug("turbokv: tc matrices on {}: {}", caps_.name, coopmat_khr_ ? "KHR" : "NV (KHR: " + why + ")");
    }
  }
  spdlog::debug("turbokv: using device {} ({}, {}, driver {} {}, subgroup {}, {} compute units)", caps_.name,
                vendor_name(caps_.vendor), device_class_name(caps_.device_class), caps_.driver_name,
                caps_.driver_info, caps_.subgroup_size, caps_.compute_units);
}

Context::~Context() {
  if (device_ && !settled()) {
    // Destroying objects the device still uses would crash the driver: leave them all.
    spdlog::error("turbokv: work on {} that timed out is still running: the context's Vulkan objects are left "
                  "undestroyed", caps_.name);
    (void)pipelines_.release();
    return;
  }
  // Our own submissions are always waited for (submit_and_wait); on an adopted device the host
  // waits for the work it submitted, and waiting for its whole device is not ours to do.
  if (device_ && owns_device_) vkDeviceWaitIdle(device_);
  pipelines_.reset();  // saves the pipeline cache and destroys pipelines while the device lives
  if (fence_) vkDestroyFence(device_, fence_, nullptr);
  if (command_pool_) vkDestroyCommandPool(device_, command_pool_, nullptr);
  if (device_ && owns_device_) vkDestroyDevice(device_, nullptr);
}

uint32_t Context::memory_type(uint32_t type_bits, VkMemoryPropertyFlags required,
                              VkMemoryPropertyFlags preferred) const {
  std::optional<uint32_t> fallback;
  for (uint32_t i = 0; i < memory_properties_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const auto flags = memory_properties_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (!fallback) fallback = i;
  }
  if (!fallback) fail(ErrorCode::vulkan, "no Vulkan memory type with the required properties on " + caps_.name);
  return *fallback;
}

bool Context::memory_type_has(uint32_t index, VkMemoryPropertyFlags flags) const {
  return (memory_properties_.memoryTypes[index].propertyFlags & flags) == flags;
}

bool Context::settled() {
  if (!timed_out_.load()) return true;
  std::lock_guard lock(submit_mutex_);
  return settled_locked();
}

bool Context::settled_locked() {
  if (!timed_out_.load()) return true;
  const VkResult r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, wait_ns_);
  if (r == VK_TIMEOUT) return false;
  // Signaled, or the device is lost (nothing runs on it any more): either way nothing is pending.
  timed_out_ = false;
  timed_out_command_ = VK_NULL_HANDLE;
  spdlog::info("turbokv: the work on {} that timed out has finished ({}); destroying {} object(s) it kept", caps_.name,
               result_name(r), deferred_.size());
  for (const Deferred& d : deferred_) {
    if (d.command_buffer) {
      vkFreeCommandBuffers(device_, command_pool_, 1, &d.command_buffer);
      detail::count(detail::live_counters().command_buffers, -1);
    }
    if (d.buffer) {
      vkDestroyBuffer(device_, d.buffer, nullptr);
      detail::count(detail::live_counters().buffers, -1);
    }
    if (d.memory) {
      vkFreeMemory(device_, d.memory, nullptr);  // (unmaps it too)
      detail::count(detail::live_counters().memory_allocations, -1);
      detail::count(detail::live_counters().memory_bytes, -int64_t(d.memory_bytes));
    }
  }
  deferred_.clear();
  return true;
}

bool Context::defer_if_running(VkCommandBuffer command_buffer) {
  if (!timed_out_.load()) return false;
  std::lock_guard lock(submit_mutex_);
  if (command_buffer != timed_out_command_ || settled_locked()) return false;
  deferred_.push_back({.command_buffer = command_buffer});
  return true;
}

bool Context::defer_if_running(VkBuffer buffer, VkDeviceMemory memory, uint64_t memory_bytes) {
  if (!timed_out_.load()) return false;
  std::lock_guard lock(submit_mutex_);
  if (settled_locked()) return false;
  spdlog::warn("turbokv: a buffer of {} bytes is destroyed once the work still running on {} has finished",
               memory_bytes, caps_.name);
  deferred_.push_back({.buffer = buffer, .memory = memory, .memory_bytes = memory_bytes});
  return true;
}

namespace {
std::string seconds_text(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", double(ns) / 1e9);
  return text;
}
}  // namespace

void Context::refuse_unsettled() const {
  fail(ErrorCode::vulkan, "earlier work on " + caps_.name + " timed out and is still running after another " +
                              seconds_text(wait_ns_) +
                              ": nothing submitted (the context takes new work once it finishes)");
}

void Context::submit_and_wait(VkCommandBuffer command_buffer) {
  std::lock_guard lock(submit_mutex_);
  if (!settled_locked()) refuse_unsettled();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &command_buffer;
  TKV_VK(vkResetFences(device_, 1, &fence_));
  TKV_VK(vkQueueSubmit(queue_, 1, &submit, fence_));
  // A bounded wait (ContextOptions::wait_timeout_ms): a hung GPU becomes an error instead of a
  // hang (60 s is far beyond any call). CPU drivers get 10 minutes: lavapipe compiles a pipeline's
  // shader at its first dispatch, inside the wait (the fused decode kernel, driver-specialized:
  // 37-44 s on 2 cores, more under load: the sanitizer run's timeouts of session 9). The work
  // keeps running: the command buffer and everything it uses stay allocated until it finishes.
  VkResult r = vkWaitForFences(device_, 1, &fence_, VK_TRUE, wait_ns_);
  if (r == VK_TIMEOUT) {
    timed_out_command_ = command_buffer;
    timed_out_ = true;
    fail(ErrorCode::vulkan, "vkWaitForFences timed out after " + seconds_text(wait_ns_) + " on " + caps_.name +
                                " (GPU hang?): the work keeps running, and the context takes no new work until it "
                                "finishes");
  }
  check(r, "vkWaitForFences");
}

void Context::run(const std::function<void(Recorder&)>& record) {
  if (!settled()) refuse_unsettled();  // (before recording anything)
  CommandBuffer cmd(*this);
  {
    Recorder recorder(*this, cmd.handle());
    recorder.begin();
    record(recorder);
    recorder.end();
  }
  submit_and_wait(cmd.handle());
}

}  // namespace tkv::vk
