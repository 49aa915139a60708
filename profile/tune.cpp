// turboprof tune: times every dequant variant (and, when asked, the tuning knobs: the scalar
// kernels' dims per lane and unroll, the tc kernel's subgroups a workgroup) per turbo K type and
// context depth on this device, and writes the fastest as a dispatch-policy file that the decoder
// loads (attention/policy.hpp). A variant replaces the built-in default only when it is
// clearly faster, so that timing noise does not flip choices.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

#include "attention/policy.hpp"
#include "kvcache/error.hpp"
#include "kvcache/vk/context.hpp"
#include "profile/commands.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/table.hpp"
#include "profile/workloads.hpp"

namespace tkv::prof {
namespace {

using nlohmann::json;

// A choice other than the default must be this much faster (median against median); repeated
// runs of the same point on an H200 differed by up to ~2%.
constexpr double kMinGain = 1.03;

struct Choice {
  Variant variant = Variant::mag4;
  uint32_t dpl = 0, unroll = 0, subgroups = 0;
  double us = 0;
  bool operator==(const Choice& o) const {
    return variant == o.variant && dpl == o.dpl && unroll == o.unroll && subgroups == o.subgroups;
  }
  bool knobs() const { return dpl || unroll || subgroups; }
};

struct Decision {
  uint32_t depth;
  Choice chosen, baseline;
};

// Context boundary between two measured depths: their geometric mean, on a page (64 tokens).
uint32_t boundary(uint32_t a, uint32_t b) {
  const uint64_t mid = uint64_t(std::llround(std::sqrt(double(a) * double(b)) / 64.0)) * 64;
  return uint32_t(std::clamp<uint64_t>(mid, uint64_t(a) + 1, b));
}

std::string choice_text(const Choice& c) {
  std::string s(variant_name(c.variant));
  if (c.dpl) s += " dpl " + std::to_string(c.dpl);
  if (c.unroll) s += " unroll " + std::to_string(c.unroll);
  if (c.subgroups) s += " subgroups " + std::to_string(c.subgroups);
  return s;
}

}  // namespace

int run_tune(const CommonOptions& o) {
  const Shape shape = resolve_shape(o);
  const auto pairs = parse_type_pairs(o.types.empty() ? "turbo2,turbo3,turbo4" : o.types);
  for (const auto& p : pairs)
    if (!variant_applies(p.k))
      fail(ErrorCode::invalid_argument, "tune: K type " + std::string(type_name(p.k)) +
                                            " has one path and no variants; tune measures turbo K types");
  // "auto" (the common default) would measure the policy against itself: tune compares them all.
  const auto variants = parse_variants(o.variants == "auto" ? "all" : o.variants);
  const auto dpls = parse_uint_list(o.dpl, "--dpl");
  const auto unrolls = parse_uint_list(o.unroll, "--unroll");
  const auto subgroups = parse_uint_list(o.subgroups, "--subgroups");
  for (uint32_t n : subgroups)
    if (!subgroups_valid(n))
      fail(ErrorCode::invalid_argument, "tune: --subgroups " + std::to_string(n) + " is not one of 0, 4, 6, 8");
  OutputFiles files(o.out_dir);
  if (!o.ctx.empty()) parse_depths(o.ctx);

  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  auto depths = resolve_depths(o, caps, "256,1k", "1k..128k");
  std::sort(depths.begin(), depths.end());
  depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
  const std::string policy_path = o.policy_path.empty() ? DispatchPolicy::default_path(caps) : o.policy_path;
  if (!o.dry_run && policy_path.empty())
    fail(ErrorCode::invalid_argument, "tune: no cache directory for the policy file (set TKV_CACHE_DIR or pass "
                                      "--policy PATH, or --dry-run)");
  for (uint32_t depth : depths)
    for (const auto& p : pairs) check_point(caps, shape, p, depth, o.batch, o.m, {Variant::automatic});

  const DispatchPolicy defaults = DispatchPolicy::defaults(caps);
  Table table({"K/V", "ctx", "variant", "dpl", "unroll", "subgroups", "us/call", "x fastest", "role"});
  json rows = json::array();
  std::map<size_t, std::vector<Decision>> decisions;  // per pair
  const size_t points = depths.size() * pairs.size();
  size_t point = 0;
  for (uint32_t depth : depths)
    for (size_t pi = 0; pi < pairs.size(); ++pi) {
      const auto& p = pairs[pi];
      ++point;
      const std::string at = point_label(point, points, p, depth);
      progress(at + ": filling the cache");
      DecodeSetup setup{p.k, p.v, shape.q_heads, shape.kv_heads, shape.head_dim, o.batch, depth, o.m, 0};
      DecodeBench bench(ctx, setup);
      DecodeShape ds;
      ds.k_type = p.k;
      ds.v_type = p.v;
      ds.head_dim = shape.head_dim;
      ds.q_heads = shape.q_heads;
      ds.kv_heads = shape.kv_heads;
      ds.batch = o.batch;
      ds.m = o.m;
      ds.max_context = depth;
      ds.page_size = bench.cache().config().page_size;
      const Variant default_variant = defaults.choose(ds).request.variant;

      // Every variant with the plan's knobs, then the knob grid for the fastest.
      std::vector<Choice> timed;
      auto try_time = [&](Choice c) {
        DecodeOptions options;
        options.variant = c.variant;
        options.dims_per_lane = c.dpl;
        options.unroll = c.unroll;
        options.subgroups = c.subgroups;
        try {
          bench.plan(options);
        } catch (const Error&) {
          return;  // this device or shape cannot run it: not a candidate
        }
        progress(at + ": " + choice_text(c));
        c.us = bench.time(o.repeat, options).median_us;
        timed.push_back(c);
      };
      for (Variant v : variants) try_time({v, 0, 0, 0, 0});
      if (timed.empty())
        fail(ErrorCode::invalid_argument, "tune: no variant asked for can run " + p.label() + " at " +
                                              depth_label(depth) + " on " + caps.name);
      auto fastest_of = [&](auto&& keep) {
        Choice best;
        for (const auto& c : timed)
          if (keep(c) && (best.us == 0 || c.us < best.us)) best = c;
        return best;
      };
      // The default variant stays unless another is clearly faster (or it could not run); then
      // knobs other than the plan's only when they are clearly faster again.
      Choice baseline{default_variant, 0, 0, 0, 0};
      for (const auto& c : timed)
        if (c == baseline) baseline = c;
      Choice chosen = fastest_of([](const Choice&) { return true; });
      if (baseline.us > 0 && chosen.us * kMinGain > baseline.us) chosen = baseline;
      if (chosen.variant == Variant::tc) {  // (subgroups: the tc kernel's; dims per lane and unroll: the scalar ones')
        for (uint32_t n : subgroups)
          if (n) try_time({chosen.variant, 0, 0, n, 0});
      } else {
        for (uint32_t dpl : dpls)
          for (uint32_t unroll : unrolls)
            if (dpl || unroll) try_time({chosen.variant, dpl, unroll, 0, 0});
      }
      const Choice knobs = fastest_of([&](const Choice& c) { return c.variant == chosen.variant && c.knobs(); });
      if (knobs.us > 0 && knobs.us * kMinGain <= chosen.us) chosen = knobs;
      const Choice best = fastest_of([](const Choice&) { return true; });
      decisions[pi].push_back({depth, chosen, baseline});
      for (const auto& c : timed) {
        std::string role = c == chosen ? "chosen" : "";
        if (c == baseline) role += role.empty() ? "default" : " (default)";
        table.add({p.label(), depth_label(depth), std::string(variant_name(c.variant)), std::to_string(c.dpl),
                   std::to_string(c.unroll), std::to_string(c.subgroups), fixed(c.us, 1), fixed(c.us / best.us, 2),
                   role});
        rows.push_back({{"type", p.label()},
                        {"k_type", type_name(p.k)},
                        {"v_type", type_name(p.v)},
                        {"ctx", depth},
                        {"variant", variant_name(c.variant)},
                        {"dims_per_lane", c.dpl},
                        {"unroll", c.unroll},
                        {"subgroups", c.subgroups},
                        {"us_median", c.us},
                        {"x_fastest", c.us / best.us},
                        {"chosen", c == chosen},
                        {"default", c == baseline}});
      }
    }
  progress_done();

  // Rules: per K type, runs of depths with the same choice, split at the geometric mean of the
  // neighbouring depths. A pair's rules cover its K type (policy rules key on K).
  std::vector<PolicyRule> rules;
  json rules_json = json::array();
  for (size_t pi = 0; pi < pairs.size(); ++pi) {
    const auto& ds = decisions[pi];
    bool seen = false;
    for (size_t j = 0; j < pi; ++j) seen = seen || pairs[j].k == pairs[pi].k;
    if (seen) continue;  // the first pair with this K type decides (rules cannot key on V)
    for (size_t a = 0; a < ds.size();) {
      size_t b = a;
      while (b + 1 < ds.size() && ds[b + 1].chosen == ds[a].chosen) ++b;
      PolicyRule r;
      r.k_type = pairs[pi].k;
      r.min_context = a == 0 ? 0 : boundary(ds[a - 1].depth, ds[a].depth);
      r.max_context = b + 1 == ds.size() ? UINT32_MAX : boundary(ds[b].depth, ds[b + 1].depth);
      r.variant = ds[a].chosen.variant;
      r.dims_per_lane = ds[a].chosen.dpl;
      r.unroll = ds[a].chosen.unroll;
      r.subgroups = ds[a].chosen.subgroups;
      double log_gain = 0;
      bool all_default = true;
      for (size_t i = a; i <= b; ++i) {
        if (ds[i].baseline.us > 0) log_gain += std::log(ds[i].baseline.us / ds[i].chosen.us);
        all_default = all_default && ds[i].chosen == ds[i].baseline;
      }
      std::ostringstream note;
      note << "turboprof tune, " << shape.name << " batch " << o.batch << ", " << depth_label(ds[a].depth)
           << (a == b ? "" : ".." + depth_label(ds[b].depth)) << ": ";
      if (all_default)
        note << "the default, within " << fixed((kMinGain - 1) * 100, 0) << "% of the fastest";
      else
        note << fixed(std::exp(log_gain / double(b - a + 1)), 2) << "x over the default "
             << variant_name(ds[a].baseline.variant);
      r.note = note.str();
      rules.push_back(r);
      rules_json.push_back({{"k_type", type_name(pairs[pi].k)},
                            {"min_context", r.min_context},
                            {"max_context", r.max_context == UINT32_MAX ? json(nullptr) : json(r.max_context)},
                            {"variant", variant_name(r.variant)},
                            {"dims_per_lane", r.dims_per_lane},
                            {"unroll", r.unroll},
                            {"subgroups", r.subgroups},
                            {"note", r.note}});
      a = b + 1;
    }
  }
  DispatchPolicy policy = DispatchPolicy::defaults(caps);
  policy.set_rules(rules);

  json doc = run_json(caps, shape, o);
  doc.update(json{{"repeat", o.repeat},
              {"min_gain", kMinGain},
              {"rows", rows},
              {"rules", rules_json},
              {"policy_path", o.dry_run ? json(nullptr) : json(policy_path)}});
  // The policy file first (the product), then --out.
  if (!o.dry_run) policy.save(policy_path, caps);
  std::ostringstream csv;
  table.write_csv(csv);
  files.add("tune.csv", csv.str());
  files.add("tune.json", doc.dump(2) + "\n");
  files.commit();

  if (o.json) {
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  std::cout << run_header(caps, shape, o) << "\n\n";
  table.print(std::cout);
  std::cout << "\nrules (a choice replaces the default only when " << fixed((kMinGain - 1) * 100, 0)
            << "% faster):\n";
  Table rt({"K", "context", "variant", "dpl", "unroll", "subgroups", "note"});
  for (const auto& r : rules) {
    std::string range = "[";  // appended: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string
    range += std::to_string(r.min_context);
    range += ", ";
    range += r.max_context == UINT32_MAX ? std::string("inf") : std::to_string(r.max_context);
    range += ')';
    rt.add({std::string(type_name(*r.k_type)), range, std::string(variant_name(r.variant)),
            std::to_string(r.dims_per_lane), std::to_string(r.unroll), std::to_string(r.subgroups), r.note});
  }
  rt.print(std::cout);
  std::cout << (o.dry_run ? "dry run: no policy file written\n" : "policy written to " + policy_path + "\n");
  return 0;
}

}  // namespace tkv::prof
