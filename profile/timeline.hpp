// turboprof timeline: where one decode call's time goes, from the phase stamps its workgroups
// write (attention/timeline.hpp). The summary is pure, so that it is tested without a GPU.
#pragma once

#include <cstdint>
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

// Error(invalid_argument) when no workgroup stamped anything.
CallTimeline summarize_call(const std::vector<WorkgroupTimeline>& workgroups, double call_us);
// Field by field, the median over calls.
CallTimeline median_timeline(const std::vector<CallTimeline>& calls);

}  // namespace tkv::prof
