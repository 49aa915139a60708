// Cache files (kvcache/persist.hpp): the round trip is bit-exact for every type (export_rows after
// a load equals export_rows before it, decode output is the same), the file has the documented
// layout, and every kind of bad file (truncated, corrupt, wrong magic, other version, other
// types or shape, no room) gets a clear tkv::Error and leaves the cache as it was, including a
// load whose import fails midway. Tiny shapes: the suite runs in seconds on lavapipe.
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attention/decoder.hpp"
#include "attention/reference.hpp"
#include "cache_test_util.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/persist.hpp"

using namespace tkv;
using tkv::test::expect_error;

namespace {

std::shared_ptr<vk::Context> context() {
  static std::shared_ptr<vk::Context> ctx = test::make_test_context();
  return ctx;
}

struct Pair {
  KvType k, v;
};
const Pair kPairs[] = {{KvType::f16, KvType::f16},       {KvType::q8_0, KvType::q8_0},
                       {KvType::turbo2, KvType::turbo2}, {KvType::turbo3, KvType::turbo3},
                       {KvType::turbo4, KvType::turbo4}, {KvType::q8_0, KvType::turbo3},
                       {KvType::turbo4, KvType::f16}};

std::string pair_name(const Pair& p) { return std::string(type_name(p.k)) + "/" + std::string(type_name(p.v)); }

CacheConfig config(Pair p, uint32_t head_dim = 64, uint32_t page_size = 32, uint32_t layers = 2) {
  CacheConfig c;
  c.layers = layers;
  c.kv_heads = 2;
  c.head_dim = head_dim;
  c.k_type = p.k;
  c.v_type = p.v;
  c.page_size = page_size;
  c.capacity_tokens = 512;
  c.max_sequences = 8;
  return c;
}

// Appends `lengths[layer]` random tokens to each layer of a new sequence.
SequenceId add_sequence(KvCache& cache, std::mt19937& rng, const std::vector<uint32_t>& lengths) {
  const auto& c = cache.config();
  const SequenceId s = cache.create_sequence();
  for (uint32_t layer = 0; layer < c.layers; ++layer) {
    if (lengths[layer] == 0) continue;
    const auto k = test::random_rows(rng, size_t(lengths[layer]) * c.kv_heads, c.head_dim);
    const auto v = test::random_rows(rng, size_t(lengths[layer]) * c.kv_heads, c.head_dim);
    cache.append(s, layer, lengths[layer], {k.data()}, {v.data()});
  }
  return s;
}

// Everything a sequence holds: per layer, side and head, its exported reference rows.
std::vector<std::vector<uint8_t>> contents(const KvCache& cache, SequenceId s) {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t layer = 0; layer < cache.config().layers; ++layer)
    for (Side side : {Side::k, Side::v})
      for (uint32_t h = 0; h < cache.config().kv_heads; ++h)
        out.push_back(cache.export_rows(s, layer, side, h, 0, cache.length(s, layer)));
  return out;
}

std::vector<uint32_t> lengths_of(const KvCache& cache, SequenceId s) {
  std::vector<uint32_t> l;
  for (uint32_t layer = 0; layer < cache.config().layers; ++layer) l.push_back(cache.length(s, layer));
  return l;
}

// A cache with three sequences: ragged per-layer lengths across a page boundary, one short, one
// empty.
struct Filled {
  std::unique_ptr<KvCache> cache;
  std::vector<SequenceId> seqs;
};
Filled filled(Pair p, uint32_t head_dim = 64, uint32_t seed = 1) {
  Filled f{std::make_unique<KvCache>(context(), config(p, head_dim)), {}};
  std::mt19937 rng(seed);
  f.seqs.push_back(add_sequence(*f.cache, rng, {45, 38}));
  f.seqs.push_back(add_sequence(*f.cache, rng, {7, 7}));
  f.seqs.push_back(add_sequence(*f.cache, rng, {0, 0}));
  return f;
}

// The observable state of a cache, to check that a failed load changed nothing.
struct Snapshot {
  std::vector<SequenceId> seqs;
  uint32_t free_pages;
  std::vector<std::vector<std::vector<uint8_t>>> data;
  bool operator==(const Snapshot&) const = default;
};
Snapshot snapshot(const KvCache& cache) {
  Snapshot s{cache.sequences(), cache.free_pages(), {}};
  for (SequenceId id : s.seqs) s.data.push_back(contents(cache, id));
  return s;
}

void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
uint32_t get_u32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
}
uint64_t get_u64(const std::vector<uint8_t>& b, size_t at) {
  return uint64_t(get_u32(b, at)) | uint64_t(get_u32(b, at + 4)) << 32;
}
void put_u64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i));
}

