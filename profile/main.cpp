// turboprof: where decode time goes over a compressed KV cache, and how it scales with depth.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kvcache/error.hpp"
#include "profile/commands.hpp"

namespace {

// Errors print as one line (some messages list devices on lines of their own).
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    out += !out.empty() && out.back() == ':' ? " " : "; ";
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tkv::prof;
  if (const char* level = std::getenv("TKV_LOG")) spdlog::set_level(spdlog::level::from_str(level));
  CLI::App app{"turboprof: profile flash-attention decode over a compressed (turbo) KV cache on Vulkan"};
  app.require_subcommand(1);
  CommonOptions o;
  auto shape = [&](CLI::App* cmd) {
    cmd->add_option("--workload", o.workload, "llama8b | qwen7b | mha64 | wide256")->capture_default_str();
    cmd->add_option("--q-heads", o.q_heads, "query heads (with --kv-heads and --head-dim: overrides the workload)");
    cmd->add_option("--kv-heads", o.kv_heads, "KV heads");
    cmd->add_option("--head-dim", o.head_dim, "head dimension");
    cmd->add_option("--types", o.types, "types or K/V pairs: turbo3,q8_0,q8_0/turbo3 (default: all)");
    cmd->add_option("--variants", o.variants, "dequant variants: all, auto (the policy's choice) or a list")
        ->capture_default_str();
    cmd->add_option("--ctx", o.ctx, "context depths: 1k..128k (doubling) or a list 4k,32k");
    cmd->add_option("--batch", o.batch, "sequences per call (ragged lengths)")->check(CLI::Range(1, 256));
    cmd->add_option("--m", o.m, "queries per sequence")->check(CLI::Range(1, 8));
    cmd->add_option("--device", o.device, "device index or name substring");
    cmd->add_flag("--json", o.json, "machine-readable output on stdout");
  };
  auto timing = [&](CLI::App* cmd, const char* modes_default) {
    cmd->add_option("--modes", o.modes, std::string("profile modes: 0-4 or a list (1-4 are for profiling only; "
                                                    "default ") + modes_default + ")");
    cmd->add_option("--repeat", o.repeat, "timed calls per point (medians)")->check(CLI::Range(1, 10000));
  };
  auto* devices = app.add_subcommand("devices", "every Vulkan device, its capabilities and its plan");
  devices->add_flag("--json", o.json, "machine-readable output on stdout");
  auto* profile = app.add_subcommand("profile", "one workload at one or more context depths, modes 0-4");
  shape(profile);
  timing(profile, "0-4");
  profile->add_option("--dpl", o.dpl, "tuning: dims per lane, 0 (the plan's) or a list 4,8,16");
  profile->add_option("--unroll", o.unroll, "tuning: tokens per team per step, 0 (the plan's) or a list 1,2,4");
  profile->add_option("--out", o.out_dir, "directory for profile.csv and profile.json");
  auto* sweep = app.add_subcommand("sweep", "context depths x types x variants: table, CSV, JSON, SVG plot, tokens/s");
  shape(sweep);
  timing(sweep, "0");
  sweep->add_option("--layers", o.layers, "layers of a decode step (default: the workload's; custom shapes: 32)")
      ->check(CLI::Range(1, 1024));
  sweep->add_option("--out", o.out_dir, "directory for sweep.csv, sweep.json and sweep.svg");
  auto* check = app.add_subcommand("check", "accuracy per type against exact attention, and kernel exactness; "
                                            "exits 1 when a figure exceeds its bound");
  shape(check);
  check->add_option("--seed", o.seed, "seed of the synthetic K/V/Q")->capture_default_str();
  check->add_option("--out", o.out_dir, "directory for check.csv and check.json");
  auto* tune = app.add_subcommand("tune", "time every variant per turbo K type and depth; write the fastest as "
                                          "this device's dispatch policy");
  shape(tune);
  tune->add_option("--repeat", o.repeat, "timed calls per point (medians)")->check(CLI::Range(1, 10000));
  tune->add_option("--dpl", o.dpl, "also try dims per lane for the fastest variant: a list 4,8,16 (0: no)");
  tune->add_option("--unroll", o.unroll, "also try tokens per team per step: a list 1,2,4 (0: no)");
  tune->add_option("--subgroups", o.subgroups,
                   "also try the tc kernel's subgroups a workgroup where tc is the fastest: a list 4,6,8 (0: no)");
  tune->add_option("--policy", o.policy_path, "policy file to write (default: this device's, in the cache directory)");
  tune->add_flag("--dry-run", o.dry_run, "measure and print; write no policy file");
  tune->add_option("--out", o.out_dir, "directory for tune.csv and tune.json");

  auto* timeline = app.add_subcommand("timeline", "where a call's time goes: each workgroup's phases from the "
                                                  "device clock (launch, prologue, tiles, partials, merge, output)");
  shape(timeline);
  timeline->add_option("--repeat", o.repeat, "traced calls per point (medians)")->check(CLI::Range(1, 10000));
  timeline->add_flag("--fused", o.fused, "trace append-decode calls: each appends m tokens per sequence in the "
                                         "decode dispatch (its tails' phases as well)");
  timeline->add_flag("--workgroups", o.workgroups, "also write each traced call's workgroups into the JSON "
                                                   "(--json, --out): id, split, whether it held tokens, merged, was "
                                                   "a tail, and its stamps in us from the call's first start");
  timeline->add_option("--out", o.out_dir, "directory for timeline.csv and timeline.json");

  auto* issue = app.add_subcommand("issue", "issue-rate probe: integer, fp32 and MMA work a second by the loop's "
                                            "code size and warps an SM/CU (results checked against the CPU)");
  issue->add_option("--kinds", o.kinds, "a list of int, fp32, mma (8 MMAs a copy), mix (8 int updates and --mmas "
                                        "MMAs a copy), alu (shift and xor), imad (integer multiply-add); mma and "
                                        "mix need VK_NV_cooperative_matrix")
      ->capture_default_str();
  issue->add_option("--mmas", o.mmas, "MMAs a body copy of the mix kind (1-8)")->capture_default_str();
  issue->add_option("--body", o.body, "copies of 8 updates in the loop body (code size), a list")
      ->capture_default_str();
  issue->add_option("--warps", o.warps, "warps of 32 invocations an SM/CU, a list")->capture_default_str();
  issue->add_option("--steps", o.steps, "body copies an invocation (iterations = steps / body; default 64 on a "
                                        "CPU device, 16384 else)");
  issue->add_option("--repeat", o.repeat, "timed dispatches per point (medians)")->check(CLI::Range(1, 10000));
  issue->add_option("--device", o.device, "device index or name substring");
  issue->add_flag("--json", o.json, "machine-readable output on stdout");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line naming the problem, like every other error.
    std::fprintf(stderr, "turboprof: %s\n", one_line(e.what()).c_str());
    return e.get_exit_code() ? e.get_exit_code() : 2;
  }
  try {
    if (*devices) return run_devices(o);
    if (*profile) return run_profile(o);
    if (*sweep) return run_sweep(o);
    if (*check) return run_check(o);
    if (*tune) return run_tune(o);
    if (*timeline) return run_timeline(o);
    if (*issue) return run_issue(o);
  } catch (const tkv::Error& e) {
    std::fprintf(stderr, "turboprof: %s\n", one_line(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "turboprof: unexpected error: %s\n", one_line(e.what()).c_str());
    return 3;
  }
  return 0;
}
