#include "kvcache/vk/live_objects.hpp"

namespace tkv::vk {

namespace detail {
LiveCounters& live_counters() {
  static LiveCounters c;
  return c;
}
}  // namespace detail

LiveObjects live_objects() {
  const auto& c = detail::live_counters();
  auto get = [](const std::atomic<int64_t>& a) { return a.load(std::memory_order_relaxed); };
  return {get(c.buffers),         get(c.memory_allocations), get(c.memory_bytes),
          get(c.command_buffers), get(c.pipelines),          get(c.query_pools)};
}

std::string LiveObjects::str() const {
  return "buffers " + std::to_string(buffers) + ", memory " + std::to_string(memory_allocations) + " (" +
         std::to_string(memory_bytes) + " bytes), command buffers " + std::to_string(command_buffers) +
         ", pipelines " + std::to_string(pipelines) + ", query pools " + std::to_string(query_pools);
}

}  // namespace tkv::vk
