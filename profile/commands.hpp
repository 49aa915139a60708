// turboprof's subcommands, each a function of parsed options; main.cpp only parses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attention/variants.hpp"
#include "kvcache/types.hpp"

namespace tkv::prof {

struct CommonOptions {
  std::string workload = "llama8b";
  uint32_t q_heads = 0, kv_heads = 0, head_dim = 0;  // explicit shape overrides the workload
  std::string types;       // "turbo3,q8_0/turbo3"; empty: every type
  std::string variants = "auto";  // "all", "auto" (the policy's choice) or a list
  std::string modes;              // "0-4", "0" or a list; empty: the subcommand's default
  std::string dpl = "0";          // dims per lane (tuning): "0" (plan) or a list "4,8,16"
  std::string unroll = "0";       // tokens per team per step (tuning): "0" or a list
  std::string subgroups = "0";    // tune: the tc kernel's subgroups a workgroup: "0" or a list "4,6,8"
  std::string ctx;         // depths; empty: a default per device class
  uint32_t batch = 1;
  uint32_t m = 1;
  std::string device;
  uint32_t repeat = 20;
  uint32_t layers = 0;     // decode-step view: layers per step; 0: the workload's (custom shape: 32)
  uint32_t seed = 1;       // check: synthetic K/V/Q
  std::string policy_path; // tune: where to write the policy; empty: DispatchPolicy::default_path
  bool dry_run = false;    // tune: measure and print, write no policy file
  bool fused = false;      // timeline: trace append-decode calls (a new token per sequence, then attention)
  bool workgroups = false; // timeline: every traced call's workgroups in the JSON (ids, flags, stamps)
  std::string kinds = "int,fp32";  // issue: the probe's kinds (int, fp32, mma, mix, alu, imad)
  uint32_t mmas = 2;                // issue: MMAs a body copy of the mix kind
  std::string body = "1,16,64,256"; // issue: body copies of the probe's loop (its code size)
  std::string warps = "16";         // issue: warps of 32 an SM/CU
  uint32_t steps = 0;               // issue: body copies an invocation; 0: 64 on a CPU, 16384 else
  bool json = false;
  std::string out_dir;
};

struct TypePair {
  KvType k, v;
  std::string label() const;
};
std::vector<TypePair> parse_type_pairs(const std::string& text);
std::vector<Variant> parse_variants(const std::string& text);  // "all", "auto", "lut8,mag4"
std::vector<ProfileMode> parse_modes(const std::string& text);   // "0-4", "0,1,3"
std::vector<uint32_t> parse_uint_list(const std::string& text, const char* option);

int run_devices(const CommonOptions& o);
int run_profile(const CommonOptions& o);
int run_sweep(const CommonOptions& o);
// Exit status 1 when a figure exceeds its bound.
int run_check(const CommonOptions& o);
int run_tune(const CommonOptions& o);
// Where a call's time goes: the phase stamps of its workgroups (profile/timeline.hpp).
int run_timeline(const CommonOptions& o);
// The issue-rate probe: integer, fp32 and MMA rates by loop code size and warps a unit.
int run_issue(const CommonOptions& o);

}  // namespace tkv::prof
