// turbokv::Engine over tkv::vk::Context, and the public names of types and variants.
#include "turbokv/engine.hpp"

#include <string>

#include "attention/api/convert.hpp"
#include "attention/variants.hpp"
#include "kvcache/error.hpp"
#include "kvcache/types.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/requirements.hpp"

#ifndef TKV_VERSION
#error "TKV_VERSION must be defined by the build (attention/api/CMakeLists.txt)"
#endif

namespace turbokv {

static_assert(uint32_t(KvType::turbo4) == uint32_t(tkv::KvType::turbo4) &&
              uint32_t(KvType::q8_0) == uint32_t(tkv::KvType::q8_0));
static_assert(uint32_t(Variant::smem) == uint32_t(tkv::Variant::smem) && uint32_t(Variant::tc) == uint32_t(tkv::Variant::tc) &&
              uint32_t(Variant::automatic) == uint32_t(tkv::Variant::automatic));
static_assert(uint32_t(Format::f16) == uint32_t(tkv::RowFormat::f16) &&
              uint32_t(Format::f16) == uint32_t(tkv::TensorFormat::f16));

std::string_view version() { return TKV_VERSION; }

std::string_view kv_type_name(KvType type) { return tkv::type_name(detail::to_internal(type, "kv_type_name")); }
KvType parse_kv_type(std::string_view name) { return KvType(uint32_t(tkv::parse_type(name))); }
std::string_view variant_name(Variant variant) { return tkv::variant_name(detail::to_internal(variant)); }
Variant parse_variant(std::string_view name) { return Variant(uint32_t(tkv::parse_variant(name))); }

namespace {

tkv::vk::ContextOptions context_options(const EngineOptions& o) {
  tkv::vk::ContextOptions c;
  c.instance.validation = o.validation;
  c.device = o.device;
  c.cache_dir = o.cache_dir;
  c.persist_pipeline_cache = o.persist_pipeline_cache;
  c.wait_timeout_ms = o.wait_timeout_ms;
  return c;
}

}  // namespace

Engine Engine::create(const EngineOptions& options) { return Engine(tkv::vk::Context::create(context_options(options))); }

Engine Engine::adopt(const VulkanDevice& d, const EngineOptions& options) {
  tkv::vk::ExternalDevice e;
  e.instance = d.instance;
  e.instance_api_version = d.instance_api_version;
  e.physical_device = d.physical_device;
  e.device = d.device;
  e.create_info = d.create_info;
  e.queue = d.queue;
  e.queue_family = d.queue_family_index;
  return Engine(tkv::vk::Context::adopt(e, context_options(options)));
}

DeviceRequirements Engine::requirements(VkInstance instance, VkPhysicalDevice physical_device) {
  if (!instance || !physical_device)
    tkv::fail(tkv::ErrorCode::invalid_argument, "requirements: the instance or physical device is VK_NULL_HANDLE");
  const auto caps = tkv::vk::query_caps(instance, physical_device, 0);
  if (auto why = caps.unsupported_reason(); !why.empty())
    tkv::fail(tkv::ErrorCode::no_device, "device " + caps.name + " cannot run turbokv: " + why);
  const auto r = tkv::vk::device_requirements(physical_device);
  DeviceRequirements out;
  out.extensions = r.extensions;
  out.optional_extensions = r.optional_extensions;
  out.shader_int16 = r.shader_int16;
  out.shader_int64 = r.shader_int64;
  out.storage_buffer_16bit_access = r.storage_buffer_16bit_access;
  out.storage_buffer_8bit_access = r.storage_buffer_8bit_access;
  out.shader_float16 = r.shader_float16;
  out.shader_int8 = r.shader_int8;
  out.vulkan_memory_model = r.vulkan_memory_model;
  return out;
}

tkv::vk::Context& Engine::context() const {
  if (!ctx_) tkv::fail(tkv::ErrorCode::invalid_argument, "engine: the handle is empty");
  return *ctx_;
}

DeviceInfo Engine::info() const {
  const auto& c = context().caps();
  DeviceInfo i;
  i.name = c.name;
  i.vendor_id = c.vendor_id;
  i.device_id = c.device_id;
  i.device_class = tkv::device_class_name(c.device_class);
  i.driver_name = c.driver_name;
  i.driver_info = c.driver_info;
  i.api_version = c.api_version;
  i.subgroup_size = c.subgroup_size;
  i.compute_units = c.compute_units;
  i.device_local_bytes = c.device_local_bytes();
  i.adopted = !ctx_->owns_device();
  return i;
}

bool Engine::adopted() const { return !context().owns_device(); }
VkInstance Engine::vk_instance() const { return context().instance().handle(); }
VkPhysicalDevice Engine::vk_physical_device() const { return context().physical_device(); }
VkDevice Engine::vk_device() const { return context().device(); }
VkQueue Engine::vk_queue() const { return context().queue(); }
uint32_t Engine::queue_family_index() const { return context().queue_family(); }

void Engine::record_barrier(VkCommandBuffer command_buffer) const {
  auto& ctx = context();
  if (!command_buffer) tkv::fail(tkv::ErrorCode::invalid_argument, "record_barrier: the command buffer is VK_NULL_HANDLE");
  tkv::vk::Recorder(ctx, command_buffer).barrier();
}

}  // namespace turbokv
