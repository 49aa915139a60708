// Counts of the Vulkan objects that turbokv's RAII wrappers hold right now, over the whole
// process (every Context). Tests and soak runs compare them before and after work to show that
// nothing accumulates. Each counter is a relaxed atomic, changed only where an object is created
// or destroyed (never per dispatch). Thread-safe; the values are a snapshot.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace tkv::vk {

struct LiveObjects {
  int64_t buffers = 0;             // VkBuffer held by vk::Buffer
  int64_t memory_allocations = 0;  // VkDeviceMemory held by vk::Buffer
  int64_t memory_bytes = 0;        // bytes of those allocations (VkMemoryRequirements::size)
  int64_t command_buffers = 0;     // VkCommandBuffer held by vk::CommandBuffer
  int64_t pipelines = 0;           // VkPipeline held by PipelineStores (built lazily, kept per Context)
  int64_t query_pools = 0;         // VkQueryPool held by vk::TimestampPool

  bool operator==(const LiveObjects&) const = default;
  // "buffers 3, memory 3 (1024 bytes), command buffers 0, pipelines 2, query pools 0"
  std::string str() const;
};

LiveObjects live_objects();

namespace detail {
struct LiveCounters {
  std::atomic<int64_t> buffers{0}, memory_allocations{0}, memory_bytes{0}, command_buffers{0}, pipelines{0},
      query_pools{0};
};
LiveCounters& live_counters();
inline void count(std::atomic<int64_t>& counter, int64_t delta) { counter.fetch_add(delta, std::memory_order_relaxed); }
}  // namespace detail

}  // namespace tkv::vk
