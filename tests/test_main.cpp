// The tests' main: GoogleTest, plus a check that no Vulkan validation message appeared while a
// test ran (with TKV_VALIDATION=1 every Instance enables the Khronos validation layer, with
// synchronization validation): the test that saw one fails, naming the count.
#include <gtest/gtest.h>

#include "kvcache/vk/context.hpp"

namespace {

class ValidationListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override { before_ = tkv::vk::validation_messages_total(); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const uint64_t seen = tkv::vk::validation_messages_total() - before_;
    if (seen == 0) return;
    std::fprintf(stderr, "%s.%s: %llu Vulkan validation message(s) (printed above)\n", info.test_suite_name(),
                 info.name(), static_cast<unsigned long long>(seen));
    failed_ = true;
  }
  bool failed() const { return failed_; }

 private:
  uint64_t before_ = 0;
  bool failed_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto* listener = new ValidationListener;  // owned by GoogleTest's listener list
  ::testing::UnitTest::GetInstance()->listeners().Append(listener);
  const int result = RUN_ALL_TESTS();
  return result != 0 ? result : (listener->failed() ? 1 : 0);
}
