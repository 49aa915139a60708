#include "kvcache/persist.hpp"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <memory>
#include <ostream>
#include <sstream>
#include <streambuf>

#include "kvcache/error.hpp"

namespace tkv {
namespace {

constexpr char kMagic[8] = {'T', 'K', 'V', 'C', 'A', 'C', 'H', 'E'};
constexpr uint64_t kFixedHeaderBytes = 8 + 4 * 7;  // magic, version, 5 shape fields, sequence count
// Largest slot count a KvCache has (CacheConfig::max_sequences); more is not a file of ours.
constexpr uint64_t kMaxFileSequences = 65536;
constexpr uint64_t kMaxFileLayers = 65536;
constexpr uint64_t kMaxFileHeads = 65536;
constexpr size_t kChunkBytes = 1 << 20;  // rows exported / imported at a time

// ---- checksum ----

// xxHash's XXH3-64, streamed. A library hash rather than a hand-written one: its output is fixed
// by the xxHash specification, so other tools can check a file.
class Hasher {
 public:
  Hasher() : state_(XXH3_createState()) {
    if (!state_ || XXH3_64bits_reset(state_.get()) != XXH_OK) fail(ErrorCode::io, "cache file: xxHash state failed");
  }
  void update(const void* data, size_t n) { XXH3_64bits_update(state_.get(), data, n); }
  uint64_t digest() const { return XXH3_64bits_digest(state_.get()); }

 private:
  struct Free {
    void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
  };
  std::unique_ptr<XXH3_state_t, Free> state_;
};

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(uint8_t(v >> (8 * i)));
}
uint32_t get_u32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t get_u64(const uint8_t* p) { return uint64_t(get_u32(p)) | uint64_t(get_u32(p + 4)) << 32; }

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// a * b + c, or fail when it passes 2^62 (no real file is that large: the header is corrupt).
uint64_t checked_mul_add(const std::string& name, uint64_t a, uint64_t b, uint64_t c) {
  constexpr uint64_t kLimit = uint64_t(1) << 62;
  if (b != 0 && a > (kLimit - c) / b) fail(ErrorCode::io, name + ": corrupt header: the sizes it gives overflow");
  return a * b + c;
}

// ---- reading ----

// A stream read from its starting position, with the checksum of what was read and errors that
// name the source.
class Reader {
 public:
  Reader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  uint64_t offset() const { return offset_; }
  Hasher& hasher() { return hasher_; }
  // The size the header says the file has: only for the message of a truncated file.
  void set_expected_size(uint64_t bytes) { expected_ = bytes; }

  void read(void* data, size_t n, const char* what) {
    in_.read(static_cast<char*>(data), std::streamsize(n));
    const auto got = size_t(in_.gcount());
    offset_ += got;
    if (got != n) {
      if (in_.bad()) fail(ErrorCode::io, name_ + ": cannot read (" + what + "): " + std::strerror(errno));
      fail(ErrorCode::io, name_ + ": truncated: the file ends at byte " + std::to_string(offset_) + " inside the " +
                              what + (expected_ ? ", the header says it has " + std::to_string(expected_) + " bytes"
                                                : std::string()));
    }
    hasher_.update(data, n);
  }
  // Reads up to n bytes (fewer only at the end of the stream); returns how many.
  size_t read_some(void* data, size_t n) {
    in_.read(static_cast<char*>(data), std::streamsize(n));
    const auto got = size_t(in_.gcount());
    offset_ += got;
    hasher_.update(data, got);
    return got;
  }
  // True when nothing is left.
  bool at_end() {
    return in_.peek() == std::char_traits<char>::eof();
  }

