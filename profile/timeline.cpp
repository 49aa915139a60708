#include "profile/timeline.hpp"

#include <algorithm>
#include <iostream>
#include <utility>

#include "kvcache/error.hpp"
#include "profile/commands.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/table.hpp"
#include "profile/workloads.hpp"

namespace tkv::prof {
namespace {

double median(std::vector<double> v) { return summarize(std::move(v)).median_us; }  // (0 when empty)

double us(uint64_t from, uint64_t to) { return to > from ? double(to - from) / 1000.0 : 0.0; }

// A workgroup's last stamp: its end (a merger), its arrival, or its start (an empty split).
uint64_t last_stamp(const WorkgroupTimeline& w) {
  uint64_t t = 0;
  for (uint64_t x : w.t) t = std::max(t, x);
  return t;
}

// Whether the workgroup ran and stamped its start (the others are left out of every figure).
bool started(const WorkgroupTimeline& w) { return w.written && w.t[0] != 0; }

// The earliest start among them (UINT64_MAX when none started): the call's time zero.
uint64_t first_start(const std::vector<WorkgroupTimeline>& workgroups) {
  uint64_t first = UINT64_MAX;
  for (const auto& w : workgroups)
    if (started(w)) first = std::min(first, w.t[0]);
  return first;
}

}  // namespace

CallTimeline summarize_call(const std::vector<WorkgroupTimeline>& workgroups, double call_us) {
  CallTimeline c;
  c.call_us = call_us;
  const uint64_t first = first_start(workgroups);
  uint64_t last_start = 0, end = 0, first_end = UINT64_MAX;  // (of those with tokens)
  const WorkgroupTimeline* last = nullptr;
  std::vector<double> prologue, tiles, arrival, merge, finish, tail_rows, tail_attend, tail_arrival;
  for (const auto& w : workgroups) {
    if (!started(w)) continue;
    ++c.workgroups;
    last_start = std::max(last_start, w.t[0]);
    if (last_stamp(w) >= end) {
      end = last_stamp(w);
      last = &w;
    }
    if (!w.had_tokens) continue;
    first_end = std::min(first_end, last_stamp(w));
    if (w.tail) {
      ++c.tails;
      tail_rows.push_back(us(w.t[0], w.t[1]));
      tail_attend.push_back(us(w.t[1], w.t[2]));
      tail_arrival.push_back(us(w.t[2], w.t[3]));
    } else {
      ++c.with_tokens;
      // (the tc kernel's fused splits that hold new tokens: their quantizer, in the tails' column)
      if (w.new_rows) tail_rows.push_back(us(w.t[0], w.new_rows));
      prologue.push_back(us(w.t[0], w.t[1]));
      tiles.push_back(us(w.t[1], w.t[2]));
      arrival.push_back(us(w.t[2], w.t[3]));
    }
    if (w.merged) {
      ++c.mergers;
      merge.push_back(us(w.t[3], w.t[4]));
      finish.push_back(us(w.t[4], w.t[5]));
    }
  }
  if (!last) fail(ErrorCode::invalid_argument, "timeline: no workgroup of the call stamped its phases");
  for (const auto& w : workgroups)
    if (started(w) && w.t[0] > first_end) ++c.late;
  c.span_us = us(first, end);
  c.launch_us = us(first, last_start);
  c.prologue_us = median(prologue);
  c.tiles_us = median(tiles);
  c.tiles_max_us = tiles.empty() ? 0 : *std::max_element(tiles.begin(), tiles.end());
  c.arrival_us = median(arrival);
  c.merge_us = median(merge);
  c.finish_us = median(finish);
  c.tail_rows_us = median(tail_rows);
  c.tail_attend_us = median(tail_attend);
  c.tail_arrival_us = median(tail_arrival);
  c.last_is_tail = last->tail;
  c.last_start_us = us(first, last->t[0]);
  if (last->had_tokens) {
    c.last_prologue_us = us(last->t[0], last->t[1]);
    c.last_tiles_us = us(last->t[1], last->t[2]);
    c.last_arrival_us = us(last->t[2], last->t[3]);
    if (last->merged) {
      c.last_merge_us = us(last->t[3], last->t[4]);
      c.last_finish_us = us(last->t[4], last->t[5]);
    }
  }
  return c;
}

std::vector<WorkgroupStamps> workgroup_stamps(const std::vector<WorkgroupTimeline>& workgroups) {
  const uint64_t first = first_start(workgroups);
  if (first == UINT64_MAX) fail(ErrorCode::invalid_argument, "timeline: no workgroup of the call stamped its start");
  auto at = [&](uint64_t t) { return t == 0 ? std::optional<double>{} : std::optional<double>{us(first, t)}; };
  std::vector<WorkgroupStamps> out;
  for (const auto& w : workgroups) {
    if (!w.written) continue;
    WorkgroupStamps s{w.x, w.y, w.z, w.split, w.had_tokens, w.merged, w.tail, {}, at(w.new_rows)};
    for (uint32_t i = 0; i < kTimelinePhases; ++i) s.at_us[i] = at(w.t[i]);
    out.push_back(s);
  }
  return out;
}

namespace {

nlohmann::json stamps_json(const std::vector<WorkgroupStamps>& stamps) {
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : stamps) {
    nlohmann::json at = nlohmann::json::array();
    for (const auto& v : s.at_us) at.push_back(opt(v));
    a.push_back({{"id", {s.x, s.y, s.z}},
                 {"split", s.split},
                 {"had_tokens", s.had_tokens},
                 {"merged", s.merged},
                 {"tail", s.tail},
                 {"at_us", at},
                 {"new_rows_us", opt(s.new_rows_us)}});
  }
  return a;
}

}  // namespace

