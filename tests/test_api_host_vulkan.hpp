// The tests of the host-owned path use the example's host application (examples/host_vulkan.hpp)
// and expect its validation layer to say nothing.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "examples/host_vulkan.hpp"

namespace tkv::test {

using example::HostBuffer;
using example::HostDeviceOptions;
using example::vk_ok;

class HostVulkan : public example::HostVulkan {
 public:
  using example::HostVulkan::HostVulkan;
  // Destroys the host and expects that its validation layer said nothing during its life.
  static void destroy_expecting_no_messages(std::unique_ptr<HostVulkan>& host) {
    const auto counter = host->message_counter();
    host.reset();
    EXPECT_EQ(counter->load(), 0u) << "validation messages on the host's instance (printed above)";
  }
};

}  // namespace tkv::test
