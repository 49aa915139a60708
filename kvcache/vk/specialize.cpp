#include "kvcache/vk/specialize.hpp"

#include <spdlog/spdlog.h>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <chrono>
#include <unordered_map>

namespace tkv::vk {
namespace {

constexpr uint32_t kOpDecorate = 71, kDecorationBuiltIn = 11, kBuiltInWorkgroupSize = 25;

// Whether the module declares its workgroup size through the WorkgroupSize built-in (shaders with
// local_size_x_id): that constant must survive, or the size falls back to the LocalSize mode's 1.
bool has_workgroup_size_builtin(std::span<const uint32_t> words) {
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xffffu;
    if (count == 0 || i + count > words.size()) return false;
    if (op == kOpDecorate && count >= 4 && words[i + 2] == kDecorationBuiltIn && words[i + 3] == kBuiltInWorkgroupSize)
      return true;
    i += count;
  }
  return false;
}

}  // namespace

std::vector<uint32_t> specialize_spirv(std::span<const uint32_t> words, std::span<const uint32_t> constants,
                                       const std::string& shader) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> values;
  for (uint32_t i = 0; i < constants.size(); ++i) values[i] = {constants[i]};
  spvtools::Optimizer opt(SPV_ENV_VULKAN_1_2);
  std::string messages;
  opt.SetMessageConsumer([&](spv_message_level_t level, const char*, const spv_position_t&, const char* m) {
    if (level <= SPV_MSG_ERROR) messages += std::string(m) + "; ";
  });
  // (No dead-constant elimination: it drops the WorkgroupSize built-in's constant.)
  opt.RegisterPass(spvtools::CreateSetSpecConstantDefaultValuePass(values))
      .RegisterPass(spvtools::CreateFreezeSpecConstantValuePass())
      .RegisterPass(spvtools::CreateFoldSpecConstantOpAndCompositePass())
      .RegisterPerformancePasses()  // dead branches of the frozen constants go before unrolling
      .RegisterPass(spvtools::CreateLoopUnrollPass(true))
      .RegisterPerformancePasses();
  std::vector<uint32_t> out;
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = false;
  try {
    ok = opt.Run(words.data(), words.size(), &out) && valid_spirv(out);
  } catch (const std::exception& e) {
    messages += e.what();
  }
  spdlog::debug("turbokv: specialized {} on the host in {:.0f} ms ({} -> {} words)", shader,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                words.size(), out.size());
  if (!ok ||
      (has_workgroup_size_builtin(words) && !has_workgroup_size_builtin(out))) {
    spdlog::warn("turbokv: specializing shader {} on the host failed ({}); the driver specializes it", shader,
                 !messages.empty() ? messages : ok ? "workgroup size lost" : "invalid output");
    return {};
  }
  return out;
}

bool valid_spirv(std::span<const uint32_t> words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  return tools.IsValid() && tools.Validate(words.data(), words.size());
}

}  // namespace tkv::vk
