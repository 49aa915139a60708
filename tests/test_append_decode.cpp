// The fused append (Decoder::record_append_decode, shaders/append_tail.glsl): one dispatch that
// appends each sequence's m new tokens and decodes their queries must leave the cache byte for
// byte as record_append does, and its outputs must match the float64 reference over the cache it
// leaves (the same bound as every decode). Cases cover the tail's edges: empty and one-token
// caches, lengths around a tile (16) and a page, m from 1 to 8, ragged batches, every type, the
// scalar variants and (where the device has them) the tensor cores.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attention/plan.hpp"
#include "kvcache/vk/command.hpp"
#include "kvcache/error.hpp"
#include "kvcache/fp16.hpp"
#include "kvcache/vk/buffer.hpp"
#include "decode_fixture.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

constexpr double kExactBound = 1e-4;
constexpr uint32_t kPage = 32;

DecodeOptions fused_options() {
  DecodeOptions o;
  o.fusion = AppendFusion::fused;  // (automatic could fall back to separate calls)
  return o;
}

struct FusedCase {
  KvType k_type = KvType::turbo3, v_type = KvType::turbo3;
  uint32_t head_dim = 128, kv_heads = 2, ratio = 4, m = 1;
  std::vector<uint32_t> old_lengths = {100};  // before the call
  DecodeOptions options = fused_options();
  bool f16_rows = false;
  uint32_t seed = 1;
  uint32_t steps = 1;  // fused calls in a row, m new tokens each
};

std::string describe(const FusedCase& c) {
  std::ostringstream o;
  o << type_name(c.k_type) << "/" << type_name(c.v_type) << " hd " << c.head_dim << " gqa " << c.ratio << " m " << c.m
    << " old";
  for (auto l : c.old_lengths) o << " " << l;
  o << " softcap " << c.options.softcap << " window " << c.options.window << " splits " << c.options.splits
    << " variant " << variant_name(c.options.variant) << (c.f16_rows ? " f16 rows" : "");
  return o.str();
}

std::unique_ptr<KvCache> make_cache(const FusedCase& c) {
  CacheConfig cfg;
  cfg.layers = 1;
  cfg.kv_heads = c.kv_heads;
  cfg.head_dim = c.head_dim;
  cfg.k_type = c.k_type;
  cfg.v_type = c.v_type;
  cfg.page_size = kPage;
  uint64_t total = 0;
  for (uint32_t len : c.old_lengths) total += (len + c.m * c.steps + kPage - 1) / kPage * kPage;
  cfg.capacity_tokens = total;
  cfg.max_sequences = uint32_t(c.old_lengths.size());
  return std::make_unique<KvCache>(shared_context(), cfg);
}

std::vector<uint16_t> to_f16(const std::vector<float>& x) {
  std::vector<uint16_t> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = float_to_half(x[i]);
  return h;
}

