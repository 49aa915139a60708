#include "profile/workloads.hpp"

#include <charconv>

#include "kvcache/error.hpp"

namespace tkv::prof {

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> table = {
      {"llama8b", 32, 8, 128, 32},
      {"qwen7b", 28, 4, 128, 28},
      {"mha64", 16, 16, 64, 24},
      {"wide256", 16, 8, 256, 32},
  };
  return table;
}

const Workload& find_workload(std::string_view name) {
  std::string known;
  for (const auto& w : workloads()) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  fail(ErrorCode::invalid_argument, "unknown workload '" + std::string(name) + "' (known: " + known + ")");
}

namespace {

uint32_t parse_count(std::string_view s, std::string_view whole) {
  auto bad = [&] { fail(ErrorCode::invalid_argument, "malformed depth '" + std::string(s) + "' in '" + std::string(whole) +
                                                          "' (use e.g. 4096, 4k, 1k..128k or 1k,8k,32k)"); };
  if (s.empty()) bad();
  uint64_t mult = 1;
  if (s.back() == 'k' || s.back() == 'K') {
    mult = 1024;
    s.remove_suffix(1);
  }
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v == 0 || v * mult > 0xffffffffull) bad();
  return uint32_t(v * mult);
}

}  // namespace

std::vector<uint32_t> parse_depths(std::string_view text) {
  std::vector<uint32_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    if (auto dots = item.find(".."); dots != std::string_view::npos) {
      uint32_t lo = parse_count(item.substr(0, dots), text), hi = parse_count(item.substr(dots + 2), text);
      if (lo > hi) fail(ErrorCode::invalid_argument, "depth range '" + std::string(item) + "' runs backwards");
      for (uint64_t d = lo; d <= hi; d *= 2) out.push_back(uint32_t(d));
    } else {
      out.push_back(parse_count(item, text));
    }
    start = comma + 1;
  }
  return out;
}

std::string depth_label(uint32_t tokens) {
  if (tokens % 1024 == 0) return std::to_string(tokens / 1024) + "K";
  return std::to_string(tokens);
}

}  // namespace tkv::prof
