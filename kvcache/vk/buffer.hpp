// Buffers: device-local storage and host-visible staging, with upload/download helpers.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace tkv::vk {

class Context;

enum class MemoryKind {
  device,     // device-local; on a discrete GPU not visible to the host
  upload,     // host-visible, coherent, write-combined where possible
  readback,   // host-visible, cached where possible
};

class Buffer {
 public:
  Buffer() = default;
  // size 0 is rounded up to 4 bytes so that a descriptor can still point at the buffer.
  Buffer(Context& ctx, uint64_t size, MemoryKind kind);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  bool host_visible() const { return mapped_ != nullptr; }
  // Host pointer of a host-visible buffer (null otherwise).
  void* mapped() const { return mapped_; }
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

 private:
  void release();
  Context* ctx_ = nullptr;
  VkDevice device_ = VK_NULL_HANDLE;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_ = 0;
  uint64_t memory_bytes_ = 0;  // size of memory_ (for vk::live_objects)
  void* mapped_ = nullptr;
};

// Copies bytes from the host into `dst` at `offset` (directly when host-visible, else through a
// staging buffer and a transfer), and waits.
void upload(Context& ctx, Buffer& dst, uint64_t offset, std::span<const std::byte> bytes);
// Copies `out.size()` bytes from `src` at `offset` to the host, and waits.
void download(Context& ctx, const Buffer& src, uint64_t offset, std::span<std::byte> out);

}  // namespace tkv::vk
