// turboprof timeline's phase stamps (shaders/timeline.glsl, attention/timeline.hpp,
// profile/timeline.hpp): the summary over synthetic records, then the stamping kernels on the
// device: the same outputs as the plain kernels, every phase stamped in order, and exactly one
// workgroup per group merging, the last to arrive.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "attention/timeline.hpp"
#include "decode_fixture.hpp"
#include "kvcache/error.hpp"
#include "kvcache/vk/buffer.hpp"
#include "kvcache/vk/command.hpp"
#include "profile/timeline.hpp"

using namespace tkv;
using namespace tkv::testing;

namespace {

WorkgroupTimeline record(uint32_t x, bool had_tokens, bool merged, std::vector<uint64_t> t) {
  WorkgroupTimeline w;
  w.x = w.split = x;
  w.written = true;
  w.had_tokens = had_tokens;
  w.merged = merged;
  for (size_t i = 0; i < t.size(); ++i) w.t[i] = t[i];
  return w;
}

}  // namespace

TEST(TimelineSummary, MediansAndTheWorkgroupThatEndedLast) {
  const std::vector<WorkgroupTimeline> wgs = {
      record(0, true, false, {1000, 3000, 13000, 14000}),
      record(1, true, true, {2000, 3000, 9000, 15000, 16000, 20000}),
      record(2, false, false, {2500}),
  };
  const prof::CallTimeline c = prof::summarize_call(wgs, 25.0);
  EXPECT_EQ(c.workgroups, 3u);
  EXPECT_EQ(c.with_tokens, 2u);
  EXPECT_EQ(c.mergers, 1u);
  EXPECT_EQ(c.late, 0u);  // (all started before the first end, 14000)
  EXPECT_DOUBLE_EQ(c.call_us, 25.0);
  EXPECT_DOUBLE_EQ(c.span_us, 19.0);
  EXPECT_DOUBLE_EQ(c.launch_us, 1.5);
  EXPECT_DOUBLE_EQ(c.prologue_us, 1.5);  // (2 + 1) / 2
  EXPECT_DOUBLE_EQ(c.tiles_us, 8.0);     // (10 + 6) / 2
  EXPECT_DOUBLE_EQ(c.tiles_max_us, 10.0);
  EXPECT_DOUBLE_EQ(c.arrival_us, 3.5);
  EXPECT_DOUBLE_EQ(c.merge_us, 1.0);
  EXPECT_DOUBLE_EQ(c.finish_us, 4.0);
  EXPECT_DOUBLE_EQ(c.last_start_us, 1.0);
  EXPECT_DOUBLE_EQ(c.last_prologue_us, 1.0);
  EXPECT_DOUBLE_EQ(c.last_tiles_us, 6.0);
  EXPECT_DOUBLE_EQ(c.last_arrival_us, 6.0);
  EXPECT_DOUBLE_EQ(c.last_merge_us, 1.0);
  EXPECT_DOUBLE_EQ(c.last_finish_us, 4.0);
  EXPECT_DOUBLE_EQ(c.last_start_us + c.last_prologue_us + c.last_tiles_us + c.last_arrival_us + c.last_merge_us +
                       c.last_finish_us,
                   c.span_us);

  prof::CallTimeline other = c;
  other.span_us = 30.0;
  prof::CallTimeline third = c;
  third.span_us = 10.0;
  EXPECT_DOUBLE_EQ(prof::median_timeline({c, other, third}).span_us, 19.0);
  EXPECT_THROW(prof::summarize_call({}, 1.0), Error);
}

