#include "kvcache/vk/buffer.hpp"

#include <spdlog/spdlog.h>

#include <cstring>
#include <string>
#include <utility>

#include "kvcache/error.hpp"
#include "kvcache/vk/check.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/live_objects.hpp"

namespace tkv::vk {

Buffer::Buffer(Context& ctx, uint64_t size, MemoryKind kind) : ctx_(&ctx), device_(ctx.device()) {
  size_ = size == 0 ? 4 : (size + 3) & ~uint64_t(3);
  const auto& caps = ctx.caps();
  if (caps.max_allocation_size && size_ > caps.max_allocation_size)
    fail(ErrorCode::capacity, "buffer of " + std::to_string(size_) + " bytes exceeds the device's largest allocation (" +
                                  std::to_string(caps.max_allocation_size) + " bytes) on " + caps.name);
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size_;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TKV_VK(vkCreateBuffer(device_, &info, nullptr, &buffer_));
  detail::count(detail::live_counters().buffers, 1);
  try {
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, buffer_, &req);
    uint32_t type = 0;
    switch (kind) {
      case MemoryKind::device:
        type = ctx.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        break;
      case MemoryKind::upload:
        type = ctx.memory_type(req.memoryTypeBits,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        break;
      case MemoryKind::readback:
        type = ctx.memory_type(req.memoryTypeBits,
                               VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                               VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
        break;
    }
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = type;
    TKV_VK(vkAllocateMemory(device_, &alloc, nullptr, &memory_));
    memory_bytes_ = req.size;
    detail::count(detail::live_counters().memory_allocations, 1);
    detail::count(detail::live_counters().memory_bytes, int64_t(memory_bytes_));
    spdlog::trace("turbokv: buffer of {} bytes in memory type {} (device local {}, host visible {})", size_,
                  type, ctx.memory_type_has(type, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT),
                  ctx.memory_type_has(type, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT));
    TKV_VK(vkBindBufferMemory(device_, buffer_, memory_, 0));
    if (ctx.memory_type_has(type, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
      TKV_VK(vkMapMemory(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_));
  } catch (...) {
    release();
    throw;
  }
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  // Work that timed out may still read or write it: the context destroys it once that work ends.
  if ((buffer_ || memory_) && ctx_ && ctx_->defer_if_running(buffer_, memory_, memory_bytes_)) {
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    mapped_ = nullptr;
    memory_bytes_ = 0;
    return;
  }
  if (mapped_) vkUnmapMemory(device_, memory_);
  if (buffer_) {
    vkDestroyBuffer(device_, buffer_, nullptr);
    detail::count(detail::live_counters().buffers, -1);
  }
  if (memory_) {
    vkFreeMemory(device_, memory_, nullptr);
    detail::count(detail::live_counters().memory_allocations, -1);
    detail::count(detail::live_counters().memory_bytes, -int64_t(memory_bytes_));
  }
  mapped_ = nullptr;
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  memory_bytes_ = 0;
}

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    ctx_ = o.ctx_;
    device_ = o.device_;
    buffer_ = std::exchange(o.buffer_, VK_NULL_HANDLE);
    memory_ = std::exchange(o.memory_, VK_NULL_HANDLE);
    memory_bytes_ = std::exchange(o.memory_bytes_, 0);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, nullptr);
  }
  return *this;
}

static void check_range(const Buffer& b, uint64_t offset, uint64_t n, const char* what) {
  if (offset > b.size() || n > b.size() - offset)
    fail(ErrorCode::invalid_argument, std::string(what) + ": range [" + std::to_string(offset) + ", +" +
                                          std::to_string(n) + ") is outside a buffer of " + std::to_string(b.size()) +
                                          " bytes");
}

void upload(Context& ctx, Buffer& dst, uint64_t offset, std::span<const std::byte> bytes) {
  check_range(dst, offset, bytes.size(), "upload");
  if (bytes.empty()) return;
  if (dst.host_visible()) {
    std::memcpy(static_cast<std::byte*>(dst.mapped()) + offset, bytes.data(), bytes.size());
    return;
  }
  Buffer staging(ctx, bytes.size(), MemoryKind::upload);
  std::memcpy(staging.mapped(), bytes.data(), bytes.size());
  ctx.run([&](Recorder& r) { r.copy(staging, 0, dst, offset, bytes.size()); });
}

void download(Context& ctx, const Buffer& src, uint64_t offset, std::span<std::byte> out) {
  check_range(src, offset, out.size(), "download");
  if (out.empty()) return;
  if (src.host_visible()) {
    std::memcpy(out.data(), static_cast<const std::byte*>(src.mapped()) + offset, out.size());
    return;
  }
  Buffer staging(ctx, out.size(), MemoryKind::readback);
  ctx.run([&](Recorder& r) { r.copy(src, offset, staging, 0, out.size()); });
  std::memcpy(out.data(), staging.mapped(), out.size());
}

}  // namespace tkv::vk
