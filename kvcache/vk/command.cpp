#include "kvcache/vk/command.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "kvcache/error.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/live_objects.hpp"

namespace tkv::vk {

CommandBuffer::CommandBuffer(Context& ctx) : ctx_(ctx) {
  VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  info.commandPool = ctx.command_pool();
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  TKV_VK(vkAllocateCommandBuffers(ctx.device(), &info, &cmd_));
  detail::count(detail::live_counters().command_buffers, 1);
}

CommandBuffer::~CommandBuffer() {
  if (!cmd_) return;
  if (ctx_.defer_if_running(cmd_)) return;  // still running after a timed-out wait: freed once it ends
  vkFreeCommandBuffers(ctx_.device(), ctx_.command_pool(), 1, &cmd_);
  detail::count(detail::live_counters().command_buffers, -1);
}

BufferRange::BufferRange(const Buffer& b, VkDeviceSize offset, VkDeviceSize size)
    : buffer(b.handle()), offset(offset), size(size) {}

void Recorder::begin() {
  VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  TKV_VK(vkBeginCommandBuffer(cmd_, &info));
}

void Recorder::end() { TKV_VK(vkEndCommandBuffer(cmd_)); }

void Recorder::bind(const Pipeline& pipeline, std::initializer_list<BufferRange> buffers,
                    std::span<const std::byte> push_constants) {
  bind(pipeline, std::span<const BufferRange>(buffers.begin(), buffers.size()), push_constants);
}

void Recorder::bind(const Pipeline& pipeline, std::span<const BufferRange> buffers,
                    std::span<const std::byte> push_constants) {
  if (buffers.size() != pipeline.buffers)
    fail(ErrorCode::invalid_argument, "pipeline expects " + std::to_string(pipeline.buffers) + " buffers, got " +
                                          std::to_string(buffers.size()));
  if (push_constants.size() != pipeline.push_constant_bytes)
    fail(ErrorCode::invalid_argument, "pipeline expects " + std::to_string(pipeline.push_constant_bytes) +
                                          " bytes of push constants, got " + std::to_string(push_constants.size()));
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkWriteDescriptorSet> writes;
  infos.reserve(buffers.size());
  for (const auto& b : buffers) infos.push_back({b.buffer, b.offset, b.size});
  for (uint32_t i = 0; i < infos.size(); ++i) {
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstBinding = i;
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &infos[i];
    writes.push_back(w);
  }
  if (!writes.empty())
    ctx_.push_descriptor_fn()(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, uint32_t(writes.size()),
                              writes.data());
  if (!push_constants.empty())
    vkCmdPushConstants(cmd_, pipeline.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, uint32_t(push_constants.size()),
                       push_constants.data());
}

void Recorder::dispatch(uint32_t x, uint32_t y, uint32_t z) {
  if (x == 0 || y == 0 || z == 0) return;
  vkCmdDispatch(cmd_, x, y, z);
}

void Recorder::barrier() {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0, nullptr, 0,
                       nullptr);
}

void Recorder::host_barrier() {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0, nullptr, 0, nullptr);
}

void Recorder::copy(const Buffer& src, VkDeviceSize src_offset, const Buffer& dst, VkDeviceSize dst_offset,
                    VkDeviceSize size) {
  if (size == 0) return;
  VkBufferCopy region{src_offset, dst_offset, size};
  vkCmdCopyBuffer(cmd_, src.handle(), dst.handle(), 1, &region);
}

void Recorder::copy(VkBuffer src, VkBuffer dst, std::span<const VkBufferCopy> regions) {
  if (regions.empty()) return;
  vkCmdCopyBuffer(cmd_, src, dst, uint32_t(regions.size()), regions.data());
}

void Recorder::update(const Buffer& dst, VkDeviceSize offset, std::span<const std::byte> bytes) {
  if (offset % 4 || bytes.size() % 4)
    fail(ErrorCode::invalid_argument, "vkCmdUpdateBuffer needs 4-byte aligned offset and size");
  constexpr size_t kMax = 65536;
  for (size_t done = 0; done < bytes.size(); done += kMax) {
    const size_t n = std::min(kMax, bytes.size() - done);
    vkCmdUpdateBuffer(cmd_, dst.handle(), offset + done, n, bytes.data() + done);
  }
}

void Recorder::fill(const Buffer& dst, VkDeviceSize offset, VkDeviceSize size, uint32_t value) {
  if (size == 0) return;
  vkCmdFillBuffer(cmd_, dst.handle(), offset, size, value);
}

void Recorder::reset_queries(VkQueryPool pool, uint32_t first, uint32_t count) {
  vkCmdResetQueryPool(cmd_, pool, first, count);
}

void Recorder::timestamp(VkQueryPool pool, uint32_t query) {
  vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, query);
}

}  // namespace tkv::vk