// --workgroups: each workgroup that ran, in dispatch order, its stamps from the earliest start.
TEST(TimelineSummary, WorkgroupStampsFromTheFirstStart) {
  std::vector<WorkgroupTimeline> wgs = {
      record(0, true, false, {3000, 4000, 9000, 9500}),
      record(1, true, true, {2000, 3500, 8000, 10000, 11000, 12500}),
      record(2, false, false, {2500}),
      WorkgroupTimeline{},  // (did not run: left out)
  };
  wgs[0].new_rows = 3700;
  wgs[1].y = 5;
  const auto s = prof::workgroup_stamps(wgs);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].split, 0u);
  EXPECT_EQ(s[1].split, 1u);
  EXPECT_EQ(s[1].y, 5u);
  EXPECT_TRUE(s[1].merged);
  EXPECT_FALSE(s[2].had_tokens);
  EXPECT_DOUBLE_EQ(*s[1].at_us[0], 0.0);  // (the earliest start)
  EXPECT_DOUBLE_EQ(*s[0].at_us[0], 1.0);
  EXPECT_DOUBLE_EQ(*s[0].at_us[3], 7.5);
  EXPECT_FALSE(s[0].at_us[4].has_value());  // (it did not merge)
  EXPECT_DOUBLE_EQ(*s[0].new_rows_us, 1.7);
  EXPECT_FALSE(s[1].new_rows_us.has_value());
  EXPECT_DOUBLE_EQ(*s[1].at_us[5], 10.5);
  EXPECT_DOUBLE_EQ(*s[2].at_us[0], 0.5);
  EXPECT_FALSE(s[2].at_us[1].has_value());
  EXPECT_THROW(prof::workgroup_stamps({WorkgroupTimeline{}}), Error);
}

// Workgroups that start only after one with tokens ended ran as a later wave (the grid did not
// fit at once); an empty split's early end does not count as room made.
TEST(TimelineSummary, WorkgroupsOfALaterWaveAreLate) {
  std::vector<WorkgroupTimeline> wgs = {
      record(0, true, false, {1000, 2000, 9000, 10000}),
      record(1, true, false, {1100, 2000, 9500, 10500}),
      record(2, false, false, {1200}),                     // empty: ends at once
      record(3, true, false, {1300, 2300, 9000, 9900}),    // started before the first end (9900)
      record(4, true, false, {10100, 11000, 18000, 19000}),  // after it: a second wave
      record(5, true, true, {10600, 11000, 18000, 19000, 19500, 21000}),
  };
  const prof::CallTimeline c = prof::summarize_call(wgs, 22.0);
  EXPECT_EQ(c.late, 2u);
  EXPECT_DOUBLE_EQ(c.launch_us, 9.6);
  wgs.resize(4);
  EXPECT_EQ(prof::summarize_call(wgs, 12.0).late, 0u);
  prof::CallTimeline one = c, two = c;
  one.late = 0;
  EXPECT_EQ(prof::median_timeline({c, one, two}).late, 2u);
}

// A fused call's tail (flag bit 3) has phases of its own: medians apart from the splits'.
TEST(TimelineSummary, TailsApartFromTheSplits) {
  WorkgroupTimeline tail = record(0, true, true, {1000, 4000, 5000, 12000, 13000, 15000});
  tail.split = 0;
  tail.tail = true;
  const std::vector<WorkgroupTimeline> wgs = {tail, record(1, true, false, {1500, 2500, 10500, 11500})};
  const prof::CallTimeline c = prof::summarize_call(wgs, 20.0);
  EXPECT_EQ(c.workgroups, 2u);
  EXPECT_EQ(c.with_tokens, 1u);
  EXPECT_EQ(c.tails, 1u);
  EXPECT_EQ(c.mergers, 1u);
  EXPECT_DOUBLE_EQ(c.prologue_us, 1.0);  // the split's alone
  EXPECT_DOUBLE_EQ(c.tiles_us, 8.0);
  EXPECT_DOUBLE_EQ(c.arrival_us, 1.0);
  EXPECT_DOUBLE_EQ(c.tail_rows_us, 3.0);
  EXPECT_DOUBLE_EQ(c.tail_attend_us, 1.0);
  EXPECT_DOUBLE_EQ(c.tail_arrival_us, 7.0);
  EXPECT_DOUBLE_EQ(c.merge_us, 1.0);  // the tail merged
  EXPECT_DOUBLE_EQ(c.finish_us, 2.0);
  EXPECT_TRUE(c.last_is_tail);
  EXPECT_DOUBLE_EQ(c.span_us, 14.0);
  const prof::CallTimeline m = prof::median_timeline({c, c, prof::summarize_call({wgs[1]}, 20.0)});
  EXPECT_TRUE(m.last_is_tail);  // in 2 of 3 calls
  EXPECT_DOUBLE_EQ(m.tail_rows_us, 3.0);
}