 private:
  std::istream& in_;
  std::string name_;
  uint64_t offset_ = 0;
  uint64_t expected_ = 0;
  Hasher hasher_;
};

struct Parsed {
  CacheFileInfo info;
  uint64_t header_bytes = 0;
  uint64_t header_digest = 0;
};

uint64_t side_row_bytes(const CacheFileInfo& f, Side side) {
  return row_bytes(side == Side::k ? f.k_type : f.v_type, f.head_dim);
}

// Bytes of the rows of one sequence.
uint64_t sequence_rows_bytes(const std::string& name, const CacheFileInfo& f, size_t s) {
  const uint64_t per_token = (side_row_bytes(f, Side::k) + side_row_bytes(f, Side::v)) * f.kv_heads;
  uint64_t total = 0;
  for (uint32_t len : f.lengths[s]) total = checked_mul_add(name, len, per_token, total);
  return total;
}

bool type_known(uint32_t id) {
  return std::any_of(std::begin(kAllTypes), std::end(kAllTypes), [&](KvType t) { return uint32_t(t) == id; });
}

// Reads and checks the header (magic, version, plausibility, header checksum). Leaves the reader
// at the first row byte.
Parsed read_header(Reader& r) {
  const std::string& name = r.name();
  std::array<uint8_t, kFixedHeaderBytes> fixed{};
  std::vector<uint8_t> header;
  // The magic first, alone: a file shorter than it, or that starts otherwise, is not a cache file
  // (rather than a truncated one).
  const size_t got = r.read_some(fixed.data(), 8);
  if (got < 8 || std::memcmp(fixed.data(), kMagic, 8) != 0)
    fail(ErrorCode::io, name + ": not a turbokv cache file (" +
                            (got < 8 ? "it has only " + std::to_string(got) + " bytes" : "the first 8 bytes are not \"TKVCACHE\"") +
                            ")");
  r.read(fixed.data() + 8, 4, "header");
  Parsed p;
  CacheFileInfo& f = p.info;
  f.version = get_u32(fixed.data() + 8);
  if (f.version == 0 || f.version > kCacheFileVersion)
    fail(ErrorCode::io, name + ": format version " + std::to_string(f.version) +
                            (f.version > kCacheFileVersion ? " is newer than this build reads (" : " is unknown (") +
                            std::to_string(kCacheFileVersion) + ")");
  r.read(fixed.data() + 12, kFixedHeaderBytes - 12, "header");
  const uint32_t k_type = get_u32(fixed.data() + 12), v_type = get_u32(fixed.data() + 16);
  f.head_dim = get_u32(fixed.data() + 20);
  f.kv_heads = get_u32(fixed.data() + 24);
  f.layers = get_u32(fixed.data() + 28);
  const uint32_t sequences = get_u32(fixed.data() + 32);
  // Bounds that keep a damaged count from reading (or allocating) without end; the checksum
  // below decides whether the header is intact.
  if (sequences > kMaxFileSequences || f.layers > kMaxFileLayers)
    fail(ErrorCode::io, name + ": corrupt header: " + std::to_string(sequences) + " sequences of " +
                            std::to_string(f.layers) + " layers (at most " + std::to_string(kMaxFileSequences) +
                            " of " + std::to_string(kMaxFileLayers) + ")");
  header.assign(fixed.begin(), fixed.end());
  f.lengths.resize(sequences);
  for (uint32_t s = 0; s < sequences; ++s) {
    f.lengths[s].resize(f.layers);
    std::vector<uint8_t> raw(size_t(f.layers) * 4);
    r.read(raw.data(), raw.size(), "header's lengths");
    for (uint32_t l = 0; l < f.layers; ++l) f.lengths[s][l] = get_u32(raw.data() + 4 * l);
    header.insert(header.end(), raw.begin(), raw.end());
  }
  std::array<uint8_t, 8> stored{};
  r.read(stored.data(), 8, "header checksum");
  p.header_digest = XXH3_64bits(header.data(), header.size());
  if (get_u64(stored.data()) != p.header_digest)
    fail(ErrorCode::io, name + ": corrupt header: checksum " + hex64(get_u64(stored.data())) + " stored, " +
                            hex64(p.header_digest) + " computed");
  p.header_bytes = header.size() + 8;

  // An intact header with values this build cannot hold.
  if (!type_known(k_type) || !type_known(v_type))
    fail(ErrorCode::io, name + ": unknown type id " + std::to_string(type_known(k_type) ? v_type : k_type) +
                            " for " + (type_known(k_type) ? "V" : "K") + " (a newer format?)");
  f.k_type = KvType(k_type);
  f.v_type = KvType(v_type);
  if (f.head_dim == 0 || f.head_dim > 256)
    fail(ErrorCode::io, name + ": head_dim " + std::to_string(f.head_dim) + " is outside 1..256");
  if (f.kv_heads == 0 || f.kv_heads > kMaxFileHeads)
    fail(ErrorCode::io, name + ": kv_heads " + std::to_string(f.kv_heads) + " is outside 1.." +
                            std::to_string(kMaxFileHeads));
  if (f.layers == 0) fail(ErrorCode::io, name + ": layers is 0");

  uint64_t rows = 0;
  for (size_t s = 0; s < f.lengths.size(); ++s) rows = checked_mul_add(name, 1, sequence_rows_bytes(name, f, s), rows);
  f.file_bytes = checked_mul_add(name, 1, rows, p.header_bytes + 8);
  r.set_expected_size(f.file_bytes);
  return p;
}

// Reads the trailer and checks it against what was read, then that nothing follows.
void check_trailer(Reader& r) {
  const uint64_t computed = r.hasher().digest();
  std::array<uint8_t, 8> stored{};
  r.read(stored.data(), 8, "trailing checksum");
  if (get_u64(stored.data()) != computed)
    fail(ErrorCode::io, r.name() + ": corrupt: checksum " + hex64(get_u64(stored.data())) + " stored, " +
                            hex64(computed) + " computed over the " + std::to_string(r.offset() - 8) + " bytes before it");
  if (!r.at_end())
    fail(ErrorCode::io, r.name() + ": unexpected bytes after the trailing checksum at byte " +
                            std::to_string(r.offset()) + " (the file should end there)");
}

// Pass 1: the whole file, checked; nothing kept but the header.
Parsed validate(Reader& r) {
  Parsed p = read_header(r);
  uint64_t left = p.info.file_bytes - p.header_bytes - 8;
  std::vector<uint8_t> chunk(std::min<uint64_t>(left, kChunkBytes));
  while (left > 0) {
    const size_t n = size_t(std::min<uint64_t>(left, chunk.size()));
    r.read(chunk.data(), n, "rows");
    left -= n;
  }
  check_trailer(r);
  return p;
}

// A read-only streambuf over caller's bytes (no copy); seekable.
class SpanBuf : public std::streambuf {
 public:
  explicit SpanBuf(std::span<const uint8_t> bytes) {
    char* p = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
    setg(p, p, p + bytes.size());
  }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode which) override {
    if (!(which & std::ios_base::in)) return pos_type(off_type(-1));
    const off_type base = dir == std::ios_base::beg ? 0 : dir == std::ios_base::cur ? gptr() - eback() : egptr() - eback();
    const off_type to = base + off;
    if (to < 0 || to > egptr() - eback()) return pos_type(off_type(-1));
    setg(eback(), eback() + to, egptr());
    return pos_type(to);
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }
};

