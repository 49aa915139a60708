#include "attention/timeline.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "kvcache/error.hpp"

namespace tkv {
namespace {

void unwrap_32bit_clock(std::vector<WorkgroupTimeline>& wgs) {
  // A clock of 32 bits (lavapipe's: every high word 0) wraps every 2^32 ticks (4.3 s of ns), and
  // a call that spans a wrap read as phases out of order. A call spans far less than a wrap, so
  // its stamps lie on a short arc of the circle: they are counted from the stamp after the
  // largest gap between neighbours on the circle.
  std::vector<uint64_t> stamps;
  for (const auto& w : wgs)
    for (uint64_t t : w.t) {
      if (t >> 32) return;  // a 64-bit clock
      if (t) stamps.push_back(t);
    }
  if (stamps.size() < 2) return;
  std::sort(stamps.begin(), stamps.end());
  uint64_t base = stamps.front(), gap = stamps.front() + (uint64_t(1) << 32) - stamps.back();  // across the wrap
  for (size_t i = 1; i < stamps.size(); ++i)
    if (stamps[i] - stamps[i - 1] > gap) {
      gap = stamps[i] - stamps[i - 1];
      base = stamps[i];
    }
  for (auto& w : wgs) {
    for (uint64_t& t : w.t)
      if (t) t = base + ((t - base) & 0xffffffffu);
    if (w.new_rows) w.new_rows = base + ((w.new_rows - base) & 0xffffffffu);
  }
}

}  // namespace

TimelineGrid timeline_grid(const DecodePlan& plan, uint32_t kv_heads, uint32_t batch, bool fused) {
  return {plan.splits + (fused ? 1u : 0u), kv_heads * plan.row_chunks, batch};
}

TimelineGrid timeline_room(const DecodePlan& plan, uint32_t kv_heads, uint32_t batch) {
  TimelineGrid g = timeline_grid(plan, kv_heads, batch, true);
  g.x = 2 * g.x + 2;
  return g;
}

std::vector<WorkgroupTimeline> read_timeline(std::span<const uint32_t> words, const TimelineGrid& grid) {
  const size_t need = size_t(grid.workgroups()) * kTimelineWordsPerWorkgroup;
  if (words.size() < need)
    fail(ErrorCode::invalid_argument, "timeline: " + std::to_string(words.size()) + " words for " +
                                          std::to_string(grid.workgroups()) + " workgroups (need " +
                                          std::to_string(need) + ")");
  std::vector<WorkgroupTimeline> out(grid.workgroups());
  for (uint32_t i = 0; i < grid.workgroups(); ++i) {
    const uint32_t* w = words.data() + size_t(i) * kTimelineWordsPerWorkgroup;
    WorkgroupTimeline& r = out[i];
    r.x = i % grid.x;
    r.y = i / grid.x % grid.y;
    r.z = i / grid.x / grid.y;
    const uint32_t flags = w[14];
    r.written = (flags & 1u) != 0;
    r.had_tokens = (flags & 2u) != 0;
    r.merged = (flags & 4u) != 0;
    r.tail = (flags & 8u) != 0;
    r.split = w[15];
    for (uint32_t p = 0; p < kTimelinePhases; ++p) r.t[p] = uint64_t(w[2 * p]) | uint64_t(w[2 * p + 1]) << 32;
    r.new_rows = uint64_t(w[12]) | uint64_t(w[13]) << 32;
  }
  unwrap_32bit_clock(out);
  return out;
}

}  // namespace tkv