TEST(TimelineSummary, ReadsTheWordsTheKernelsWrite) {
  const TimelineGrid grid{2, 3, 1};
  std::vector<uint32_t> words(grid.workgroups() * kTimelineWordsPerWorkgroup, 0);
  // Workgroup (1, 2, 0): index 1 + 2 x 2 = 5; start 2^32 + 7, flags: written, had tokens, merged.
  uint32_t* w = words.data() + 5 * kTimelineWordsPerWorkgroup;
  w[0] = 7;
  w[1] = 1;
  w[14] = 7;
  w[15] = 1;
  words[14] = 15;  // workgroup (0, 0, 0): a tail
  const auto r = read_timeline(words, grid);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[5].x, 1u);
  EXPECT_EQ(r[5].y, 2u);
  EXPECT_EQ(r[5].z, 0u);
  EXPECT_EQ(r[5].t[0], (uint64_t(1) << 32) + 7);
  EXPECT_TRUE(r[5].written && r[5].had_tokens && r[5].merged);
  EXPECT_EQ(r[5].split, 1u);
  EXPECT_FALSE(r[5].tail);
  EXPECT_TRUE(r[0].written && r[0].tail);
  EXPECT_FALSE(r[1].written);
  EXPECT_THROW(read_timeline(std::span(words).first(words.size() - 1), grid), Error);
}

// A 32-bit clock (lavapipe's) that wrapped during the call: the stamps past the wrap come after
// those before it (lavapipe read 4286971028 then 684608 for two phases of one workgroup); stamps
// of a 64-bit clock, and calls that did not wrap, stay as read.
TEST(TimelineSummary, A32BitClockThatWrappedKeepsItsOrder) {
  const TimelineGrid grid{2, 1, 1};
  std::vector<uint32_t> words(grid.workgroups() * kTimelineWordsPerWorkgroup, 0);
  const uint32_t before[2][3] = {{4286971028u, 4290000000u, 684608u}, {4294967000u, 1000u, 2000u}};
  for (uint32_t wg = 0; wg < 2; ++wg) {
    uint32_t* w = words.data() + wg * kTimelineWordsPerWorkgroup;
    for (uint32_t p = 0; p < 3; ++p) w[2 * p] = before[wg][p];
    w[14] = 3;
  }
  const auto r = read_timeline(words, grid);
  const uint64_t wrap = uint64_t(1) << 32;
  EXPECT_EQ(r[0].t[0], 4286971028u);
  EXPECT_EQ(r[0].t[1], 4290000000u);
  EXPECT_EQ(r[0].t[2], wrap + 684608u);
  EXPECT_EQ(r[1].t[1], wrap + 1000u);
  EXPECT_EQ(r[1].t[3], 0u);  // not reached: stays 0
  for (const auto& w : r)
    for (uint32_t p = 1; p < 3; ++p) EXPECT_LE(w.t[p - 1], w.t[p]);
  // No wrap: as read.
  std::vector<uint32_t> plain(words.size(), 0);
  plain[0] = 100;
  plain[2] = 300;
  plain[kTimelineWordsPerWorkgroup] = 200;
  const auto q = read_timeline(plain, grid);
  EXPECT_EQ(q[0].t[0], 100u);
  EXPECT_EQ(q[0].t[1], 300u);
  EXPECT_EQ(q[1].t[0], 200u);
}