// Recomputes both checksums after an edit, so that a test reaches the check after them.
void reseal(std::vector<uint8_t>& file) {
  const uint32_t layers = get_u32(file, 28), seqs = get_u32(file, 32);
  const size_t header = 36 + size_t(4) * layers * seqs;
  put_u64(file, header, XXH3_64bits(file.data(), header));
  put_u64(file, file.size() - 8, XXH3_64bits(file.data(), file.size() - 8));
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(PersistRoundTrip, EveryTypeIsBitExact) {
  for (const Pair& p : kPairs) {
    SCOPED_TRACE(pair_name(p));
    auto f = filled(p);
    const auto bytes = save_sequences_to_bytes(*f.cache, f.seqs);
    // Into a fresh cache of the same shape, into one with smaller pages, and beside the originals.
    KvCache fresh(context(), config(p));
    KvCache small_pages(context(), config(p, 64, 16));
    for (KvCache* target : {&fresh, &small_pages, f.cache.get()}) {
      const auto loaded = load_sequences(*target, std::span<const uint8_t>(bytes));
      ASSERT_EQ(loaded.size(), f.seqs.size());
      for (size_t i = 0; i < loaded.size(); ++i) {
        EXPECT_EQ(lengths_of(*target, loaded[i]), lengths_of(*f.cache, f.seqs[i])) << "sequence " << i;
        EXPECT_EQ(contents(*target, loaded[i]), contents(*f.cache, f.seqs[i])) << "sequence " << i;
      }
    }
    // Saving what was loaded gives the same file.
    EXPECT_EQ(save_sequences_to_bytes(fresh, fresh.sequences()), bytes);
  }
}

TEST(PersistRoundTrip, PaddedHeadDims) {
  // 96: turbo groups of 64 padded to 128, q8_0 padded to 96, f16 rows padded on the device.
  for (const Pair& p : {Pair{KvType::turbo3, KvType::q8_0}, Pair{KvType::f16, KvType::turbo4}}) {
    SCOPED_TRACE(pair_name(p));
    auto f = filled(p, 96, 5);
    const auto bytes = save_sequences_to_bytes(*f.cache, f.seqs);
    KvCache fresh(context(), config(p, 96, 48));
    const auto loaded = load_sequences(fresh, std::span<const uint8_t>(bytes));
    for (size_t i = 0; i < loaded.size(); ++i) EXPECT_EQ(contents(fresh, loaded[i]), contents(*f.cache, f.seqs[i]));
  }
}

TEST(PersistRoundTrip, PathStreamAndWholeCache) {
  auto f = filled({KvType::turbo3, KvType::turbo3});
  const auto dir = std::filesystem::temp_directory_path() / ("tkv-persist-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "cache.tkv").string();

  save_cache(*f.cache, path);  // every live sequence
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
  const CacheFileInfo info = inspect_cache_file(path);
  EXPECT_EQ(info.version, kCacheFileVersion);
  EXPECT_EQ(info.k_type, KvType::turbo3);
  EXPECT_EQ(info.head_dim, 64u);
  EXPECT_EQ(info.kv_heads, 2u);
  EXPECT_EQ(info.layers, 2u);
  ASSERT_EQ(info.lengths.size(), 3u);
  EXPECT_EQ(info.lengths[0], (std::vector<uint32_t>{45, 38}));
  EXPECT_EQ(info.file_bytes, std::filesystem::file_size(path));

  KvCache from_path(context(), config({KvType::turbo3, KvType::turbo3}));
  const auto a = load_sequences(from_path, path);
  ASSERT_EQ(a.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(contents(from_path, a[i]), contents(*f.cache, f.seqs[i]));

  // One sequence through a stream, from a position that is not the stream's start.
  std::stringstream stream(std::ios::in | std::ios::out | std::ios::binary);
  stream << "prefix";
  const std::vector<SequenceId> one = {f.seqs[0]};
  save_sequences(*f.cache, one, stream);
  stream.seekg(6);
  KvCache from_stream(context(), config({KvType::turbo3, KvType::turbo3}));
  const auto b = load_sequences(from_stream, stream);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(contents(from_stream, b[0]), contents(*f.cache, f.seqs[0]));
  std::filesystem::remove_all(dir);
}

TEST(PersistFormat, LayoutIsTheDocumentedOne) {
  // Reads a file by the layout documented in persist.hpp, independently of the loader.
  auto f = filled({KvType::q8_0, KvType::turbo2});
  const std::vector<SequenceId> seqs = {f.seqs[1], f.seqs[0]};  // the file keeps the caller's order
  const auto file = save_sequences_to_bytes(*f.cache, seqs);
  ASSERT_GE(file.size(), 48u);
  EXPECT_EQ(std::string(file.begin(), file.begin() + 8), "TKVCACHE");
  EXPECT_EQ(get_u32(file, 8), 1u);
  EXPECT_EQ(get_u32(file, 12), uint32_t(KvType::q8_0));
  EXPECT_EQ(get_u32(file, 16), uint32_t(KvType::turbo2));
  EXPECT_EQ(get_u32(file, 20), 64u);
  EXPECT_EQ(get_u32(file, 24), 2u);
  EXPECT_EQ(get_u32(file, 28), 2u);
  ASSERT_EQ(get_u32(file, 32), 2u);
  size_t at = 36;
  for (SequenceId s : seqs)
    for (uint32_t layer = 0; layer < 2; ++layer, at += 4) EXPECT_EQ(get_u32(file, at), f.cache->length(s, layer));
  EXPECT_EQ(get_u64(file, at), XXH3_64bits(file.data(), at));
  at += 8;
  std::vector<uint8_t> rows;
  for (SequenceId s : seqs)
    for (const auto& part : contents(*f.cache, s)) rows.insert(rows.end(), part.begin(), part.end());
  ASSERT_EQ(file.size(), at + rows.size() + 8);
  EXPECT_TRUE(std::equal(rows.begin(), rows.end(), file.begin() + at));
  EXPECT_EQ(get_u64(file, file.size() - 8), XXH3_64bits(file.data(), file.size() - 8));
}

// ---------------------------------------------------------------------------------------------
// Decode after a load

struct DecodeRun {
  std::vector<float> out;
  std::vector<double> ref;
};

DecodeRun decode(KvCache& cache, std::span<const SequenceId> seqs, uint32_t layer, std::span<const float> q) {
  const uint32_t q_heads = cache.config().kv_heads * 2;
  Decoder dec(cache, q_heads);
  DecodeRun r;
  r.out.assign(q.size(), std::nanf(""));
  dec.decode(layer, seqs, 1, {q.data(), q.size() * 4}, {r.out.data(), r.out.size() * 4});
  r.ref = reference_decode(cache, layer, seqs, 1, q_heads, q);
  return r;
}

TEST(PersistDecode, OutputAfterLoadEqualsOutputBefore) {
  for (const Pair& p : kPairs) {
    SCOPED_TRACE(pair_name(p));
    auto f = filled(p, 64, 11);
    const std::vector<SequenceId> batch = {f.seqs[0], f.seqs[1]};
    std::mt19937 rng(3);
    const auto q = test::random_rows(rng, size_t(batch.size()) * 4, 64);  // [seq][q_head][dim], 4 q heads
    const auto file = save_sequences_to_bytes(*f.cache, batch);

    KvCache same(context(), config(p));
    // (Larger pages: on lavapipe the decoder plans 32-token steps, which 16-token pages refuse.)
    KvCache other_pages(context(), config(p, 64, 64));
    for (uint32_t layer = 0; layer < 2; ++layer) {
      const auto before = decode(*f.cache, batch, layer, q);
      ASSERT_LT(tkv::testing::max_head_error(before.out, before.ref, 64), 1e-4);
      if (layer == 0) {
        (void)load_sequences(same, std::span<const uint8_t>(file));
        (void)load_sequences(other_pages, std::span<const uint8_t>(file));
      }
      // Same page size: the same plan over the same bytes, so the same floats.
      const auto after = decode(same, same.sequences(), layer, q);
      ASSERT_EQ(after.out.size(), before.out.size());
      EXPECT_EQ(std::memcmp(after.out.data(), before.out.data(), after.out.size() * 4), 0) << "layer " << layer;
      EXPECT_EQ(after.ref, before.ref) << "layer " << layer;
      // Another page size may plan other splits: equal to the same float64 reference.
      const auto other = decode(other_pages, other_pages.sequences(), layer, q);
      EXPECT_EQ(other.ref, before.ref) << "layer " << layer;
      EXPECT_LT(tkv::testing::max_head_error(other.out, before.ref, 64), 1e-4) << "layer " << layer;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Bad files

class PersistBadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    source_ = filled({KvType::turbo3, KvType::q8_0});
    file_ = save_sequences_to_bytes(*source_.cache, source_.seqs);
    // The target already holds a sequence of its own, which a failed load must leave alone.
    target_ = std::make_unique<KvCache>(context(), config({KvType::turbo3, KvType::q8_0}));
    std::mt19937 rng(9);
    add_sequence(*target_, rng, {20, 20});
    before_ = snapshot(*target_);
  }
  // Loading `bytes` fails with `code` and a message naming `needle`; the cache is unchanged.
  void expect_refused(const std::vector<uint8_t>& bytes, ErrorCode code, const std::string& needle) {
    expect_error([&] { (void)load_sequences(*target_, std::span<const uint8_t>(bytes)); }, code, needle);
    EXPECT_TRUE(snapshot(*target_) == before_) << "the cache changed";
  }

  Filled source_;
  std::vector<uint8_t> file_;
  std::unique_ptr<KvCache> target_;
  Snapshot before_;
};

TEST_F(PersistBadFile, Truncated) {
  const size_t header = 36 + 4 * 6 + 8;
  for (size_t keep : {header - 10, header - 3, header, header + 1, file_.size() / 2, file_.size() - 8, file_.size() - 1}) {
    SCOPED_TRACE("kept " + std::to_string(keep) + " of " + std::to_string(file_.size()));
    expect_refused({file_.begin(), file_.begin() + keep}, ErrorCode::io, "truncated");
    expect_error([&] { (void)inspect_cache_file(std::span<const uint8_t>(file_.data(), keep)); }, ErrorCode::io,
                 "truncated");
  }
  // Too short to hold the magic: not a cache file at all.
  expect_refused({}, ErrorCode::io, "not a turbokv cache file (it has only 0 bytes)");
  expect_refused({file_.begin(), file_.begin() + 5}, ErrorCode::io, "not a turbokv cache file");
}

TEST_F(PersistBadFile, CorruptRowsHeaderOrTrailer) {
  auto rows = file_;
  rows[rows.size() / 2] ^= 0x10;
  expect_refused(rows, ErrorCode::io, "corrupt: checksum");
  auto trailer = file_;
  trailer.back() ^= 1;
  expect_refused(trailer, ErrorCode::io, "corrupt: checksum");
  auto length = file_;
  length[36] ^= 1;  // a length: reads as a corrupt header, not as a truncated file
  expect_refused(length, ErrorCode::io, "corrupt header: checksum");
  auto huge = file_;
  put_u32(huge, 32, 0xffffffffu);  // a sequence count no file holds
  expect_refused(huge, ErrorCode::io, "corrupt header");
  auto extra = file_;
  extra.push_back(0);
  expect_refused(extra, ErrorCode::io, "unexpected bytes after the trailing checksum");
}

TEST_F(PersistBadFile, WrongMagic) {
  auto bad = file_;
  bad[0] = 'X';
  expect_refused(bad, ErrorCode::io, "not a turbokv cache file");
  const std::string text = "{\"format\": \"turbokv-policy\"}";
  expect_refused({text.begin(), text.end()}, ErrorCode::io, "not a turbokv cache file");
}

TEST_F(PersistBadFile, OtherVersions) {
  auto future = file_;
  put_u32(future, 8, kCacheFileVersion + 1);
  expect_refused(future, ErrorCode::io, "format version 2 is newer than this build reads (1)");
  reseal(future);  // even with valid checksums
  expect_refused(future, ErrorCode::io, "is newer than this build reads");
  auto zero = file_;
  put_u32(zero, 8, 0);
  expect_refused(zero, ErrorCode::io, "format version 0 is unknown");
}

TEST_F(PersistBadFile, UnknownTypeOrImpossibleShape) {
  auto type = file_;
  put_u32(type, 16, 9);
  reseal(type);
  expect_refused(type, ErrorCode::io, "unknown type id 9 for V");
  auto dim = file_;
  put_u32(dim, 20, 1000);
  reseal(dim);
  expect_refused(dim, ErrorCode::io, "head_dim 1000 is outside 1..256");
}

TEST_F(PersistBadFile, MismatchedTypesOrShape) {
  struct Case {
    CacheConfig config;
    std::string needle;
  };
  const Pair p{KvType::turbo3, KvType::q8_0};
  std::vector<Case> cases = {
      {config({KvType::turbo4, KvType::q8_0}), "K type is turbo3 in the file, turbo4 in the cache"},
      {config({KvType::turbo3, KvType::turbo3}), "V type is q8_0 in the file, turbo3 in the cache"},
      {config(p, 128), "head_dim is 64 in the file, 128 in the cache"},
      {config(p, 64, 32, 3), "layers is 2 in the file, 3 in the cache"},
  };
  CacheConfig heads = config(p);
  heads.kv_heads = 1;
  cases.push_back({heads, "kv_heads is 2 in the file, 1 in the cache"});
  for (const auto& c : cases) {
    SCOPED_TRACE(c.needle);
    KvCache other(context(), c.config);
    expect_error([&] { (void)load_sequences(other, std::span<const uint8_t>(file_)); }, ErrorCode::invalid_argument,
                 c.needle);
    EXPECT_TRUE(other.sequences().empty());
    EXPECT_EQ(other.free_pages(), other.total_pages());
  }
}

TEST_F(PersistBadFile, NoRoomInTheCache) {
  CacheConfig slots = config({KvType::turbo3, KvType::q8_0});
  slots.max_sequences = 2;  // the file has 3 sequences
  KvCache few_slots(context(), slots);
  expect_error([&] { (void)load_sequences(few_slots, std::span<const uint8_t>(file_)); }, ErrorCode::capacity,
               "3 sequences do not fit");
  EXPECT_TRUE(few_slots.sequences().empty());

  // Pages: 45 tokens need 2 pages of 32, 7 need 1; the target has 16 pages, 1 in use. Fill it
  // until 2 are free.
  std::mt19937 rng(4);
  add_sequence(*target_, rng, {32 * 13, 0});
  ASSERT_EQ(target_->free_pages(), 2u);
  before_ = snapshot(*target_);
  expect_refused(file_, ErrorCode::capacity, "need 3 pages of 32 tokens, the cache has 2 free");
}

TEST_F(PersistBadFile, ImportFailingMidwayRemovesTheNewSequences) {
  // A stream whose bytes change between the validating read and the importing read (a file
  // rewritten under the loader): the import fails at the checksum after importing rows.
  class ChangingBuf : public std::stringbuf {
   public:
    explicit ChangingBuf(const std::vector<uint8_t>& bytes)
        : std::stringbuf(std::string(bytes.begin(), bytes.end()), std::ios_base::in) {}

   protected:
    pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
      if (++seeks_ == 1) {  // the loader's seek back to the start, after validating
        std::string s = str();
        s[s.size() - 20] ^= 0x40;
        str(s);
      }
      return std::stringbuf::seekpos(pos, which);
    }
    pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode which) override {
      if (off == 0 && dir == std::ios_base::cur) return std::stringbuf::seekoff(off, dir, which);
      return seekpos(std::stringbuf::seekoff(off, dir, which), which);
    }

   private:
    int seeks_ = 0;
  };
  ChangingBuf buf(file_);
  std::istream in(&buf);
  expect_error([&] { (void)load_sequences(*target_, in); }, ErrorCode::io, "sequences loaded so far were removed");
  EXPECT_TRUE(snapshot(*target_) == before_) << "the cache changed";
  // And the cache still works: the intact file loads.
  EXPECT_EQ(load_sequences(*target_, std::span<const uint8_t>(file_)).size(), 3u);
}

TEST_F(PersistBadFile, UnseekableStreamAndMissingFile) {
  class Unseekable : public std::stringbuf {
   public:
    using std::stringbuf::stringbuf;

   protected:
    pos_type seekoff(off_type, std::ios_base::seekdir, std::ios_base::openmode) override { return pos_type(-1); }
    pos_type seekpos(pos_type, std::ios_base::openmode) override { return pos_type(-1); }
  };
  Unseekable buf(std::string(file_.begin(), file_.end()));
  std::istream in(&buf);
  expect_error([&] { (void)load_sequences(*target_, in); }, ErrorCode::invalid_argument, "not seekable");
  expect_error([&] { (void)load_sequences(*target_, std::string("/nonexistent/dir/cache.tkv")); }, ErrorCode::io,
               "cannot open");
  EXPECT_TRUE(snapshot(*target_) == before_);
}

TEST(PersistSave, BadRequestsWriteNothing) {
  auto f = filled({KvType::turbo2, KvType::turbo2});
  std::ostringstream out;
  const std::vector<SequenceId> unknown = {f.seqs[0], 12345};
  expect_error([&] { save_sequences(*f.cache, unknown, out); }, ErrorCode::not_found, "sequence 12345 does not exist");
  const std::vector<SequenceId> twice = {f.seqs[0], f.seqs[1], f.seqs[0]};
  expect_error([&] { save_sequences(*f.cache, twice, out); }, ErrorCode::invalid_argument, "listed twice");
  EXPECT_TRUE(out.str().empty());
  expect_error([&] { save_cache(*f.cache, std::string("/nonexistent/dir/cache.tkv")); }, ErrorCode::io,
               "cannot write");
  std::ofstream closed;  // a stream that cannot be written
  expect_error([&] { save_cache(*f.cache, closed); }, ErrorCode::io, "cannot write");
}

}  // namespace
