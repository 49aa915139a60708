// turboprof issue: the issue-rate probe (profile/measure.hpp, shaders/issue_probe*.comp) over
// kinds, loop bodies and warps an SM/CU: how fast a device issues integer, fp32 and MMA work,
// alone or mixed, integer work by pipe (alu: shifts and logic; imad: multiply-adds), and whether
// the loop's code size changes it.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kvcache/error.hpp"
#include "profile/commands.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/table.hpp"

namespace tkv::prof {

int run_issue(const CommonOptions& o) {
  std::string known;
  for (const char* n : issue_kind_names) known += std::string(known.empty() ? "" : ", ") + n;
  std::vector<IssueKind> kinds;
  std::stringstream list(o.kinds);
  for (std::string k; std::getline(list, k, ',');) {
    uint32_t i = 0;
    while (i < issue_kinds && k != issue_kind_names[i]) ++i;
    if (i == issue_kinds) fail(ErrorCode::invalid_argument, "--kinds: unknown kind '" + k + "' (" + known + ")");
    kinds.push_back(IssueKind(i));
  }
  if (o.mmas == 0 || o.mmas > 8)
    fail(ErrorCode::invalid_argument, "--mmas: " + std::to_string(o.mmas) + " is not in 1-8");
  if (kinds.empty()) fail(ErrorCode::invalid_argument, "--kinds lists nothing");
  const auto bodies = parse_uint_list(o.body, "--body");
  const auto warps = parse_uint_list(o.warps, "--warps");
  for (uint32_t b : bodies)
    if (b == 0 || b > 1024) fail(ErrorCode::invalid_argument, "--body: " + std::to_string(b) + " is not in 1-1024");
  for (uint32_t w : warps)
    if (w == 0 || w > 64) fail(ErrorCode::invalid_argument, "--warps: " + std::to_string(w) + " is not in 1-64");
  // (About 70 ms a dispatch on an H200 at the bound; no dispatch may run for minutes.)
  if (o.steps > (1u << 20))
    fail(ErrorCode::invalid_argument, "--steps: " + std::to_string(o.steps) + " is more than 1048576");
  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  // Every kind asked for must run here before anything is measured.
  for (IssueKind kind : kinds)
    if (const auto why = issue_kind_unsupported(caps, kind); !why.empty())
      fail(ErrorCode::invalid_argument, "--kinds: " + why);
  // Updates per invocation: the same for every body (iterations = steps / body, at least one).
  const uint32_t steps = o.steps ? o.steps : caps.device_class == DeviceClass::cpu ? 64 : 16384;
  Table table({"kind", "body", "iterations", "warps/unit", "invocations", "us", "min", "G updates/s", "G MMAs/s"});
  nlohmann::json rows = nlohmann::json::array();
  for (IssueKind kind : kinds)
    for (uint32_t body : bodies)
      for (uint32_t w : warps) {
        const std::string name = issue_kind_names[uint32_t(kind)];
        IssueProbe probe{kind, body, std::max<uint32_t>(1, steps / body), w, o.mmas};
        progress("issue: " + name + " body " + std::to_string(body) + ", " + std::to_string(w) + " warps a unit");
        const auto r = measure_issue(*ctx, probe, o.repeat);
        const double rate = double(r.updates) / (r.timing.median_us * 1e3);
        const double mma_rate = double(r.mmas) / (r.timing.median_us * 1e3);
        table.add({name, std::to_string(body), std::to_string(probe.iters), std::to_string(w),
                   std::to_string(r.invocations), fixed(r.timing.median_us, 1), fixed(r.timing.min_us, 1),
                   fixed(rate, 1), fixed(mma_rate, 1)});
        rows.push_back({{"kind", name},
                        {"body", body},
                        {"iterations", probe.iters},
                        {"warps_per_unit", w},
                        {"invocations", r.invocations},
                        {"updates", r.updates},
                        {"mmas", r.mmas},
                        {"us", r.timing.median_us},
                        {"min_us", r.timing.min_us},
                        {"g_updates_per_s", rate},
                        {"g_mmas_per_s", mma_rate}});
      }
  progress_done();
  if (o.json) {
    std::cout << nlohmann::json{{"device", caps_json(caps)}, {"steps", steps}, {"rows", rows}}.dump(2) << "\n";
    return 0;
  }
  std::cout << "device: " << caps.name << ", " << (caps.compute_units ? std::to_string(caps.compute_units) : "?")
            << " compute units\nissue probe: a body copy is 8 independent updates (int: shift, shift, xor, add; "
               "fp32: fma; alu: shift, xor; imad: multiply-add), 8 independent 16x8x16 MMAs a subgroup (mma), or 8 "
               "int updates and "
            << o.mmas << " MMAs (mix); " << steps << " body copies an invocation; results checked against the CPU\n\n";
  table.print(std::cout);
  return 0;
}

}  // namespace tkv::prof
