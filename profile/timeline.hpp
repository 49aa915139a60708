// turboprof timeline: where one decode call's time goes, from the phase stamps its workgroups
// write (attention/timeline.hpp). The summary is pure, so that it is tested without a GPU.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "attention/timeline.hpp"

namespace tkv::prof {

// One call, in µs (the device clock read as nanoseconds: NVIDIA's global timer and Mesa's are).
struct CallTimeline {
  double call_us = 0;      // GPU timestamps around the call
  double span_us = 0;      // the first workgroup's start to the last one's end (device clock)
  double launch_us = 0;    // the first start to the last start
  double prologue_us = 0;  // medians over the workgroups whose split held tokens
  double tiles_us = 0, tiles_max_us = 0;
  double arrival_us = 0;   // partials written and the arrival counted
  double merge_us = 0, finish_us = 0;  // medians over the workgroups that merged their group
  // The workgroup that ended last (a merger where there are partials): when it started (from the
  // first start), and its phases. start + its phases = span.
  double last_start_us = 0, last_prologue_us = 0, last_tiles_us = 0, last_arrival_us = 0, last_merge_us = 0,
         last_finish_us = 0;
  uint32_t workgroups = 0, with_tokens = 0, mergers = 0;
  // Workgroups that started only after a workgroup with tokens had ended: the device did not hold
  // the whole grid at once (registers or shared memory), so they ran as a later wave.
  uint32_t late = 0;
  // Fused append-decode calls: the tails' phases, medians over the tails (the new rows quantized
  // with the query rows rotated; the new tokens attended; the partials written and the arrival
  // counted). Their merges count with the splits'. last_is_tail: the last workgroup was a tail
  // (its rows and attention then stand in the last's prologue and tiles).
  double tail_rows_us = 0, tail_attend_us = 0, tail_arrival_us = 0;
  uint32_t tails = 0;
  bool last_is_tail = false;
};

// One workgroup of a traced call as `turboprof timeline --workgroups` writes it: its id, what it
// did, and its stamps in µs from the call's first start (empty where it did not reach a phase).
struct WorkgroupStamps {
  uint32_t x = 0, y = 0, z = 0, split = 0;
  bool had_tokens = false, merged = false, tail = false;
  std::array<std::optional<double>, kTimelinePhases> at_us{};  // start, prologue, tiles, arrival, merged, end
  std::optional<double> new_rows_us;  // the tc kernel's fused splits that hold new tokens
};
// The workgroups that ran (their flags set), in dispatch order; times from the earliest start among
// them. Error(invalid_argument) when none stamped its start.
std::vector<WorkgroupStamps> workgroup_stamps(const std::vector<WorkgroupTimeline>& workgroups);

// Error(invalid_argument) when no workgroup stamped anything.
CallTimeline summarize_call(const std::vector<WorkgroupTimeline>& workgroups, double call_us);
// Field by field, the median over calls.
CallTimeline median_timeline(const std::vector<CallTimeline>& calls);

}  // namespace tkv::prof
