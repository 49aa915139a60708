#include "kvcache/vk/pipeline.hpp"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "kvcache/error.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/coopmat_khr.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/enveloped_file.hpp"
#include "kvcache/vk/live_objects.hpp"
#include "kvcache/vk/shader_registry.hpp"
#include "kvcache/vk/specialize.hpp"

namespace tkv::vk {
namespace {

// The files we keep, each in our checked envelope (enveloped_file.hpp): the driver's
// pipeline-cache blob, and host-specialized SPIR-V.
constexpr char kMagic[8] = {'T', 'K', 'V', 'P', 'C', 'v', '1', '\0'};
constexpr char kSpirvMagic[8] = {'T', 'K', 'V', 'S', 'P', 'v', '1', '\0'};
// Part of every host-specialized module's file name: change it when specialize.cpp's passes change.
constexpr uint64_t kSpecializeVersion = 1;

std::string default_cache_dir() {
  if (const char* d = std::getenv("TKV_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/turbokv";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/turbokv";
  return {};
}

// "name = value, ..." for every statistic of every executable of the pipeline.
std::string read_statistics(VkDevice d, VkPipeline pipeline) {
  auto props_fn = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(d, "vkGetPipelineExecutablePropertiesKHR"));
  auto stats_fn = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(d, "vkGetPipelineExecutableStatisticsKHR"));
  if (!props_fn || !stats_fn) return {};
  VkPipelineInfoKHR pinfo{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pinfo.pipeline = pipeline;
  uint32_t n = 0;
  if (props_fn(d, &pinfo, &n, nullptr) != VK_SUCCESS) return {};
  std::string out;
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR einfo{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    einfo.pipeline = pipeline;
    einfo.executableIndex = e;
    uint32_t count = 0;
    if (stats_fn(d, &einfo, &count, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> st(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (stats_fn(d, &einfo, &count, st.data()) != VK_SUCCESS) continue;
    for (const auto& s : st) {
      out += (out.empty() ? "" : ", ") + std::string(s.name) + " = ";
      switch (s.format) {
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: out += s.value.b32 ? "true" : "false"; break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: out += std::to_string(s.value.i64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: out += std::to_string(s.value.u64); break;
        case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: out += std::to_string(s.value.f64); break;
        default: out += "?"; break;
      }
    }
  }
  return out;
}

// Writes the driver's internal representations of the pipeline (whatever it offers: IR text,
// machine code) to files <dir>/<label>-<executable>-<name>.{txt,bin}, for reading the compiled
// code of a kernel (TKV_PIPELINE_IR=dir).
void dump_internal_representations(VkDevice d, VkPipeline pipeline, const std::string& dir, const std::string& label) {
  auto props_fn = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(d, "vkGetPipelineExecutablePropertiesKHR"));
  auto ir_fn = reinterpret_cast<PFN_vkGetPipelineExecutableInternalRepresentationsKHR>(
      vkGetDeviceProcAddr(d, "vkGetPipelineExecutableInternalRepresentationsKHR"));
  if (!props_fn || !ir_fn) return;
  VkPipelineInfoKHR pinfo{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  pinfo.pipeline = pipeline;
  uint32_t n = 0;
  if (props_fn(d, &pinfo, &n, nullptr) != VK_SUCCESS) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (uint32_t e = 0; e < n; ++e) {
    VkPipelineExecutableInfoKHR einfo{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    einfo.pipeline = pipeline;
    einfo.executableIndex = e;
    uint32_t count = 0;
    if (ir_fn(d, &einfo, &count, nullptr) != VK_SUCCESS || count == 0) continue;
    std::vector<VkPipelineExecutableInternalRepresentationKHR> irs(
        count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR});
    if (ir_fn(d, &einfo, &count, irs.data()) != VK_SUCCESS) continue;
    std::vector<std::vector<char>> data(count);
    for (uint32_t i = 0; i < count; ++i) {
      data[i].resize(irs[i].dataSize);
      irs[i].pData = data[i].data();
    }
    if (ir_fn(d, &einfo, &count, irs.data()) != VK_SUCCESS) continue;
    for (uint32_t i = 0; i < count; ++i) {
      std::string name = irs[i].name;
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      const std::string file = dir + "/" + label + "-" + std::to_string(e) + "-" + name + (irs[i].isText ? ".txt" : ".bin");
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out.write(data[i].data(), std::streamsize(irs[i].isText && !data[i].empty() ? data[i].size() - 1 : data[i].size()));
    }
  }
}

}  // namespace

PipelineStore::PipelineStore(Context& ctx, std::string cache_dir, bool persist) : ctx_(ctx) {
  if (persist) {
    if (cache_dir.empty()) cache_dir = default_cache_dir();
    if (!cache_dir.empty()) cache_file_ = cache_dir + "/pipelines-" + ctx.caps().pipeline_cache_uuid + ".bin";
  }
  load();
}

void PipelineStore::load() {
  std::vector<uint8_t> blob;
  if (!cache_file_.empty() && read_enveloped(cache_file_, kMagic, blob) == FileState::corrupt)
    spdlog::warn("turbokv: ignoring corrupt or unrecognised pipeline cache {}", cache_file_);
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = blob.size();
  info.pInitialData = blob.empty() ? nullptr : blob.data();
  if (vkCreatePipelineCache(ctx_.device(), &info, nullptr, &cache_) != VK_SUCCESS) {
    info.initialDataSize = 0;  // the driver refused the data: start empty
    info.pInitialData = nullptr;
    TKV_VK(vkCreatePipelineCache(ctx_.device(), &info, nullptr, &cache_));
  }
}

void PipelineStore::save() {
  std::lock_guard lock(mutex_);
  if (cache_file_.empty() || !cache_) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(ctx_.device(), cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<uint8_t> data(size);
  if (vkGetPipelineCacheData(ctx_.device(), cache_, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  write_enveloped(cache_file_, kMagic, data.data(), data.size());
}

PipelineStore::~PipelineStore() {
  try {
    save();
  } catch (...) {
  }
  VkDevice d = ctx_.device();
  for (auto& [key, p] : pipelines_) {
    vkDestroyPipeline(d, p.pipeline, nullptr);
    detail::count(detail::live_counters().pipelines, -1);
    vkDestroyPipelineLayout(d, p.layout, nullptr);
    vkDestroyDescriptorSetLayout(d, p.set_layout, nullptr);
  }
  for (auto& [name, m] : modules_) vkDestroyShaderModule(d, m, nullptr);
  if (cache_) vkDestroyPipelineCache(d, cache_, nullptr);
}

size_t PipelineStore::size() const {
  std::lock_guard lock(mutex_);
  return pipelines_.size();
}

const Pipeline& PipelineStore::get(const PipelineKey& key) {
  std::lock_guard lock(mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  return pipelines_.emplace(key, build(key)).first->second;
}

// The shader module of `key`: where the key asks for it, its SPIR-V specialized on the host
// (specialize.hpp), owned by the caller; else, or where that fails, the shared module of the
// embedded SPIR-V, which the driver specializes (`owned` false).
VkShaderModule PipelineStore::module_for(const PipelineKey& key, bool& owned) {
  VkDevice d = ctx_.device();
  auto words = find_shader(key.shader);
  if (words.empty()) fail(ErrorCode::invalid_argument, "no embedded shader named '" + key.shader + "'");
  const bool host = key.host_specialize && !key.constants.empty();
  const std::vector<uint32_t> specialized = host ? specialized_words(key, words) : std::vector<uint32_t>{};
  owned = !specialized.empty();
  const std::string name = key.shader + (key.coopmat_khr ? " (KHR matrices)" : "");
  if (!owned)
    if (auto it = modules_.find(name); it != modules_.end()) return it->second;
  std::span<const uint32_t> code = owned ? std::span<const uint32_t>(specialized) : words;
  const std::vector<uint32_t> khr = key.coopmat_khr ? coopmat_nv_to_khr(code) : std::vector<uint32_t>{};
  if (!khr.empty()) code = khr;
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = code.size() * 4;
  info.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  TKV_VK(vkCreateShaderModule(d, &info, nullptr, &module));
  if (!owned) modules_[name] = module;
  return module;
}

std::string PipelineStore::spirv_file(const PipelineKey& key, std::span<const uint32_t> words) const {
  if (cache_file_.empty()) return {};
  uint64_t h = fnv1a(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4);
  h = fnv1a(reinterpret_cast<const uint8_t*>(key.constants.data()), key.constants.size() * 4, h);
  h = fnv1a(reinterpret_cast<const uint8_t*>(&kSpecializeVersion), sizeof(kSpecializeVersion), h);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return (std::filesystem::path(cache_file_).parent_path() / "spirv" / (key.shader + "-" + hex + ".spv")).string();
}

std::string PipelineStore::specialized_file(const PipelineKey& key) const {
  return spirv_file(key, find_shader(key.shader));
}

// The host-specialized SPIR-V of `key`: from the cache directory when a valid file holds it (the
// optimizer takes ~1 s per decode pipeline), else made and written there. Empty: specializing
// failed (the caller falls back to the driver).
std::vector<uint32_t> PipelineStore::specialized_words(const PipelineKey& key, std::span<const uint32_t> words) {
  const std::string file = spirv_file(key, words);
  std::vector<uint8_t> bytes;
  if (!file.empty()) {
    const FileState state = read_enveloped(file, kSpirvMagic, bytes);
    if (state == FileState::valid && !bytes.empty() && bytes.size() % 4 == 0) {
      std::vector<uint32_t> out(bytes.size() / 4);
      std::memcpy(out.data(), bytes.data(), bytes.size());
      if (valid_spirv(out)) return out;
    }
    if (state != FileState::missing) spdlog::warn("turbokv: ignoring corrupt or invalid specialized shader {}", file);
  }
  std::vector<uint32_t> out = specialize_spirv(words, key.constants, key.shader);
  if (!file.empty() && !out.empty())
    write_enveloped(file, kSpirvMagic, reinterpret_cast<const uint8_t*>(out.data()), out.size() * 4);
  return out;
}

Pipeline PipelineStore::build(const PipelineKey& key) {
  VkDevice d = ctx_.device();
  bool owned_module = false;
  VkShaderModule module = module_for(key, owned_module);
  struct ModuleGuard {  // a specialized module is needed only while the pipeline is created
    VkDevice d;
    VkShaderModule m;
    ~ModuleGuard() {
      if (m) vkDestroyShaderModule(d, m, nullptr);
    }
  } guard{d, owned_module ? module : VK_NULL_HANDLE};

  Pipeline p;
  p.buffers = key.buffers;
  p.push_constant_bytes = key.push_constant_bytes;
  std::vector<VkDescriptorSetLayoutBinding> bindings(key.buffers);
  for (uint32_t i = 0; i < key.buffers; ++i)
    bindings[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  set_info.bindingCount = key.buffers;
  set_info.pBindings = bindings.data();
  TKV_VK(vkCreateDescriptorSetLayout(d, &set_info, nullptr, &p.set_layout));

  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, key.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &p.set_layout;
  layout_info.pushConstantRangeCount = key.push_constant_bytes ? 1 : 0;
  layout_info.pPushConstantRanges = key.push_constant_bytes ? &range : nullptr;
  if (VkResult r = vkCreatePipelineLayout(d, &layout_info, nullptr, &p.layout); r != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(d, p.set_layout, nullptr);
    throw_vk_error("vkCreatePipelineLayout", r);
  }

  std::vector<VkSpecializationMapEntry> entries(key.constants.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4, 4};
  VkSpecializationInfo spec{uint32_t(entries.size()), entries.data(), key.constants.size() * 4,
                            key.constants.data()};
  VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup{
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO};
  subgroup.requiredSubgroupSize = key.required_subgroup_size;

  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = entries.empty() || owned_module ? nullptr : &spec;
  if (key.required_subgroup_size) info.stage.pNext = &subgroup;
  VkPipelineRobustnessCreateInfoEXT robustness{VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT};
  robustness.storageBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT;
  robustness.uniformBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT_EXT;
  robustness.vertexInputs = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DEVICE_DEFAULT_EXT;
  robustness.images = VK_PIPELINE_ROBUSTNESS_IMAGE_BEHAVIOR_DEVICE_DEFAULT_EXT;
  if (!key.bounds_checks && ctx_.pipeline_robustness()) info.pNext = &robustness;
  info.layout = p.layout;
  const bool stats = ctx_.pipeline_statistics() && std::getenv("TKV_PIPELINE_STATS");
  if (stats) info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  const char* ir_dir = ctx_.pipeline_statistics() ? std::getenv("TKV_PIPELINE_IR") : nullptr;
  if (ir_dir && *ir_dir) info.flags |= VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR;
  if (VkResult r = vkCreateComputePipelines(d, cache_, 1, &info, nullptr, &p.pipeline); r != VK_SUCCESS) {
    vkDestroyPipelineLayout(d, p.layout, nullptr);
    vkDestroyDescriptorSetLayout(d, p.set_layout, nullptr);
    throw_vk_error("vkCreateComputePipelines [" + key.shader + "]", r);
  }
  detail::count(detail::live_counters().pipelines, 1);
  if (stats) p.statistics = read_statistics(d, p.pipeline);
  if (ir_dir && *ir_dir) {  // files named after the shader and a hash of its constants
    const auto* c = reinterpret_cast<const uint8_t*>(key.constants.data());
    std::string label = key.shader;
    label += '-';
    label += std::to_string(fnv1a(c, key.constants.size() * 4) % 1000000);
    dump_internal_representations(d, p.pipeline, ir_dir, label);
  }
  // With TKV_PIPELINE_STATS the statistics are what the caller asked for: logged at info level.
  const auto level = stats ? spdlog::level::info : spdlog::level::debug;
  if (spdlog::should_log(level)) {
    std::string values;
    for (uint32_t c : key.constants) {
      if (!values.empty()) values += ',';
      values += std::to_string(c);
    }
    spdlog::log(level, "turbokv: built pipeline {} with constants [{}] {}", key.shader, values, p.statistics);
  }
  return p;
}

}  // namespace tkv::vk