std::ifstream open_for_reading(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorCode::io, "cache file " + path + ": cannot open: " + std::strerror(errno));
  return in;
}

// ---- loading ----

// The file's shape against the cache's; "" when they match.
std::string shape_mismatch(const CacheFileInfo& f, const CacheConfig& c) {
  auto differs = [](const char* what, const std::string& file, const std::string& cache) {
    return std::string(what) + " is " + file + " in the file, " + cache + " in the cache";
  };
  if (f.k_type != c.k_type) return differs("K type", std::string(type_name(f.k_type)), std::string(type_name(c.k_type)));
  if (f.v_type != c.v_type) return differs("V type", std::string(type_name(f.v_type)), std::string(type_name(c.v_type)));
  if (f.head_dim != c.head_dim) return differs("head_dim", std::to_string(f.head_dim), std::to_string(c.head_dim));
  if (f.kv_heads != c.kv_heads) return differs("kv_heads", std::to_string(f.kv_heads), std::to_string(c.kv_heads));
  if (f.layers != c.layers) return differs("layers", std::to_string(f.layers), std::to_string(c.layers));
  return {};
}

void check_room(const std::string& name, const KvCache& cache, const CacheFileInfo& f) {
  const uint64_t live = cache.sequences().size();
  const uint64_t free_slots = cache.config().max_sequences - live;
  if (f.lengths.size() > free_slots)
    fail(ErrorCode::capacity, name + ": " + std::to_string(f.lengths.size()) + " sequences do not fit: the cache has " +
                                  std::to_string(free_slots) + " free sequence slots of " +
                                  std::to_string(cache.config().max_sequences) + "; nothing was loaded");
  const uint64_t page = cache.config().page_size;
  uint64_t pages = 0;
  for (const auto& lengths : f.lengths) {
    const uint64_t longest = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
    pages += (longest + page - 1) / page;
  }
  if (pages > cache.free_pages())
    fail(ErrorCode::capacity, name + ": the sequences need " + std::to_string(pages) + " pages of " +
                                  std::to_string(page) + " tokens, the cache has " +
                                  std::to_string(cache.free_pages()) + " free of " +
                                  std::to_string(cache.total_pages()) + "; nothing was loaded");
}