// Runs the case on two caches filled alike: `appended` by record_append then a decode, `fused`
// by record_append_decode. Expects the same bytes in both, and each output within the bound of
// the reference over its cache. Returns the fused output's worst head error.
double run_fused(const FusedCase& c) {
  SCOPED_TRACE(describe(c));
  if (::testing::Test::HasFatalFailure()) return 0.0;
  std::mt19937 rng(c.seed);
  const uint32_t batch = uint32_t(c.old_lengths.size()), q_heads = c.kv_heads * c.ratio;
  auto appended = make_cache(c), fused = make_cache(c);
  std::vector<SequenceId> seqs_a, seqs_f;
  for (uint32_t len : c.old_lengths) {
    const auto k = random_rows(rng, len, c.kv_heads, c.head_dim, true), v = random_rows(rng, len, c.kv_heads, c.head_dim, false);
    seqs_a.push_back(appended->create_sequence());
    seqs_f.push_back(fused->create_sequence());
    appended->append(seqs_a.back(), 0, len, {k.data()}, {v.data()});
    fused->append(seqs_f.back(), 0, len, {k.data()}, {v.data()});
  }
  auto& ctx = *shared_context();
  Decoder dec_a(*appended, q_heads), dec_f(*fused, q_heads);
  const size_t per_seq = size_t(c.m) * c.kv_heads * c.head_dim;
  double worst = 0.0;
  for (uint32_t step = 0; step < c.steps; ++step) {
    // The new rows [batch][m][kv_heads][head_dim] and the queries [batch][m][q_heads][head_dim].
    const auto k_new = random_rows(rng, batch * c.m, c.kv_heads, c.head_dim, true);
    const auto v_new = random_rows(rng, batch * c.m, c.kv_heads, c.head_dim, false);
    const auto q = random_rows(rng, batch * c.m, q_heads, c.head_dim, false);

    // Appended: an append per sequence, then a decode (host paths).
    for (uint32_t b = 0; b < batch; ++b) {
      const std::vector<float> kb(k_new.begin() + b * per_seq, k_new.begin() + (b + 1) * per_seq);
      const std::vector<float> vb(v_new.begin() + b * per_seq, v_new.begin() + (b + 1) * per_seq);
      if (c.f16_rows) {
        const auto kh = to_f16(kb), vh = to_f16(vb);
        appended->append(seqs_a[b], 0, c.m, {kh.data(), RowFormat::f16}, {vh.data(), RowFormat::f16});
      } else {
        appended->append(seqs_a[b], 0, c.m, {kb.data()}, {vb.data()});
      }
    }
    std::vector<float> out_a(q.size());
    dec_a.decode(0, seqs_a, c.m, {q.data(), q.size() * 4}, {out_a.data(), out_a.size() * 4}, c.options);

    // Fused: one call from device buffers.
    const uint64_t row_bytes = k_new.size() * (c.f16_rows ? 2 : 4);
    vk::Buffer kd(ctx, row_bytes, vk::MemoryKind::device), vd(ctx, row_bytes, vk::MemoryKind::device);
    if (c.f16_rows) {
      const auto kh = to_f16(k_new), vh = to_f16(v_new);
      vk::upload(ctx, kd, 0, std::as_bytes(std::span(kh)));
      vk::upload(ctx, vd, 0, std::as_bytes(std::span(vh)));
    } else {
      vk::upload(ctx, kd, 0, std::as_bytes(std::span(k_new)));
      vk::upload(ctx, vd, 0, std::as_bytes(std::span(v_new)));
    }
    vk::Buffer qd(ctx, q.size() * 4, vk::MemoryKind::device), od(ctx, q.size() * 4, vk::MemoryKind::device);
    vk::upload(ctx, qd, 0, std::as_bytes(std::span(q)));
    const TensorFormat rf = c.f16_rows ? TensorFormat::f16 : TensorFormat::f32;
    ctx.run([&](vk::Recorder& r) {
      r.fill(od, 0, VK_WHOLE_SIZE, 0x7fc00000u);  // NaN: an output the call does not write fails
      r.barrier();
      dec_f.record_append_decode(r, 0, seqs_f, c.m, {kd.handle(), 0, row_bytes, rf}, {vd.handle(), 0, row_bytes, rf},
                                 {qd.handle(), 0, q.size() * 4}, {od.handle(), 0, q.size() * 4}, c.options);
    });
    std::vector<float> out_f(q.size());
    vk::download(ctx, od, 0, std::as_writable_bytes(std::span(out_f)));

    for (uint32_t b = 0; b < batch; ++b) {
      const uint32_t len = c.old_lengths[b] + c.m * (step + 1);
      EXPECT_EQ(fused->length(seqs_f[b], 0), len);
      for (Side side : {Side::k, Side::v})
        for (uint32_t h = 0; h < c.kv_heads; ++h)
          EXPECT_EQ(fused->export_rows(seqs_f[b], 0, side, h, 0, len), appended->export_rows(seqs_a[b], 0, side, h, 0, len))
              << "step " << step << " sequence " << b << (side == Side::k ? " K" : " V") << " head " << h;
    }
    const auto ref = reference_decode(*fused, 0, seqs_f, c.m, q_heads, q, c.options);
    EXPECT_LE(max_head_error(out_a, ref, c.head_dim), kExactBound) << "step " << step << ": append, then decode";
    const double err = max_head_error(out_f, ref, c.head_dim);
    EXPECT_LE(err, kExactBound) << "step " << step << ": fused";
    worst = std::max(worst, err);
  }
  return worst;
}
}  // namespace