// The same call with and without the stamps; then the stamps' order and the merge protocol.
void check_traced_call(DecodeCase c) {
  auto& ctx = *shared_context();
  if (!ctx.device_clock()) GTEST_SKIP() << "no shader device clock on " << ctx.caps().name;
  auto f = fill_cache(c);
  const auto q = random_queries(c);
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  const DecodePlan plan = dec.plan(0, f.seqs, c.m, c.options);
  const TimelineGrid grid = timeline_grid(plan, c.kv_heads, uint32_t(c.lengths.size()));
  vk::Buffer q_buf(ctx, q.size() * 4, vk::MemoryKind::device);
  vk::upload(ctx, q_buf, 0, std::as_bytes(std::span(q)));
  vk::Buffer out_buf(ctx, 2 * q.size() * 4, vk::MemoryKind::readback);
  vk::Buffer trace(ctx, 256 + grid.bytes(), vk::MemoryKind::readback);
  const uint64_t out_bytes = q.size() * 4;
  ctx.run([&](vk::Recorder& r) {
    r.fill(trace, 0, VK_WHOLE_SIZE, 0);
    r.barrier();
    dec.record(r, 0, f.seqs, c.m, {q_buf.handle(), 0, q_buf.size()}, {out_buf.handle(), 0, out_bytes}, c.options);
    dec.set_timeline({trace.handle(), 256, grid.bytes()});
    dec.record(r, 0, f.seqs, c.m, {q_buf.handle(), 0, q_buf.size()}, {out_buf.handle(), out_bytes, out_bytes},
               c.options);
    dec.set_timeline({});
    r.host_barrier();
  });
  const float* out = static_cast<const float*>(out_buf.mapped());
  ASSERT_EQ(std::memcmp(out, out + q.size(), out_bytes), 0) << "the stamping kernel's output differs";
  const auto ref = reference_decode(*f.cache, 0, f.seqs, c.m, c.kv_heads * c.ratio, q);
  EXPECT_LE(max_head_error(std::span(out, q.size()), ref, c.head_dim), 1e-4);

  const uint32_t* words = static_cast<const uint32_t*>(trace.mapped());
  EXPECT_EQ(words[0], 0u) << "a stamp before the range's offset";
  const auto wgs = read_timeline(std::span(words + 64, grid.workgroups() * kTimelineWordsPerWorkgroup), grid);
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const WorkgroupTimeline*>> groups;  // (z, y)
  uint32_t empty = 0;
  for (const auto& w : wgs) {
    SCOPED_TRACE("workgroup (" + std::to_string(w.x) + ", " + std::to_string(w.y) + ", " + std::to_string(w.z) + ")");
    ASSERT_TRUE(w.written);
    EXPECT_EQ(w.split, w.x);
    EXPECT_NE(w.t[0], 0u);
    if (!w.had_tokens) {
      ++empty;
      for (uint32_t p = 1; p < kTimelinePhases; ++p) EXPECT_EQ(w.t[p], 0u) << "phase " << p;
      continue;
    }
    groups[{w.z, w.y}].push_back(&w);
    const uint32_t phases = w.merged ? kTimelinePhases : 4;
    for (uint32_t p = 1; p < phases; ++p) EXPECT_LE(w.t[p - 1], w.t[p]) << "phase " << p;
    for (uint32_t p = phases; p < kTimelinePhases; ++p) EXPECT_EQ(w.t[p], 0u) << "phase " << p;
  }
  EXPECT_EQ(groups.size(), size_t(grid.y) * grid.z);
  for (const auto& [key, members] : groups) {
    const WorkgroupTimeline* merger = nullptr;
    for (const auto* w : members)
      if (w->merged) {
        EXPECT_EQ(merger, nullptr) << "two workgroups merged group (" << key.first << ", " << key.second << ")";
        merger = w;
      }
    ASSERT_NE(merger, nullptr) << "no workgroup merged group (" << key.first << ", " << key.second << ")";
    // The last to count its arrival merges: every other split's partials were written before.
    for (const auto* w : members) EXPECT_LE(w->t[3], merger->t[3]);
    // Every split holding tokens of the sequence took part.
    const uint32_t len = c.lengths[key.first];
    EXPECT_EQ(members.size(), plan.splits == 1 ? 1u : (len + plan.chunk - 1) / plan.chunk);
  }
  if (c.lengths.size() > 1) {
    EXPECT_GT(empty, 0u) << "the case meant to leave some splits empty";
  }
}

