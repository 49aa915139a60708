// Bad input, entry point by entry point: every public call of tkv::KvCache and tkv::Decoder
// against each class of bad input (null or empty data, wrong sizes, out-of-range layers / heads /
// positions, enum values cast from integers, NaN / Inf, capacity overflow, stale sequence ids,
// objects of another Vulkan context) must throw a tkv::Error with a specific code whose message
// names the problem. Afterwards the cache must hold exactly what it held: the decode taken before
// the bad calls comes out bit for bit the same, and a further append + decode equals both the
// same work on a twin cache that never saw a bad call and the float64 reference.
//
// The tables read one row per (entry point, bad input): the call, the code, and a piece of the
// message that names the offending value or field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attention/decoder.hpp"
#include "attention/reference.hpp"
#include "cache_test_util.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/vk/context.hpp"
#include "kvcache/vk/live_objects.hpp"

namespace tkv {
namespace {

using testing::max_head_error;
using testing::random_rows;
using testing::shared_context;

struct Case {
  const char* entry;  // the public call
  const char* input;  // the class of bad input
  ErrorCode code;
  std::string needle;  // must appear in the message
  std::function<void()> call;
};

const char* code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::capacity: return "capacity";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::numeric: return "numeric";
    case ErrorCode::vulkan: return "vulkan";
    case ErrorCode::no_device: return "no_device";
    case ErrorCode::io: return "io";
    case ErrorCode::device_lost: return "device_lost";
  }
  return "?";
}

void run_table(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.entry) + " / " + c.input);
    try {
      c.call();
      ADD_FAILURE() << "no tkv::Error (expected " << code_name(c.code) << " naming '" << c.needle << "')";
    } catch (const Error& e) {
      EXPECT_EQ(code_name(e.code()), std::string(code_name(c.code))) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos)
          << "message '" << e.what() << "' does not name '" << c.needle << "'";
    }
  }
}

HostRows f32(const std::vector<float>& x) { return {x.data(), RowFormat::f32}; }

constexpr uint32_t L = 2, H = 2, D = 64, kQHeads = 4, kTokens = 40;

CacheConfig config() {
  CacheConfig c;
  c.layers = L;
  c.kv_heads = H;
  c.head_dim = D;
  c.k_type = KvType::turbo3;
  c.v_type = KvType::q8_0;
  c.page_size = 32;
  c.capacity_tokens = 128;  // 4 pages; the healthy sequence holds 2
  c.max_sequences = 4;
  return c;
}

