// Command recording: a thin helper over a VkCommandBuffer (ours or the caller's) with the few
// operations the engine records: bind a pipeline with its buffers and push constants, dispatch,
// compute-to-compute barriers, copies, small updates and timestamps.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <initializer_list>
#include <span>

#include "kvcache/vk/pipeline.hpp"

namespace tkv::vk {

class Buffer;
class Context;

// A primary command buffer allocated from the context's pool.
class CommandBuffer {
 public:
  explicit CommandBuffer(Context& ctx);
  ~CommandBuffer();
  CommandBuffer(const CommandBuffer&) = delete;
  CommandBuffer& operator=(const CommandBuffer&) = delete;
  VkCommandBuffer handle() const { return cmd_; }

 private:
  Context& ctx_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
};

// A view of [offset, offset + size) of a buffer (size VK_WHOLE_SIZE: to the end).
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = VK_WHOLE_SIZE;
  BufferRange() = default;
  BufferRange(const Buffer& b, VkDeviceSize offset = 0, VkDeviceSize size = VK_WHOLE_SIZE);
  BufferRange(VkBuffer b, VkDeviceSize offset = 0, VkDeviceSize size = VK_WHOLE_SIZE)
      : buffer(b), offset(offset), size(size) {}
};

class Recorder {
 public:
  Recorder(Context& ctx, VkCommandBuffer cmd) : ctx_(ctx), cmd_(cmd) {}
  VkCommandBuffer handle() const { return cmd_; }
  Context& context() const { return ctx_; }

  void begin();  // one-time-submit begin, for command buffers we own
  void end();

  // Binds `pipeline`, pushes its storage buffers (in binding order) and push constants.
  void bind(const Pipeline& pipeline, std::initializer_list<BufferRange> buffers,
            std::span<const std::byte> push_constants = {});
  void bind(const Pipeline& pipeline, std::span<const BufferRange> buffers,
            std::span<const std::byte> push_constants = {});
  template <class T>
  void bind(const Pipeline& pipeline, std::initializer_list<BufferRange> buffers, const T& push) {
    bind(pipeline, buffers, std::as_bytes(std::span<const T>(&push, 1)));
  }
  template <class T>
  void bind(const Pipeline& pipeline, std::span<const BufferRange> buffers, const T& push) {
    bind(pipeline, buffers, std::as_bytes(std::span<const T>(&push, 1)));
  }
  void dispatch(uint32_t x, uint32_t y = 1, uint32_t z = 1);

  // Makes compute-shader and transfer writes visible to later compute-shader and transfer access.
  void barrier();
  // Makes device writes visible to the host (before reading a mapped buffer after the wait).
  void host_barrier();

  void copy(const Buffer& src, VkDeviceSize src_offset, const Buffer& dst, VkDeviceSize dst_offset,
            VkDeviceSize size);
  void copy(VkBuffer src, VkBuffer dst, std::span<const VkBufferCopy> regions);
  // vkCmdUpdateBuffer, split into 64 KiB pieces; size and offset must be multiples of 4.
  void update(const Buffer& dst, VkDeviceSize offset, std::span<const std::byte> bytes);
  void fill(const Buffer& dst, VkDeviceSize offset, VkDeviceSize size, uint32_t value);

  void reset_queries(VkQueryPool pool, uint32_t first, uint32_t count);
  void timestamp(VkQueryPool pool, uint32_t query);

 private:
  Context& ctx_;
  VkCommandBuffer cmd_;
};

}  // namespace tkv::vk
