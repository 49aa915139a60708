// turboprof: where decode time goes over a compressed KV cache, and how it scales with depth.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>

#include "kvcache/error.hpp"
#include "profile/commands.hpp"

int main(int argc, char** argv) {
  using namespace tkv::prof;
  if (const char* level = std::getenv("TKV_LOG")) spdlog::set_level(spdlog::level::from_str(level));
  CLI::App app{"turboprof: profile flash-attention decode over a compressed (turbo) KV cache on Vulkan"};
  app.require_subcommand(1);
  CommonOptions o;
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("--workload", o.workload, "llama8b | qwen7b | mha64 | wide256")->capture_default_str();
    cmd->add_option("--q-heads", o.q_heads, "query heads (with --kv-heads and --head-dim: overrides the workload)");
    cmd->add_option("--kv-heads", o.kv_heads, "KV heads");
    cmd->add_option("--head-dim", o.head_dim, "head dimension");
    cmd->add_option("--types", o.types, "types or K/V pairs: turbo3,q8_0,q8_0/turbo3 (default: all)");
    cmd->add_option("--variants", o.variants, "dequant variants: all, auto (the policy's choice) or a list")
        ->capture_default_str();
    cmd->add_option("--modes", o.modes, "profile modes: 0-4 or a list (1-4 are for profiling only)")
        ->capture_default_str();
    cmd->add_option("--dpl", o.dpl, "tuning: dims per lane, 0 (the plan's) or a list 4,8,16");
    cmd->add_option("--unroll", o.unroll, "tuning: tokens per team per step, 0 (the plan's) or a list 1,2,4");
    cmd->add_option("--ctx", o.ctx, "context depths: 1k..128k (doubling) or a list 4k,32k");
    cmd->add_option("--batch", o.batch, "sequences per call (ragged lengths)")->check(CLI::Range(1, 256));
    cmd->add_option("--m", o.m, "queries per sequence")->check(CLI::Range(1, 8));
    cmd->add_option("--device", o.device, "device index or name substring");
    cmd->add_option("--repeat", o.repeat, "timed calls per point")->check(CLI::Range(1, 10000));
    cmd->add_flag("--json", o.json, "machine-readable output on stdout");
    cmd->add_option("--out", o.out_dir, "directory for CSV / JSON files");
  };
  auto* devices = app.add_subcommand("devices", "every Vulkan device, its capabilities and its plan");
  devices->add_flag("--json", o.json, "machine-readable output on stdout");
  auto* profile = app.add_subcommand("profile", "one workload at one or more context depths");
  common(profile);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*devices) return run_devices(o);
    if (*profile) return run_profile(o);
  } catch (const tkv::Error& e) {
    std::fprintf(stderr, "turboprof: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "turboprof: unexpected error: %s\n", e.what());
    return 3;
  }
  return 0;
}