// A cache with one healthy sequence of kTokens tokens on every layer, a stale id (removed, its
// slot since reused by another sequence), an empty sequence, a decoder, and a twin cache with the
// same contents that never sees a bad call.
class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = shared_context();
    cache_ = std::make_unique<KvCache>(ctx_, config());
    twin_ = std::make_unique<KvCache>(ctx_, config());
    std::mt19937 rng(2024);
    k_ = random_rows(rng, L * kTokens, H, D, true);
    v_ = random_rows(rng, L * kTokens, H, D, false);
    q_ = random_rows(rng, 1, kQHeads, D, false);
    for (KvCache* c : {cache_.get(), twin_.get()}) {
      const SequenceId s = c->create_sequence();
      c->append_all_layers(s, kTokens, f32(k_), f32(v_));
      healthy_ = s;
    }
    const SequenceId removed = cache_->create_sequence();
    cache_->remove_sequence(removed);
    stale_ = removed;
    reused_ = cache_->create_sequence();  // same slot, new generation
    ASSERT_NE(reused_, stale_);
    empty_ = cache_->create_sequence();
    twin_->create_sequence();  // the twin's slots match: healthy, reused, empty
    twin_->create_sequence();
    decoder_ = std::make_unique<Decoder>(*cache_, kQHeads);
    for (uint32_t layer = 0; layer < L; ++layer) before_.push_back(decode(*decoder_, layer));
    free_before_ = cache_->free_pages();
  }

  std::vector<float> decode(Decoder& dec, uint32_t layer) {
    std::vector<float> out(q_.size(), std::nanf(""));
    const SequenceId seqs[] = {healthy_};
    dec.decode(layer, seqs, 1, {q_.data(), q_.size() * 4}, {out.data(), out.size() * 4});
    return out;
  }

  // The cache holds what it held, and goes on working exactly like its twin.
  void expect_cache_still_works() {
    for (uint32_t layer = 0; layer < L; ++layer) EXPECT_EQ(cache_->length(healthy_, layer), kTokens);
    EXPECT_EQ(cache_->length(empty_), 0u);
    EXPECT_EQ(cache_->length(reused_), 0u);
    EXPECT_EQ(cache_->free_pages(), free_before_);
    EXPECT_EQ(cache_->sequences().size(), 3u);
    for (uint32_t layer = 0; layer < L; ++layer)
      EXPECT_EQ(decode(*decoder_, layer), before_[layer]) << "layer " << layer << " changed";

    std::mt19937 rng(7);
    const auto k = random_rows(rng, 5, H, D, true), v = random_rows(rng, 5, H, D, false);
    Decoder twin_decoder(*twin_, kQHeads);
    for (KvCache* c : {cache_.get(), twin_.get()}) c->append(healthy_, 1, 5, f32(k), f32(v));
    const auto out = decode(*decoder_, 1), twin_out = decode(twin_decoder, 1);
    EXPECT_EQ(out, twin_out) << "the cache that saw bad calls decodes differently from its twin";
    const SequenceId seqs[] = {healthy_};
    const auto ref = reference_decode(*cache_, 1, seqs, 1, kQHeads, q_);
    EXPECT_LE(max_head_error(out, ref, D), 1e-4);
  }

  std::shared_ptr<vk::Context> ctx_;
  std::unique_ptr<KvCache> cache_, twin_;
  std::unique_ptr<Decoder> decoder_;
  SequenceId healthy_ = 0, stale_ = 0, reused_ = 0, empty_ = 0;
  std::vector<float> k_, v_, q_;
  std::vector<std::vector<float>> before_;
  uint32_t free_before_ = 0;
};

// A second Vulkan context on the same device: its objects are foreign to the cache.
std::shared_ptr<vk::Context> other_context() {
  static std::shared_ptr<vk::Context> other = vk::Context::create();
  return other;
}