// The tail's edges for the default type: no old tokens, one, a tile less one, a tile, a page and
// more; m 1, 3 and 8; one split and several.
TEST(AppendDecode, TailEdges) {
  const uint32_t olds[] = {0, 1, 15, 16, 17, 40, 300};
  uint32_t seed = 1;
  for (uint32_t old : olds)
    for (uint32_t m : {1u, 8u}) {
      FusedCase c;
      c.old_lengths = {old};
      c.m = m;
      c.seed = seed++;
      if (old == 300) c.options.splits = 3;
      run_fused(c);
    }
  // Splits of one step (the tc kernel's 64 tokens in four subgroups: its plan's choice at 1K, where
  // two-step splits leave SMs idle), the new token in the last.
  FusedCase c;
  c.old_lengths = {300};
  c.options.splits = 5;
  c.seed = seed;
  run_fused(c);
}

// Every type, K and V alike and one mixed pair, at lengths whose tails hold old and new tokens;
// head dims 64, 96 (padded rows) and 128; GQA 1, 4 and 7; ragged batches.
TEST(AppendDecode, EveryTypeAndShape) {
  uint32_t seed = 100;
  for (KvType kt : kAllTypes) {
    FusedCase c;
    c.k_type = c.v_type = kt;
    c.head_dim = seed % 3 == 0 ? 64 : seed % 3 == 1 ? 128 : 96;
    c.ratio = seed % 2 == 0 ? 7 : 1;
    c.m = 1 + seed % 4;
    c.old_lengths = {70, 21};
    c.seed = seed++;
    run_fused(c);
  }
  FusedCase c;
  c.k_type = KvType::turbo3;
  c.v_type = KvType::q8_0;
  c.old_lengths = {33};
  c.m = 2;
  run_fused(c);
}

// The options the tail applies itself: soft-cap, a window ending inside the tail, f16 new rows,
// and a batch whose sequences' tails differ.
TEST(AppendDecode, OptionsAndRowFormats) {
  FusedCase c;
  c.old_lengths = {129, 5, 48};
  c.m = 4;
  c.options.softcap = 30.0f;
  run_fused(c);
  c.options.softcap = 0.0f;
  c.options.window = 9;
  c.seed = 2;
  run_fused(c);
  c.options.window = 0;
  c.f16_rows = true;
  c.k_type = c.v_type = KvType::q8_0;
  c.seed = 3;
  run_fused(c);
  // Head dim 256: the widest rows the quantizer's arrays hold.
  FusedCase w;
  w.k_type = KvType::turbo4;
  w.v_type = KvType::f16;
  w.head_dim = 256;
  w.ratio = 2;
  w.m = 3;
  w.old_lengths = {40};
  w.seed = 4;
  run_fused(w);
}

// Every variant the device offers for a type: the scalar kernel's dequant variants and, where the
// device has them, the tensor cores (turbo K and V).
TEST(AppendDecode, EveryVariant) {
  const auto& caps = shared_context()->caps();
  for (Variant variant : kAllVariants) {
    FusedCase c;
    c.k_type = KvType::turbo4;
    c.v_type = KvType::turbo2;
    c.old_lengths = {200, 37};
    c.m = 2;
    c.options.variant = variant;
    c.seed = uint32_t(variant) + 50;
    DecodeShape s{c.k_type, c.v_type, c.head_dim, c.kv_heads * c.ratio, c.kv_heads, 2, c.m, 239, kPage};
    if (variant == Variant::tc && !tensor_core_problem(caps, s).empty()) continue;
    run_fused(c);
    if (variant == Variant::tc)  // workgroups of 6 and 8 subgroups (a tuning request): the tail too
      for (uint32_t sgs : {6u, 8u}) {
        c.options.subgroups = sgs;
        c.seed += 100;
        run_fused(c);
      }
  }
}

