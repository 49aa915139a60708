// The standard workloads of performance.md, named the same in turboprof, bench/ and results.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tkv::prof {

struct Workload {
  std::string name;
  uint32_t q_heads;
  uint32_t kv_heads;
  uint32_t head_dim;
  uint32_t layers;  // of the model, for the decode-step view
};

const std::vector<Workload>& workloads();
// Throws tkv::Error(invalid_argument) naming the unknown workload and listing the known ones.
const Workload& find_workload(std::string_view name);

// "1k..128k" (doubling), "512,4k,16384", "8k": token counts; k = 1024. Throws on malformed text.
std::vector<uint32_t> parse_depths(std::string_view text);
std::string depth_label(uint32_t tokens);  // 4096 -> "4K"

}  // namespace tkv::prof