CallTimeline median_timeline(const std::vector<CallTimeline>& calls) {
  CallTimeline m;
  if (calls.empty()) return m;
  auto field = [&](double CallTimeline::*f) {
    std::vector<double> v;
    for (const auto& c : calls) v.push_back(c.*f);
    m.*f = median(v);
  };
  for (auto f : {&CallTimeline::call_us, &CallTimeline::span_us, &CallTimeline::launch_us, &CallTimeline::prologue_us,
                 &CallTimeline::tiles_us, &CallTimeline::tiles_max_us, &CallTimeline::arrival_us,
                 &CallTimeline::merge_us, &CallTimeline::finish_us, &CallTimeline::last_start_us,
                 &CallTimeline::last_prologue_us, &CallTimeline::last_tiles_us, &CallTimeline::last_arrival_us,
                 &CallTimeline::last_merge_us, &CallTimeline::last_finish_us, &CallTimeline::tail_rows_us,
                 &CallTimeline::tail_attend_us, &CallTimeline::tail_arrival_us})
    field(f);
  m.workgroups = calls.front().workgroups;
  m.with_tokens = calls.front().with_tokens;
  m.mergers = calls.front().mergers;
  m.tails = calls.front().tails;
  std::vector<uint32_t> late;
  for (const auto& c : calls) late.push_back(c.late);
  std::nth_element(late.begin(), late.begin() + late.size() / 2, late.end());
  m.late = late[late.size() / 2];
  size_t tail_last = 0;
  for (const auto& c : calls) tail_last += c.last_is_tail ? 1 : 0;
  m.last_is_tail = 2 * tail_last > calls.size();  // in most calls
  return m;
}

// ---------------------------------------------------------------------------------------------
// The subcommand.

