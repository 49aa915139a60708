// turboprof issue: the issue-rate probe (profile/measure.hpp, shaders/issue_probe.comp) over
// kinds, loop bodies and warps an SM/CU: how fast a device issues integer and fp32 work, and
// whether the loop's code size changes it.
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
  std::vector<uint32_t> kinds;
  std::stringstream list(o.kinds);
  for (std::string k; std::getline(list, k, ',');) {
    if (k == "int") kinds.push_back(0);
    else if (k == "fp32") kinds.push_back(1);
    else fail(ErrorCode::invalid_argument, "--kinds: unknown kind '" + k + "' (int, fp32)");
  }
  if (kinds.empty()) fail(ErrorCode::invalid_argument, "--kinds lists nothing");
  const auto bodies = parse_uint_list(o.body, "--body");
  const auto warps = parse_uint_list(o.warps, "--warps");
  for (uint32_t b : bodies)
    if (b == 0 || b > 1024) fail(ErrorCode::invalid_argument, "--body: " + std::to_string(b) + " is not in 1-1024");
  for (uint32_t w : warps)
    if (w == 0 || w > 64) fail(ErrorCode::invalid_argument, "--warps: " + std::to_string(w) + " is not in 1-64");
  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  // Updates per invocation: the same for every body (iterations = steps / body, at least one).
  const uint32_t steps = o.steps ? o.steps : caps.device_class == DeviceClass::cpu ? 64 : 16384;
  Table table({"kind", "body", "iterations", "warps/unit", "invocations", "us", "min", "G updates/s"});
  nlohmann::json rows = nlohmann::json::array();
  for (uint32_t kind : kinds)
    for (uint32_t body : bodies)
      for (uint32_t w : warps) {
        IssueProbe probe{kind, body, std::max<uint32_t>(1, steps / body), w};
        progress("issue: " + std::string(kind ? "fp32" : "int") + " body " + std::to_string(body) + ", " +
                 std::to_string(w) + " warps a unit");
        const auto r = measure_issue(*ctx, probe, o.repeat);
        const double rate = double(r.updates) / (r.timing.median_us * 1e3);
        table.add({kind ? "fp32" : "int", std::to_string(body), std::to_string(probe.iters), std::to_string(w),
                   std::to_string(r.invocations), fixed(r.timing.median_us, 1), fixed(r.timing.min_us, 1),
                   fixed(rate, 1)});
        rows.push_back({{"kind", kind ? "fp32" : "int"}, {"body", body}, {"iterations", probe.iters},
                        {"warps_per_unit", w}, {"invocations", r.invocations}, {"updates", r.updates},
                        {"us", r.timing.median_us}, {"min_us", r.timing.min_us}, {"g_updates_per_s", rate}});
      }
  progress_done();
  if (o.json) {
    std::cout << nlohmann::json{{"device", caps_json(caps)}, {"steps", steps}, {"rows", rows}}.dump(2) << "\n";
    return 0;
  }
  std::cout << "device: " << caps.name << ", " << (caps.compute_units ? std::to_string(caps.compute_units) : "?")
            << " compute units\nissue probe: 8 independent updates a body copy (int: shift, shift, xor, add; "
               "fp32: fma), "
            << steps << " body copies an invocation; results checked against the CPU\n\n";
  table.print(std::cout);
  return 0;
}

}  // namespace tkv::prof