// The tensor cores' rows16 form (query rows on the MMAs' 16-row side) in the fused call: 12 rows
// (m 3), 16 (m 4) and two chunks of 16 (m 8), asked for (the plan's own choice keeps the columns
// on splits this short), under the split counts of a few cases.
TEST(AppendDecode, RowsOnTheMmasSixteenRowSide) {
  const auto& caps = shared_context()->caps();
  PlanRequest asked;
  asked.rows16 = true;
  for (auto [k, v] : {std::pair{KvType::turbo3, KvType::turbo3}, std::pair{KvType::q8_0, KvType::turbo4}})
    for (uint32_t m : {3u, 4u, 8u}) {
      FusedCase c;
      c.k_type = k;
      c.v_type = v;
      c.old_lengths = {200, 37};
      c.m = m;
      c.options.variant = Variant::tc;
      c.options.rows16 = true;
      c.options.splits = m == 4 ? 2 : 0;
      c.seed = 70 + m;
      DecodeShape s{k, v, c.head_dim, c.kv_heads * c.ratio, c.kv_heads, 2, m, 200 + m, kPage};
      if (const std::string why = tensor_core_problem(caps, s) + rows16_problem(caps, s, asked); !why.empty())
        GTEST_SKIP() << "no rows16 here: " << why;
      run_fused(c);
    }
}

// Fused calls in a row grow the sequences token by token, as an engine's decode loop does; each
// leaves the cache as appends would (the tail crosses a tile and a page), and the decoder's
// counters and partial slots serve the next call.
TEST(AppendDecode, DecodeLoop) {
  FusedCase c;
  c.old_lengths = {13, 60};
  c.steps = 6;
  run_fused(c);
  c.m = 3;
  c.steps = 3;
  c.seed = 5;
  c.options.splits = 2;
  run_fused(c);
}

// The separate path and the automatic choice (fused) give the same bytes and outputs.
TEST(AppendDecode, SeparateAndAutomatic) {
  FusedCase c;
  c.old_lengths = {20, 7};
  c.m = 2;
  c.options.fusion = AppendFusion::separate;
  run_fused(c);
  c.options.fusion = AppendFusion::automatic;
  c.k_type = c.v_type = KvType::q8_0;
  c.seed = 8;
  run_fused(c);
}

TEST(AppendDecode, BadInputGetsClearErrors) {
  FusedCase c;
  auto cache = make_cache(c);
  auto& ctx = *shared_context();
  const SequenceId s = cache->create_sequence();
  Decoder dec(*cache, c.kv_heads * c.ratio);
  vk::Buffer buf(ctx, 1 << 16, vk::MemoryKind::device);
  const uint64_t rows = uint64_t(c.kv_heads) * c.head_dim * 4, qb = uint64_t(c.kv_heads) * c.ratio * c.head_dim * 4;
  auto call = [&](std::vector<SequenceId> seqs, uint32_t m, uint64_t k_bytes) {
    ctx.run([&](vk::Recorder& r) {
      dec.record_append_decode(r, 0, seqs, m, {buf.handle(), 0, k_bytes}, {buf.handle(), 0, rows * m},
                               {buf.handle(), 0, qb * m}, {buf.handle(), 0, qb * m});
    });
  };
  auto expect = [&](auto f, ErrorCode code, const std::string& words) {
    try {
      f();
      ADD_FAILURE() << "no error; expected one naming '" << words << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect([&] { call({s, s}, 1, rows); }, ErrorCode::invalid_argument, "listed twice");
  expect([&] { call({s}, 9, rows * 9); }, ErrorCode::invalid_argument, "m = 9");
  expect([&] { call({s}, 1, rows - 4); }, ErrorCode::invalid_argument, "K rows hold");
  expect([&] { call({s + 12345}, 1, rows); }, ErrorCode::not_found, "");
  EXPECT_EQ(cache->length(s, 0), 0u) << "a rejected call changes nothing";
  // Capacity: more tokens than the cache holds leave the lengths as they were.
  expect([&] { for (int i = 0; i < 100; ++i) call({s}, 8, rows * 8); }, ErrorCode::capacity, "cache full");
  EXPECT_EQ(cache->length(s, 0) % 8, 0u);
  EXPECT_LE(cache->length(s, 0), cache->capacity_tokens());
}