TEST(Timeline, ScalarKernelStampsInOrderWithTheSameOutput) {
  DecodeCase c;
  c.k_type = KvType::turbo3;
  c.v_type = KvType::q8_0;
  c.lengths = {100, 37};  // the short sequence leaves the last splits empty
  c.options.splits = 4;
  check_traced_call(c);
}

TEST(Timeline, OneSplitStampsTheDirectPath) {
  DecodeCase c;
  c.k_type = c.v_type = KvType::f16;
  c.head_dim = 64;
  c.lengths = {40};
  c.options.splits = 1;
  check_traced_call(c);
}

void check_traced_append_decode(DecodeCase c, uint32_t m);  // (below)

// The tc kernel: a decode call, then a fused append-decode call of two queries.
TEST(Timeline, TensorCoreKernelStampsInOrderWithTheSameOutput) {
  if (!shared_context()->caps().mma_fragment_layout) GTEST_SKIP() << "no tc variant on this device";
  DecodeCase c;
  c.lengths = {300, 70};
  c.options.variant = Variant::tc;
  c.options.splits = 4;
  check_traced_call(c);
  check_traced_append_decode(c, 2);
}

TEST(Timeline, BadRangesAreNamed) {
  auto& ctx = *shared_context();
  DecodeCase c;
  c.lengths = {64};
  auto f = fill_cache(c);
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  vk::Buffer trace(ctx, 4096, vk::MemoryKind::device);
  try {
    dec.set_timeline({trace.handle(), 100, 1024});
    FAIL() << "an offset of 100 was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("multiple of 256"), std::string::npos) << e.what();
  }
  if (!ctx.device_clock()) return;
  const auto q = random_queries(c);
  std::vector<float> out(q.size());
  dec.set_timeline({trace.handle(), 0, 16});  // one workgroup's worth less than the call's
  try {
    dec.decode(0, f.seqs, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4});
    FAIL() << "a 16-byte trace range was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("trace range holds 16 bytes"), std::string::npos) << e.what();
  }
  dec.set_timeline({});
  dec.decode(0, f.seqs, 1, {q.data(), q.size() * 4}, {out.data(), out.size() * 4});  // off again: runs
  const auto ref = reference_decode(*f.cache, 0, f.seqs, 1, c.kv_heads * c.ratio, q);
  EXPECT_LE(max_head_error(out, ref, c.head_dim), 1e-4);
}

