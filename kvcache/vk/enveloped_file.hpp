// Files we keep between runs (the pipeline cache, host-specialized SPIR-V) in an envelope of
// our own: 8-byte magic, data size, FNV-1a hash of the data, data. A truncated or corrupt file is
// detected before the driver sees it (drivers check only their own header).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tkv::vk {

uint64_t fnv1a(const uint8_t* data, size_t n, uint64_t h = 1469598103934665603ull);

enum class FileState { missing, valid, corrupt };

// Reads the enveloped file at `path` into `data` (when valid).
FileState read_enveloped(const std::string& path, const char (&magic)[8], std::vector<uint8_t>& data);

// Writes `data` enveloped to `path` through a temporary file and a rename, so that readers never
// see half a file. Failures are silent: an unwritable directory only costs remaking the data.
void write_enveloped(const std::string& path, const char (&magic)[8], const uint8_t* data, size_t n);

}  // namespace tkv::vk