TEST_F(BadInput, ConstructorsAndValidateNameTheBadField) {
  auto with = [](auto change) {
    CacheConfig c = config();
    change(c);
    return c;
  };
  const DeviceCaps& caps = ctx_->caps();
  const uint64_t device_bytes = caps.device_local_bytes();
  ASSERT_GT(device_bytes, 0u);
  const std::vector<std::pair<CacheConfig, std::pair<ErrorCode, std::string>>> configs = {
      {with([](CacheConfig& c) { c.layers = 0; }), {ErrorCode::invalid_argument, "layers"}},
      {with([](CacheConfig& c) { c.kv_heads = 0; }), {ErrorCode::invalid_argument, "kv_heads"}},
      {with([](CacheConfig& c) { c.head_dim = 0; }), {ErrorCode::invalid_argument, "head_dim 0"}},
      {with([](CacheConfig& c) { c.head_dim = 1000; }), {ErrorCode::invalid_argument, "head_dim 1000"}},
      {with([](CacheConfig& c) { c.k_type = KvType(9); }), {ErrorCode::invalid_argument, "KvType value 9"}},
      {with([](CacheConfig& c) { c.v_type = KvType(200); }), {ErrorCode::invalid_argument, "KvType value 200"}},
      {with([](CacheConfig& c) { c.page_size = 24; }), {ErrorCode::invalid_argument, "page_size 24"}},
      {with([](CacheConfig& c) { c.capacity_tokens = 0; }), {ErrorCode::invalid_argument, "capacity_tokens"}},
      {with([](CacheConfig& c) { c.max_sequences = 0; }), {ErrorCode::invalid_argument, "max_sequences"}},
      {with([](CacheConfig& c) { c.max_sequences = 70000; }), {ErrorCode::invalid_argument, "max_sequences"}},
      // Capacity overflow: 2^64 - 1 tokens used to round to zero pages and build an empty cache.
      {with([](CacheConfig& c) { c.capacity_tokens = std::numeric_limits<uint64_t>::max(); }),
       {ErrorCode::capacity, "capacity_tokens 18446744073709551615"}},
      {with([](CacheConfig& c) { c.capacity_tokens = uint64_t(1) << 40; }), {ErrorCode::capacity, "per buffer"}},
      // The page table is one buffer too: 65536 sequences x 2^20 pages x 4 bytes.
      {with([](CacheConfig& c) {
         c.head_dim = 1;
         c.kv_heads = 1;
         c.k_type = c.v_type = KvType::f16;
         c.max_sequences = 65536;
         c.capacity_tokens = uint64_t(16) << 16;  // 2^16 pages: a 16 MiB pool, a 16 GiB table
       }),
       {ErrorCode::capacity, "page table"}},
      // More layers than the device's memory holds (each layer's pool alone fits a buffer).
      {with([&](CacheConfig& c) {
         c.capacity_tokens = 1u << 18;  // about 50 MB per layer
         c.layers = uint32_t(std::min<uint64_t>(device_bytes / (uint64_t(1) << 20) + 1, 0xffffffffu));
       }),
       {ErrorCode::capacity, "bytes of device memory"}},
  };
  for (const auto& [c, expected] : configs) {
    SCOPED_TRACE(expected.second);
    test::expect_error([&] { KvCache::validate(caps, c); }, expected.first, expected.second);
    test::expect_error([&] { KvCache cache(ctx_, c); }, expected.first, expected.second);
  }
  test::expect_error([&] { KvCache cache(nullptr, config()); }, ErrorCode::invalid_argument, "context is null");

  run_table({
      {"Decoder()", "no query heads", ErrorCode::invalid_argument, "0 query heads", [&] { Decoder d(*cache_, 0); }},
      {"Decoder()", "heads not a multiple of the KV heads", ErrorCode::invalid_argument, "3 query heads",
       [&] { Decoder d(*cache_, 3); }},
      {"Decoder()", "GQA ratio above 16", ErrorCode::invalid_argument, "34 query heads",
       [&] { Decoder d(*cache_, 34); }},
  });
  expect_cache_still_works();
}

