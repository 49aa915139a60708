#include "kvcache/vk/enveloped_file.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace tkv::vk {

uint64_t fnv1a(const uint8_t* data, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

FileState read_enveloped(const std::string& path, const char (&magic)[8], std::vector<uint8_t>& data) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileState::missing;
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t header = sizeof(magic) + 16;
  if (file.size() < header || std::memcmp(file.data(), magic, sizeof(magic)) != 0)
    return file.empty() ? FileState::missing : FileState::corrupt;
  uint64_t size = 0, hash = 0;
  std::memcpy(&size, file.data() + 8, 8);
  std::memcpy(&hash, file.data() + 16, 8);
  if (size != file.size() - header || fnv1a(file.data() + header, size) != hash) return FileState::corrupt;
  data.assign(file.begin() + header, file.end());
  return FileState::valid;
}

void write_enveloped(const std::string& path, const char (&magic)[8], const uint8_t* data, size_t n) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Unique per process and per write: several contexts on one device share the files.
  static std::atomic<uint64_t> writes{0};
  const std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    const uint64_t size = n, hash = fnv1a(data, n);
    out.write(magic, sizeof(magic));
    out.write(reinterpret_cast<const char*>(&size), 8);
    out.write(reinterpret_cast<const char*>(&hash), 8);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(n));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);  // atomic: readers see the old file or the new one
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace tkv::vk