int run_timeline(const CommonOptions& o) {
  if (o.workgroups && !o.json && o.out_dir.empty())
    fail(ErrorCode::invalid_argument, "timeline: --workgroups writes into the JSON document: add --json or --out DIR");
  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  if (!ctx->device_clock())
    fail(ErrorCode::invalid_argument, "timeline: device " + caps.name +
                                          " offers no shader device clock (VK_KHR_shader_clock), which the phase "
                                          "stamps read");
  const Shape shape = resolve_shape(o);
  const auto depths = resolve_depths(o, caps, "1k", "1k,4k,32k,128k");
  const auto pairs = parse_type_pairs(o.types);
  const auto variants = parse_variants(o.variants);
  OutputFiles files(o.out_dir);
  for (uint32_t depth : depths)
    for (const auto& p : pairs) check_point(caps, shape, p, depth, o.batch, o.m, variants);

  std::vector<std::string> columns = {"type",   "variant",  "ctx",   "splits",    "wgs",     "late",  "us/call",
                                      "span",   "launch",   "prologue", "tiles", "tiles max", "arrival", "merge",
                                      "finish"};
  if (o.fused) columns.insert(columns.end(), {"tail: rows", "attend", "arrival"});
  columns.insert(columns.end(), {"last: start", "prologue", "tiles", "arrival", "merge", "finish"});
  if (o.fused) columns.push_back("last is");
  Table table(columns);
  nlohmann::json rows = nlohmann::json::array();
  for (uint32_t depth : depths)
    for (const auto& p : pairs) {
      progress("filling a " + p.label() + " cache to " + depth_label(depth));
      DecodeSetup setup{p.k, p.v, shape.q_heads, shape.kv_heads, shape.head_dim, o.batch, depth, o.m, 0,
                        o.fused ? o.m : 0};
      DecodeBench bench(ctx, setup);
      for (Variant variant : point_variants(caps, shape, p, variants, o.m)) {
        progress("tracing " + p.label() + " " + std::string(variant_name(variant)) + " at " + depth_label(depth));
        DecodeOptions options;
        options.variant = variant;
        const TracedCalls traced = bench.trace(o.repeat, options, o.fused);
        std::vector<CallTimeline> calls;
        for (size_t i = 0; i < traced.calls.size(); ++i)
          calls.push_back(summarize_call(traced.calls[i], traced.timing.samples_us[i]));
        const CallTimeline c = median_timeline(calls);
        const auto plan = bench.plan(options);
        const std::string vname = shown_variant(p, plan.variant);
        auto f = [](double x) { return fixed(x, 2); };
        // (splits: the traced calls' own; the scalar kernel's fused calls have a tail a group.)
        const uint32_t splits = traced.grid.x - (c.tails > 0 ? 1 : 0);
        std::vector<std::string> row = {p.label(),      vname,           depth_label(depth), std::to_string(splits),
                                        std::to_string(c.workgroups), std::to_string(c.late), f(c.call_us),
                                        f(c.span_us),     f(c.launch_us),
                                        f(c.prologue_us), f(c.tiles_us), f(c.tiles_max_us), f(c.arrival_us),
                                        f(c.merge_us),    f(c.finish_us)};
        if (o.fused) row.insert(row.end(), {f(c.tail_rows_us), f(c.tail_attend_us), f(c.tail_arrival_us)});
        row.insert(row.end(), {f(c.last_start_us), f(c.last_prologue_us), f(c.last_tiles_us), f(c.last_arrival_us),
                               f(c.last_merge_us), f(c.last_finish_us)});
        if (o.fused) row.push_back(c.last_is_tail ? "tail" : "split");
        table.add(row);
        rows.push_back({{"k_type", type_name(p.k)},
                        {"v_type", type_name(p.v)},
                        {"variant", vname},
                        {"ctx", depth},
                        {"fused", o.fused},
                        {"splits", splits},
                        {"plan", plan.describe()},
                        {"workgroups", c.workgroups},
                        {"workgroups_with_tokens", c.with_tokens},
                        {"mergers", c.mergers},
                        {"late_workgroups", c.late},
                        {"call_us", c.call_us},
                        {"span_us", c.span_us},
                        {"launch_us", c.launch_us},
                        {"prologue_us", c.prologue_us},
                        {"tiles_us", c.tiles_us},
                        {"tiles_max_us", c.tiles_max_us},
                        {"arrival_us", c.arrival_us},
                        {"merge_us", c.merge_us},
                        {"finish_us", c.finish_us},
                        {"tail",
                         {{"tails", c.tails},
                          {"rows_us", c.tail_rows_us},
                          {"attend_us", c.tail_attend_us},
                          {"arrival_us", c.tail_arrival_us}}},
                        {"last_is_tail", c.last_is_tail},
                        {"last",
                         {{"start_us", c.last_start_us},
                          {"prologue_us", c.last_prologue_us},
                          {"tiles_us", c.last_tiles_us},
                          {"arrival_us", c.last_arrival_us},
                          {"merge_us", c.last_merge_us},
                          {"finish_us", c.last_finish_us}}}});
        if (o.workgroups) {
          nlohmann::json each = nlohmann::json::array();
          for (size_t i = 0; i < traced.calls.size(); ++i)
            each.push_back({{"call_us", traced.timing.samples_us[i]},
                            {"workgroups", stamps_json(workgroup_stamps(traced.calls[i]))}});
          rows.back()["calls"] = std::move(each);
        }
      }
    }
  progress_done();

  nlohmann::json doc = run_json(caps, shape, o);
  doc.update(nlohmann::json{{"repeat", o.repeat}, {"rows", rows}});
  files.finish("timeline", table, doc, o.json, run_header(caps, shape, o) + "\n\n", [&] {
    std::cout << "\nµs, medians over " << o.repeat
              << " calls. us/call: GPU timestamps around the call; the rest from the device clock each\n"
                 "workgroup stamps (read as ns): span = first workgroup start to last end; launch = first to "
                 "last start;\nlate = workgroups that started after a workgroup with tokens ended (the device "
                 "did not hold the\nwhole grid at once: a later wave); prologue (query rows, tables), tiles, "
                 "arrival (partials written,\narrival counted): medians over the workgroups with tokens; merge "
                 "(the splits merged) and finish\n(output rows): over those that merged.\n--fused: append-decode "
                 "calls; 'tail': the tails' new rows quantized (with the "
                 "query rows),\nthe new tokens attended, their partials and arrival (the splits' columns leave the "
                 "tails out;\nthe tc kernel has no tails: its 'rows' are its splits' that hold new tokens, start to new rows quantized).\n'last': the workgroup that ended last: its start after the first, and its "
                 "phases (they sum to span).\nus/call - span is the dispatch's cost outside the workgroups. The "
                 "stamping kernels are separate\npipelines (decode*_timeline): their times are close to, not equal "
                 "to, the plain kernels'.\n";
  });
  return 0;
}

}  // namespace tkv::prof