TEST_F(BadInput, KvCacheCallsFailClearlyAndTheCacheKeepsWorking) {
  const auto objects_before = vk::live_objects();
  const SequenceId h = healthy_, stale = stale_;
  const std::string stale_name = "sequence " + std::to_string(stale);
  const std::vector<float> one_k(size_t(H) * D, 0.5f), one_v(size_t(H) * D, -0.5f);
  auto with_value = [&](float x, size_t at) {
    auto rows = k_;
    rows[at] = x;
    return rows;
  };
  const auto nan_k = with_value(std::nanf(""), 3 * H * D + 5);                               // token 3
  const auto inf_layer1 = with_value(std::numeric_limits<float>::infinity(), (kTokens + 2) * H * D);  // layer 1
  const size_t k_row = row_bytes(KvType::turbo3, D);
  auto good_k_ref = test::reference_bytes(KvType::turbo3, D, std::span(k_).first(4 * D));  // 4 rows
  auto nan_norm = good_k_ref;
  nan_norm[k_row] = 0x00, nan_norm[k_row + 1] = 0x7e;  // row 1's norm: an f16 NaN
  vk::Buffer rows_buf(*ctx_, k_.size() * 4, vk::MemoryKind::upload);
  std::memcpy(rows_buf.mapped(), k_.data(), k_.size() * 4);
  auto record_append = [&](vk::Context& on, SequenceId s, uint32_t layer, uint32_t n, DeviceRows k, DeviceRows v) {
    on.run([&](vk::Recorder& r) { cache_->record_append(r, s, layer, n, k, v); });
  };
  const DeviceRows rows{rows_buf.handle(), 0};

  run_table({
      // create_sequence: every slot in use.
      {"create_sequence", "capacity overflow (all slots in use)", ErrorCode::capacity, "all 4 sequence slots",
       [&] {
         std::vector<SequenceId> made;
         try {
           for (;;) made.push_back(cache_->create_sequence());
         } catch (...) {
           for (SequenceId s : made) cache_->remove_sequence(s);
           throw;
         }
       }},
      // remove_sequence
      {"remove_sequence", "stale id (slot reused)", ErrorCode::not_found, stale_name,
       [&] { cache_->remove_sequence(stale); }},
      {"remove_sequence", "never-created id", ErrorCode::not_found, "sequence 1000",
       [&] { cache_->remove_sequence(1000); }},
      // truncate
      {"truncate", "stale id", ErrorCode::not_found, stale_name, [&] { cache_->truncate(stale, 0); }},
      {"truncate", "length beyond the sequence", ErrorCode::invalid_argument, "cannot truncate to 41",
       [&] { cache_->truncate(h, kTokens + 1); }},
      // length
      {"length", "stale id", ErrorCode::not_found, stale_name, [&] { (void)cache_->length(stale); }},
      {"length", "layer out of range", ErrorCode::invalid_argument, "layer 2", [&] { (void)cache_->length(h, 2); }},
      // append
      {"append", "stale id", ErrorCode::not_found, stale_name,
       [&] { cache_->append(stale, 0, 1, f32(one_k), f32(one_v)); }},
      {"append", "layer out of range", ErrorCode::invalid_argument, "layer 4294967295",
       [&] { cache_->append(h, 0xffffffffu, 1, f32(one_k), f32(one_v)); }},
      {"append", "null K rows", ErrorCode::invalid_argument, "K rows are null",
       [&] { cache_->append(h, 0, 1, {nullptr, RowFormat::f32}, f32(one_v)); }},
      {"append", "null V rows", ErrorCode::invalid_argument, "V rows are null",
       [&] { cache_->append(h, 0, 1, f32(one_k), {nullptr, RowFormat::f16}); }},
      {"append", "unknown RowFormat", ErrorCode::invalid_argument, "K RowFormat value 7",
       [&] { cache_->append(h, 0, 1, {one_k.data(), RowFormat(7)}, f32(one_v)); }},
      {"append", "NaN row", ErrorCode::numeric, "at token 3",
       [&] { cache_->append(h, 0, 8, f32(nan_k), f32(v_)); }},
      // More tokens than the cache holds, from a buffer of kTokens rows: fails before reading.
      {"append", "capacity overflow", ErrorCode::capacity, "cache full",
       [&] { cache_->append(h, 0, 1000, f32(k_), f32(v_)); }},
      {"append", "length overflow", ErrorCode::capacity, "overflow",
       [&] { cache_->append(h, 0, 0xffffffffu, f32(k_), f32(v_)); }},
      // append_all_layers
      {"append_all_layers", "stale id", ErrorCode::not_found, stale_name,
       [&] { cache_->append_all_layers(stale, 1, f32(k_), f32(v_)); }},
      {"append_all_layers", "null V rows", ErrorCode::invalid_argument, "V rows are null",
       [&] { cache_->append_all_layers(h, 1, f32(k_), {}); }},
      {"append_all_layers", "unknown RowFormat", ErrorCode::invalid_argument, "V RowFormat value 3",
       [&] { cache_->append_all_layers(h, 1, f32(k_), {v_.data(), RowFormat(3)}); }},
      {"append_all_layers", "Inf in layer 1's rows", ErrorCode::numeric, "inf in layer 1's rows at token 2",
       [&] { cache_->append_all_layers(h, kTokens, f32(inf_layer1), f32(v_)); }},
      {"append_all_layers", "capacity overflow", ErrorCode::capacity, "cache full",
       [&] { cache_->append_all_layers(h, 100, f32(k_), f32(v_)); }},
      // record_append
      {"record_append", "stale id", ErrorCode::not_found, stale_name,
       [&] { record_append(*ctx_, stale, 0, 1, rows, rows); }},
      {"record_append", "layer out of range", ErrorCode::invalid_argument, "layer 5",
       [&] { record_append(*ctx_, h, 5, 1, rows, rows); }},
      {"record_append", "null K buffer", ErrorCode::invalid_argument, "K buffer is null",
       [&] { record_append(*ctx_, h, 0, 1, {}, rows); }},
      {"record_append", "unknown RowFormat", ErrorCode::invalid_argument, "V RowFormat value 9",
       [&] { record_append(*ctx_, h, 0, 1, rows, {rows_buf.handle(), 0, RowFormat(9)}); }},
      {"record_append", "misaligned source offset", ErrorCode::invalid_argument, "element size",
       [&] { record_append(*ctx_, h, 0, 1, {rows_buf.handle(), 2}, rows); }},
      {"record_append", "capacity overflow", ErrorCode::capacity, "cache full",
       [&] { record_append(*ctx_, h, 0, 1000, rows, rows); }},
      {"record_append", "recorder of another context", ErrorCode::invalid_argument, "another Vulkan context",
       [&] { record_append(*other_context(), h, 0, 1, rows, rows); }},
      // export_rows
      {"export_rows", "stale id", ErrorCode::not_found, stale_name,
       [&] { (void)cache_->export_rows(stale, 0, Side::k, 0, 0, 1); }},
      {"export_rows", "layer out of range", ErrorCode::invalid_argument, "layer 2",
       [&] { (void)cache_->export_rows(h, 2, Side::k, 0, 0, 1); }},
      {"export_rows", "unknown Side", ErrorCode::invalid_argument, "Side value 5",
       [&] { (void)cache_->export_rows(h, 0, Side(5), 0, 0, 1); }},
      {"export_rows", "head out of range", ErrorCode::invalid_argument, "head 2",
       [&] { (void)cache_->export_rows(h, 0, Side::v, 2, 0, 1); }},
      {"export_rows", "reversed range", ErrorCode::invalid_argument, "[5, 3)",
       [&] { (void)cache_->export_rows(h, 0, Side::k, 0, 5, 3); }},
      {"export_rows", "range beyond the length", ErrorCode::invalid_argument, "[0, 41)",
       [&] { (void)cache_->export_rows(h, 0, Side::k, 0, 0, kTokens + 1); }},
      // import_rows
      {"import_rows", "stale id", ErrorCode::not_found, stale_name,
       [&] { cache_->import_rows(stale, 0, Side::k, 0, 0, good_k_ref); }},
      {"import_rows", "layer out of range", ErrorCode::invalid_argument, "layer 9",
       [&] { cache_->import_rows(h, 9, Side::k, 0, 0, good_k_ref); }},
      {"import_rows", "unknown Side", ErrorCode::invalid_argument, "Side value 2",
       [&] { cache_->import_rows(h, 0, Side(2), 0, 0, good_k_ref); }},
      {"import_rows", "head out of range", ErrorCode::invalid_argument, "head 7",
       [&] { cache_->import_rows(h, 0, Side::k, 7, 0, good_k_ref); }},
      {"import_rows", "null data", ErrorCode::invalid_argument, "null",
       [&] { cache_->import_rows(h, 0, Side::k, 0, 0, std::span<const uint8_t>(static_cast<const uint8_t*>(nullptr), k_row)); }},
      {"import_rows", "wrong size", ErrorCode::invalid_argument, "not a whole number of 26-byte rows",
       [&] { cache_->import_rows(h, 0, Side::k, 0, 0, std::span(good_k_ref).first(k_row + 3)); }},
      {"import_rows", "position beyond the length", ErrorCode::invalid_argument, "position 41",
       [&] { cache_->import_rows(h, 0, Side::k, 0, kTokens + 1, good_k_ref); }},
      {"import_rows", "NaN norm", ErrorCode::numeric, "row 1, block 0",
       [&] { cache_->import_rows(h, 0, Side::k, 0, 0, nan_norm); }},
      {"import_rows", "capacity overflow", ErrorCode::capacity, "cache full",
       [&] { cache_->import_rows(h, 0, Side::k, 0, kTokens, std::vector<uint8_t>(100 * k_row)); }},
      // buffer (for the attention kernel)
      {"buffer", "unknown Side", ErrorCode::invalid_argument, "Side value 4", [&] { (void)cache_->buffer(0, Side(4)); }},
  });
  expect_cache_still_works();
  const auto objects_after = vk::live_objects();
  EXPECT_EQ(objects_after.command_buffers, objects_before.command_buffers) << objects_after.str();
}

