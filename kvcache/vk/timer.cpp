#include "kvcache/vk/timer.hpp"

#include "kvcache/error.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/live_objects.hpp"

namespace tkv::vk {

TimestampPool::TimestampPool(Context& ctx, uint32_t count) : ctx_(ctx), count_(count) {
  if (!ctx.caps().timestamps) fail(ErrorCode::vulkan, "device " + ctx.caps().name + " has no compute timestamps");
  VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = count;
  TKV_VK(vkCreateQueryPool(ctx.device(), &info, nullptr, &pool_));
  detail::count(detail::live_counters().query_pools, 1);
}

TimestampPool::~TimestampPool() {
  if (!pool_) return;
  vkDestroyQueryPool(ctx_.device(), pool_, nullptr);
  detail::count(detail::live_counters().query_pools, -1);
}

void TimestampPool::reset(Recorder& r) { r.reset_queries(pool_, 0, count_); }

void TimestampPool::write(Recorder& r, uint32_t query) {
  if (query >= count_) fail(ErrorCode::invalid_argument, "timestamp query index out of range");
  r.timestamp(pool_, query);
}

std::vector<double> TimestampPool::read_ns() {
  std::vector<uint64_t> ticks(count_);
  TKV_VK(vkGetQueryPoolResults(ctx_.device(), pool_, 0, count_, ticks.size() * 8, ticks.data(), 8,
                               VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  std::vector<double> ns(count_);
  for (uint32_t i = 0; i < count_; ++i) ns[i] = double(ticks[i]) * ctx_.caps().timestamp_period_ns;
  return ns;
}

}  // namespace tkv::vk