// Pass 2: import, re-reading the file. `expected` is pass 1's header; the file must not have
// changed in between (its checksum is checked again at the end).
std::vector<SequenceId> import_all(KvCache& cache, Reader& r, const Parsed& expected) {
  const Parsed p = read_header(r);
  if (p.header_digest != expected.header_digest || p.info.file_bytes != expected.info.file_bytes)
    fail(ErrorCode::io, r.name() + ": the file changed while it was being loaded");
  const CacheFileInfo& f = p.info;
  std::vector<SequenceId> created;
  try {
    std::vector<uint8_t> chunk;
    for (size_t s = 0; s < f.lengths.size(); ++s) {
      const SequenceId seq = cache.create_sequence();
      created.push_back(seq);
      for (uint32_t layer = 0; layer < f.layers; ++layer) {
        const uint32_t len = f.lengths[s][layer];
        for (Side side : {Side::k, Side::v}) {
          const uint64_t rb = side_row_bytes(f, side);
          const uint32_t chunk_rows = uint32_t(std::max<uint64_t>(1, kChunkBytes / rb));
          for (uint32_t head = 0; head < f.kv_heads; ++head) {
            for (uint32_t begin = 0; begin < len;) {
              const uint32_t n = std::min(chunk_rows, len - begin);
              chunk.resize(size_t(n) * rb);
              r.read(chunk.data(), chunk.size(), "rows");
              cache.import_rows(seq, layer, side, head, begin, chunk);
              begin += n;
            }
          }
        }
      }
    }
    check_trailer(r);
  } catch (const Error& e) {
    for (SequenceId seq : created) cache.remove_sequence(seq);
    fail(e.code(), std::string(e.what()) + " (while importing: the sequences loaded so far were removed)");
  } catch (...) {
    for (SequenceId seq : created) cache.remove_sequence(seq);
    throw;
  }
  return created;
}

std::vector<SequenceId> load_from(KvCache& cache, std::istream& in, const std::string& name) {
  const auto start = in.tellg();
  if (start == std::istream::pos_type(-1))
    fail(ErrorCode::invalid_argument, name + ": the stream is not seekable (loading reads it twice)");
  Parsed p;
  {
    Reader r(in, name);
    p = validate(r);
  }
  if (const auto problem = shape_mismatch(p.info, cache.config()); !problem.empty())
    fail(ErrorCode::invalid_argument, name + ": does not match the cache: " + problem);
  check_room(name, cache, p.info);
  in.clear();
  in.seekg(start);
  if (!in) fail(ErrorCode::io, name + ": cannot seek back to the start of the file");
  Reader r(in, name);
  return import_all(cache, r, p);
}

// ---- saving ----

void write(std::ostream& out, Hasher* h, const void* data, size_t n, const std::string& name) {
  out.write(static_cast<const char*>(data), std::streamsize(n));
  if (!out) fail(ErrorCode::io, name + ": cannot write: " + std::strerror(errno));
  if (h) h->update(data, n);
}

