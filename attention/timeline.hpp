// The phase stamps the decode kernels write while Decoder::set_timeline is on
// (shaders/timeline.glsl), and their reading: for each workgroup of one call, the device's
// real-time clock at the start, the end of the prologue (query rows, tables), the end of its
// tiles, the arrival after its partials, the end of the merge of the splits and the end of the
// output (the last two only in the workgroup that merged its group). A fused append-decode call's
// tails (x = 0) stamp the new rows quantized (with the query rows) and attended in place of the
// prologue and the tiles. turboprof timeline prints where a call's time goes from them.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "attention/plan.hpp"

namespace tkv {

// Phases, in order: start, prologue, tiles, arrival, merged, end.
constexpr uint32_t kTimelinePhases = 6;
constexpr uint32_t kTimelineWordsPerWorkgroup = 16;  // 8 uvec2 slots (shaders/timeline.glsl)

// The dispatch of a plan: x = split slots (fused: the tail first, then the splits), y = KV heads x
// row chunks, z = sequences.
struct TimelineGrid {
  uint32_t x = 0, y = 0, z = 0;
  uint32_t workgroups() const { return x * y * z; }
  uint64_t bytes() const { return uint64_t(workgroups()) * kTimelineWordsPerWorkgroup * 4; }
};
TimelineGrid timeline_grid(const DecodePlan& plan, uint32_t kv_heads, uint32_t batch, bool fused = false);
// Room for a call whose plan is known only as it records (a fused append-decode call plans with
// its sequences m tokens longer and room for its tails): the grid of twice `plan`'s splits and
// the tail. Decoder::recorded_timeline_grid() then says which grid the call stamped.
TimelineGrid timeline_room(const DecodePlan& plan, uint32_t kv_heads, uint32_t batch);

struct WorkgroupTimeline {
  uint32_t x = 0, y = 0, z = 0;  // the workgroup's id
  uint32_t split = 0;
  bool written = false;     // the workgroup ran (its flags are set)
  bool had_tokens = false;  // its split held tokens (else it left at once)
  bool merged = false;      // it arrived last in its group and merged the splits
  bool tail = false;        // the fused append's tail of its group (x = 0; split 0)
  std::array<uint64_t, kTimelinePhases> t{};  // clock per phase; 0 where not reached
  // The tc kernel's fused splits that hold new tokens: the clock once invocation 0's subgroup has
  // quantized its new rows (slot 6; 0 elsewhere).
  uint64_t new_rows = 0;
};

// The workgroups' records from the words a call wrote (zeros before it), in dispatch order:
// Error(invalid_argument) when `words` is shorter than the grid's. A 32-bit clock's stamps come
// unwrapped: a call across a wrap keeps its order.
std::vector<WorkgroupTimeline> read_timeline(std::span<const uint32_t> words, const TimelineGrid& grid);

}  // namespace tkv