TEST_F(BadInput, DecoderCallsFailClearlyAndTheCacheKeepsWorking) {
  const SequenceId h = healthy_;
  const std::vector<SequenceId> one = {h}, stale = {stale_}, none = {}, empty = {empty_};
  const std::string stale_name = "sequence " + std::to_string(stale_);
  std::vector<float> out(q_.size());
  auto options = [](auto change) {
    DecodeOptions o;
    change(o);
    return o;
  };
  const HostTensor q{q_.data(), q_.size() * 4};
  const HostOutput o{out.data(), out.size() * 4};
  auto nan_q = q_;
  nan_q[2 * D + 9] = std::nanf("");  // query head 2, element 9
  std::vector<uint16_t> inf_half_q(q_.size(), 0x3c00);
  inf_half_q[D + 1] = 0x7c00;
  vk::Buffer q_buf(*ctx_, q_.size() * 4, vk::MemoryKind::upload), out_buf(*ctx_, q_.size() * 4, vk::MemoryKind::readback);
  std::memcpy(q_buf.mapped(), q_.data(), q_.size() * 4);
  const DeviceTensor dq{q_buf.handle(), 0, q_buf.size()}, dout{out_buf.handle(), 0, out_buf.size()};
  auto record = [&](vk::Context& on, std::span<const SequenceId> seqs, DeviceTensor dq_, DeviceTensor dout_,
                    const DecodeOptions& opts = {}) {
    on.run([&](vk::Recorder& r) { decoder_->record(r, 0, seqs, 1, dq_, dout_, opts); });
  };
  Decoder& dec = *decoder_;

  run_table({
      // plan
      {"plan", "empty batch", ErrorCode::invalid_argument, "no sequences", [&] { (void)dec.plan(0, none, 1); }},
      {"plan", "m = 0", ErrorCode::invalid_argument, "m = 0", [&] { (void)dec.plan(0, one, 0); }},
      {"plan", "m = 9", ErrorCode::invalid_argument, "m = 9", [&] { (void)dec.plan(0, one, 9); }},
      {"plan", "layer out of range", ErrorCode::invalid_argument, "layer 3", [&] { (void)dec.plan(3, one, 1); }},
      {"plan", "stale id", ErrorCode::not_found, stale_name, [&] { (void)dec.plan(0, stale, 1); }},
      {"plan", "more queries than tokens", ErrorCode::invalid_argument, "has only 0 tokens",
       [&] { (void)dec.plan(0, empty, 1); }},
      {"plan", "unknown Variant", ErrorCode::invalid_argument, "Variant value 77",
       [&] { (void)dec.plan(0, one, 1, options([](DecodeOptions& x) { x.variant = Variant(77); })); }},
      {"plan", "unknown ProfileMode", ErrorCode::invalid_argument, "ProfileMode value 9",
       [&] { (void)dec.plan(0, one, 1, options([](DecodeOptions& x) { x.profile_mode = ProfileMode(9); })); }},
      {"plan", "NaN scale", ErrorCode::invalid_argument, "scale nan",
       [&] { (void)dec.plan(0, one, 1, options([](DecodeOptions& x) { x.scale = std::nanf(""); })); }},
      {"plan", "negative softcap", ErrorCode::invalid_argument, "softcap -1",
       [&] { (void)dec.plan(0, one, 1, options([](DecodeOptions& x) { x.softcap = -1.0f; })); }},
      {"plan", "bad dims per lane", ErrorCode::invalid_argument, "dims per lane",
       [&] { (void)dec.plan(0, one, 1, options([](DecodeOptions& x) { x.dims_per_lane = 3; })); }},
      {"plan", "profile mode of turbo types on a q8_0 V", ErrorCode::invalid_argument, "needs turbo K and V",
       [&] { (void)dec.plan(0, one, 1, options([](DecodeOptions& x) { x.profile_mode = ProfileMode::no_sign; })); }},
      // decode
      {"decode", "null q", ErrorCode::invalid_argument, "q is null", [&] { dec.decode(0, one, 1, {nullptr, q.bytes}, o); }},
      {"decode", "null out", ErrorCode::invalid_argument, "out is null",
       [&] { dec.decode(0, one, 1, q, {nullptr, o.bytes}); }},
      {"decode", "q of the wrong size", ErrorCode::invalid_argument, "q has 1020 bytes, expected 1024",
       [&] { dec.decode(0, one, 1, {q.data, q.bytes - 4}, o); }},
      {"decode", "empty q", ErrorCode::invalid_argument, "q has 0 bytes", [&] { dec.decode(0, one, 1, {q.data, 0}, o); }},
      {"decode", "out too small", ErrorCode::invalid_argument, "output has 512 bytes",
       [&] { dec.decode(0, one, 1, q, {o.data, 512}); }},
      {"decode", "unknown q TensorFormat", ErrorCode::invalid_argument, "q TensorFormat value 3",
       [&] { dec.decode(0, one, 1, {q.data, q.bytes, TensorFormat(3)}, o); }},
      {"decode", "unknown out TensorFormat", ErrorCode::invalid_argument, "out TensorFormat value 2",
       [&] { dec.decode(0, one, 1, q, {o.data, o.bytes, TensorFormat(2)}); }},
      {"decode", "NaN query", ErrorCode::numeric, "row 2, element 9",
       [&] { dec.decode(0, one, 1, {nan_q.data(), nan_q.size() * 4}, o); }},
      {"decode", "Inf query (f16)", ErrorCode::numeric, "row 1, element 1",
       [&] { dec.decode(0, one, 1, {inf_half_q.data(), inf_half_q.size() * 2, TensorFormat::f16}, o); }},
      {"decode", "stale id", ErrorCode::not_found, stale_name, [&] { dec.decode(0, stale, 1, q, o); }},
      {"decode", "layer out of range", ErrorCode::invalid_argument, "layer 2", [&] { dec.decode(2, one, 1, q, o); }},
      {"decode", "unknown Variant", ErrorCode::invalid_argument, "Variant value 7",
       [&] { dec.decode(0, one, 1, q, o, options([](DecodeOptions& x) { x.variant = Variant(7); })); }},
      {"decode", "Inf scale", ErrorCode::invalid_argument, "scale inf",
       [&] { dec.decode(0, one, 1, q, o, options([](DecodeOptions& x) { x.scale = INFINITY; })); }},
      // record
      {"record", "recorder of another context", ErrorCode::invalid_argument, "another Vulkan context",
       [&] { record(*other_context(), one, dq, dout); }},
      {"record", "null q buffer", ErrorCode::invalid_argument, "q buffer is null",
       [&] { record(*ctx_, one, {VK_NULL_HANDLE, 0, dq.bytes}, dout); }},
      {"record", "out buffer too small", ErrorCode::invalid_argument, "output buffer holds 16 bytes",
       [&] { record(*ctx_, one, dq, {dout.buffer, 0, 16}); }},
      {"record", "misaligned q offset", ErrorCode::invalid_argument, "multiples of the element size",
       [&] { record(*ctx_, one, {dq.buffer, 2, dq.bytes}, dout); }},
      {"record", "unknown out TensorFormat", ErrorCode::invalid_argument, "out TensorFormat value 5",
       [&] { record(*ctx_, one, dq, {dout.buffer, 0, dout.bytes, TensorFormat(5)}); }},
      {"record", "stale id", ErrorCode::not_found, stale_name, [&] { record(*ctx_, stale, dq, dout); }},
      {"record", "unknown ProfileMode", ErrorCode::invalid_argument, "ProfileMode value 5",
       [&] { record(*ctx_, one, dq, dout, options([](DecodeOptions& x) { x.profile_mode = ProfileMode(5); })); }},
  });
  expect_cache_still_works();
}

// A sequence id stays dead after its slot is reused, for every call that takes one.
TEST_F(BadInput, StaleIdsStayDeadAfterTheirSlotIsReused) {
  for (int round = 0; round < 5; ++round) {
    EXPECT_FALSE(cache_->contains(stale_));
    cache_->remove_sequence(reused_);
    reused_ = cache_->create_sequence();
    EXPECT_NE(reused_, stale_);
    test::expect_error([&] { (void)cache_->length(stale_); }, ErrorCode::not_found, "does not exist");
  }
  expect_cache_still_works();
}

}  // namespace
}  // namespace tkv