void save_to(const KvCache& cache, std::span<const SequenceId> seqs, std::ostream& out, const std::string& name) {
  const CacheConfig& c = cache.config();
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (!cache.contains(seqs[i]))
      fail(ErrorCode::not_found, name + ": sequence " + std::to_string(seqs[i]) +
                                     " does not exist (never created, or removed); nothing was written");
    if (std::find(seqs.begin(), seqs.begin() + i, seqs[i]) != seqs.begin() + i)
      fail(ErrorCode::invalid_argument,
           name + ": sequence " + std::to_string(seqs[i]) + " is listed twice; nothing was written");
  }
  if (seqs.size() > kMaxFileSequences)
    fail(ErrorCode::invalid_argument, name + ": more than " + std::to_string(kMaxFileSequences) + " sequences");
  std::vector<uint8_t> header(kMagic, kMagic + 8);
  put_u32(header, kCacheFileVersion);
  put_u32(header, uint32_t(c.k_type));
  put_u32(header, uint32_t(c.v_type));
  put_u32(header, c.head_dim);
  put_u32(header, c.kv_heads);
  put_u32(header, c.layers);
  put_u32(header, uint32_t(seqs.size()));
  for (SequenceId seq : seqs)
    for (uint32_t l = 0; l < c.layers; ++l) put_u32(header, cache.length(seq, l));
  put_u64(header, XXH3_64bits(header.data(), header.size()));

  Hasher h;
  write(out, &h, header.data(), header.size(), name);
  for (SequenceId seq : seqs)
    for (uint32_t layer = 0; layer < c.layers; ++layer) {
      const uint32_t len = cache.length(seq, layer);
      for (Side side : {Side::k, Side::v}) {
        const uint64_t rb = row_bytes(side == Side::k ? c.k_type : c.v_type, c.head_dim);
        const uint32_t chunk_rows = uint32_t(std::max<uint64_t>(1, kChunkBytes / rb));
        for (uint32_t head = 0; head < c.kv_heads; ++head)
          for (uint32_t begin = 0; begin < len;) {
            const uint32_t end = begin + std::min(chunk_rows, len - begin);
            const auto rows = cache.export_rows(seq, layer, side, head, begin, end);
            write(out, &h, rows.data(), rows.size(), name);
            begin = end;
          }
      }
    }
  std::vector<uint8_t> trailer;
  put_u64(trailer, h.digest());
  write(out, nullptr, trailer.data(), trailer.size(), name);
  out.flush();
  if (!out) fail(ErrorCode::io, name + ": cannot write: " + std::strerror(errno));
}

void save_to_path(const KvCache& cache, std::span<const SequenceId> seqs, const std::string& path) {
  namespace fs = std::filesystem;
  const std::string name = "cache file " + path;
  // Temp name per process: two savers writing at once each rename a whole file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::error_code ec;
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(ErrorCode::io, name + ": cannot write " + tmp + ": " + std::strerror(errno));
    save_to(cache, seqs, out, name);
    out.close();
    if (!out) fail(ErrorCode::io, name + ": cannot write " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    fail(ErrorCode::io, name + ": cannot rename " + tmp + " over it: " + ec.message());
  }
}

constexpr const char* kStreamName = "cache stream";
constexpr const char* kBytesName = "cache bytes";

}  // namespace

void save_sequences(const KvCache& cache, std::span<const SequenceId> seqs, std::ostream& out) {
  save_to(cache, seqs, out, kStreamName);
}

void save_sequences(const KvCache& cache, std::span<const SequenceId> seqs, const std::string& path) {
  save_to_path(cache, seqs, path);
}

std::vector<uint8_t> save_sequences_to_bytes(const KvCache& cache, std::span<const SequenceId> seqs) {
  std::ostringstream out(std::ios::binary);
  save_to(cache, seqs, out, kBytesName);
  const std::string s = std::move(out).str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

void save_cache(const KvCache& cache, std::ostream& out) { save_sequences(cache, cache.sequences(), out); }

void save_cache(const KvCache& cache, const std::string& path) { save_sequences(cache, cache.sequences(), path); }

std::vector<SequenceId> load_sequences(KvCache& cache, std::istream& in) { return load_from(cache, in, kStreamName); }

std::vector<SequenceId> load_sequences(KvCache& cache, const std::string& path) {
  auto in = open_for_reading(path);
  return load_from(cache, in, "cache file " + path);
}

std::vector<SequenceId> load_sequences(KvCache& cache, std::span<const uint8_t> bytes) {
  SpanBuf buf(bytes);
  std::istream in(&buf);
  return load_from(cache, in, kBytesName);
}

CacheFileInfo inspect_cache_file(std::istream& in) {
  Reader r(in, kStreamName);
  return validate(r).info;
}

CacheFileInfo inspect_cache_file(const std::string& path) {
  auto in = open_for_reading(path);
  Reader r(in, "cache file " + path);
  return validate(r).info;
}

CacheFileInfo inspect_cache_file(std::span<const uint8_t> bytes) {
  SpanBuf buf(bytes);
  std::istream in(&buf);
  Reader r(in, kBytesName);
  return validate(r).info;
}

}  // namespace tkv
