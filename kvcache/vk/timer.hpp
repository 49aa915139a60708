// GPU timestamps: a query pool of `count` timestamps; read back in nanoseconds.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <vector>

namespace tkv::vk {

class Context;
class Recorder;

class TimestampPool {
 public:
  TimestampPool(Context& ctx, uint32_t count);
  ~TimestampPool();
  TimestampPool(const TimestampPool&) = delete;
  TimestampPool& operator=(const TimestampPool&) = delete;

  void reset(Recorder& r);                  // record before the first write
  void write(Recorder& r, uint32_t query);  // after all earlier commands complete
  // Nanoseconds of every query, after the submission completed.
  std::vector<double> read_ns();
  uint32_t count() const { return count_; }

 private:
  Context& ctx_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  uint32_t count_;
};

}  // namespace tkv::vk
