// A main for the fuzz targets in the normal build (any compiler, no libFuzzer): runs the target
// once on each file named, or on each file of each directory named (the seed corpus and the
// regression inputs), so that the targets keep compiling and their corpus keeps passing in the
// default test suite. Exit 1 when the Vulkan validation layer spoke (TKV_VALIDATION=1).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_common.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& e : fs::directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files in the arguments\n");
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot open %s\n", f.c_str());
      return 1;
    }
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  const uint64_t messages = tkv::vk::validation_messages_total();
  std::printf("replay: %zu inputs, %llu validation messages\n", files.size(), static_cast<unsigned long long>(messages));
  return messages == 0 ? 0 : 1;
}