// A fused append-decode call stamps its tails too (x = 0 of each group: the new rows quantized,
// attended, counted in), its splits as a decode call's (split x - 1), and the group's merge is
// still the last arrival's, the tail's or a split's.
void check_traced_append_decode(DecodeCase c, uint32_t m) {
  auto& ctx = *shared_context();
  if (!ctx.device_clock()) GTEST_SKIP() << "no shader device clock on " << ctx.caps().name;
  auto f = fill_cache(c);
  const uint32_t batch = uint32_t(c.lengths.size());
  c.m = m;
  const auto q = random_queries(c);
  std::mt19937 rng(11);
  const auto k = random_rows(rng, batch * m, c.kv_heads, c.head_dim, true);
  const auto v = random_rows(rng, batch * m, c.kv_heads, c.head_dim, false);
  vk::Buffer kd(ctx, k.size() * 4, vk::MemoryKind::device), vd(ctx, v.size() * 4, vk::MemoryKind::device);
  vk::Buffer qd(ctx, q.size() * 4, vk::MemoryKind::device), od(ctx, q.size() * 4, vk::MemoryKind::readback);
  vk::upload(ctx, kd, 0, std::as_bytes(std::span(k)));
  vk::upload(ctx, vd, 0, std::as_bytes(std::span(v)));
  vk::upload(ctx, qd, 0, std::as_bytes(std::span(q)));
  Decoder dec(*f.cache, c.kv_heads * c.ratio);
  const TimelineGrid room = timeline_room(dec.plan(0, f.seqs, m, c.options), c.kv_heads, batch);
  vk::Buffer trace(ctx, room.bytes(), vk::MemoryKind::readback);
  dec.set_timeline({trace.handle(), 0, trace.size()});
  DecodeOptions fused = c.options;
  fused.fusion = AppendFusion::fused;
  ctx.run([&](vk::Recorder& r) {
    r.fill(trace, 0, VK_WHOLE_SIZE, 0);
    r.barrier();
    dec.record_append_decode(r, 0, f.seqs, m, {kd.handle(), 0, kd.size()}, {vd.handle(), 0, vd.size()},
                             {qd.handle(), 0, qd.size()}, {od.handle(), 0, od.size()}, fused);
    r.host_barrier();
  });
  const TimelineGrid grid = dec.recorded_timeline_grid();
  dec.set_timeline({});
  for (uint32_t b = 0; b < batch; ++b) EXPECT_EQ(f.cache->length(f.seqs[b], 0), c.lengths[b] + m);
  const auto ref = reference_decode(*f.cache, 0, f.seqs, m, c.kv_heads * c.ratio, q, c.options);
  EXPECT_LE(max_head_error(std::span(static_cast<const float*>(od.mapped()), q.size()), ref, c.head_dim), 1e-4);

  ASSERT_GE(grid.x, 2u) << "a fused call has its tail and a split at least";
  EXPECT_EQ(grid.z, batch);
  const uint32_t* words = static_cast<const uint32_t*>(trace.mapped());
  const auto wgs = read_timeline(std::span(words, grid.workgroups() * kTimelineWordsPerWorkgroup), grid);
  std::map<std::pair<uint32_t, uint32_t>, std::vector<const WorkgroupTimeline*>> groups;  // (z, y)
  for (const auto& w : wgs) {
    SCOPED_TRACE("workgroup (" + std::to_string(w.x) + ", " + std::to_string(w.y) + ", " + std::to_string(w.z) + ")");
    ASSERT_TRUE(w.written);
    EXPECT_EQ(w.tail, w.x == 0u);
    if (!w.tail) {
      EXPECT_EQ(w.split, w.x - 1u);
      // The splits are planned on the old tokens (the tail takes the new ones): with one
      // sequence and the plan's own split count, none is left without tokens.
      if (batch == 1 && !c.options.splits) {
        EXPECT_TRUE(w.had_tokens) << "an empty split";
      }
    }
    if (!w.had_tokens) continue;
    groups[{w.z, w.y}].push_back(&w);
    const uint32_t phases = w.merged ? kTimelinePhases : 4;
    for (uint32_t p = 1; p < phases; ++p) EXPECT_LE(w.t[p - 1], w.t[p]) << "phase " << p;
    for (uint32_t p = 1; p < phases; ++p) EXPECT_NE(w.t[p], 0u) << "phase " << p;
    for (uint32_t p = phases; p < kTimelinePhases; ++p) EXPECT_EQ(w.t[p], 0u) << "phase " << p;
  }
  EXPECT_EQ(groups.size(), size_t(grid.y) * grid.z);
  for (const auto& [key, members] : groups) {
    uint32_t tails = 0, mergers = 0;
    const WorkgroupTimeline* merger = nullptr;
    for (const auto* w : members) {
      tails += w->tail ? 1 : 0;
      if (w->merged) {
        ++mergers;
        merger = w;
      }
    }
    EXPECT_EQ(tails, 1u) << "group (" << key.first << ", " << key.second << ")";
    ASSERT_EQ(mergers, 1u) << "group (" << key.first << ", " << key.second << ")";
    for (const auto* w : members) EXPECT_LE(w->t[3], merger->t[3]);
  }
}

TEST(Timeline, AppendDecodeStampsItsTails) {
  DecodeCase c;
  c.k_type = KvType::turbo3;
  c.v_type = KvType::q8_0;
  c.lengths = {100, 37};
  c.options.splits = 3;
  check_traced_append_decode(c, 1);
}

TEST(Timeline, AppendDecodeStampsItsTailsWithSeveralQueries) {
  DecodeCase c;
  c.k_type = c.v_type = KvType::f16;
  c.head_dim = 64;
  c.lengths = {40};
  check_traced_append_decode(c, 3);
}
