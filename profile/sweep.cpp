// turboprof sweep: decode time against context depth, per type and variant, as a table, CSV,
// JSON and an SVG plot, plus the decode-step view (all layers of the workload in one command
// buffer) in tokens/s.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

#include "kvcache/vk/context.hpp"
#include "profile/commands.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/plot_svg.hpp"
#include "profile/table.hpp"
#include "profile/workloads.hpp"

namespace tkv::prof {

using nlohmann::json;

int run_sweep(const CommonOptions& o) {
  // Every option is checked before the device is touched or anything measured.
  const Shape shape = resolve_shape(o);
  const auto pairs = parse_type_pairs(o.types);
  const auto variants = parse_variants(o.variants);
  const auto modes = parse_modes(o.modes.empty() ? "0" : o.modes);
  OutputFiles files(o.out_dir);
  if (!o.ctx.empty()) parse_depths(o.ctx);

  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  auto depths = resolve_depths(o, caps, "1k,2k", "1k..128k");
  // A sweep is read along the depth axis: ascending, each depth once.
  std::sort(depths.begin(), depths.end());
  depths.erase(std::unique(depths.begin(), depths.end()), depths.end());
  for (uint32_t depth : depths)
    for (const auto& p : pairs) check_point(caps, shape, p, depth, o.batch, o.m, variants);

  progress("measuring the read bandwidth");
  const ReadBandwidth peak = measure_read_bandwidth(*ctx, o.repeat);
  const uint64_t big = peak.bytes;
  const double peak_gbs = peak.gb_per_s;

  // A step is `layers` calls long, so fewer repeats give as steady a median.
  const uint32_t step_repeat = std::clamp(o.repeat / 4, std::min(o.repeat, 3u), o.repeat);
  const bool label_variant = variants.size() > 1, label_mode = modes.size() > 1;
  Table table({"type", "variant", "mode", "ctx", "us/call", "min", "max", "GB/s", "% read BW", "floor us", "x floor",
               "step us", "tok/s", "splits"});
  json rows = json::array();
  std::vector<PlotSeries> series;
  std::map<std::string, size_t> series_index;
  const size_t points = depths.size() * pairs.size();
  size_t point = 0;
  for (uint32_t depth : depths)
    for (const auto& p : pairs) {
      ++point;
      const std::string at = point_label(point, points, p, depth);
      progress(at + ": filling the cache");
      DecodeSetup setup{p.k, p.v, shape.q_heads, shape.kv_heads, shape.head_dim, o.batch, depth, o.m, 0};
      DecodeBench bench(ctx, setup);
      const uint64_t bytes = bench.kv_bytes_per_call();
      progress(at + ": read floor");
      const Timing floor = measure_read(*ctx, bytes, o.repeat);
      const bool turbo = variant_applies(p.k) || variant_applies(p.v);
      for (Variant variant : point_variants(ctx->caps(), shape, p, variants, o.m))
        for (ProfileMode mode : modes) {
          if (!mode_supported(p.k, mode) || !mode_supported(p.v, mode)) continue;
          DecodeOptions options;
          options.variant = variant;
          options.profile_mode = mode;
          const auto plan = bench.plan(options);
          const std::string vname = shown_variant(p, plan.variant);
          progress(at + ": " + vname + " mode " + std::string(mode_name(mode)));
          const Timing t = bench.time(o.repeat, options);
          // The step view is what a user's tokens/s sees; modes 1-4 compute wrong outputs, so
          // only mode 0 gets one.
          Timing step;
          if (mode == ProfileMode::full) {
            progress(at + ": " + vname + " decode step of " + std::to_string(shape.layers) + " layers");
            step = bench.time_step(shape.layers, step_repeat, options);
          }
          const double gbs = double(bytes) / (t.median_us * 1e3);
          const double tok_s = step.median_us > 0 ? o.batch / (step.median_us * 1e-6) : 0.0;
          table.add({p.label(), vname, std::string(mode_name(mode)), depth_label(depth), fixed(t.median_us, 1),
                     fixed(t.min_us, 1), fixed(t.max_us, 1), fixed(gbs, 2), fixed(100.0 * gbs / peak_gbs, 1),
                     fixed(floor.median_us, 1), fixed(t.median_us / floor.median_us, 2),
                     step.median_us > 0 ? fixed(step.median_us, 1) : "-", tok_s > 0 ? fixed(tok_s, 1) : "-",
                     std::to_string(plan.splits)});
          std::string label = p.label();
          if (label_variant && turbo) label.append(" ").append(variant_name(variant));
          if (label_mode) label.append(" mode ").append(mode_name(mode));
          rows.push_back({{"type", p.label()},
                          {"k_type", type_name(p.k)},
                          {"v_type", type_name(p.v)},
                          {"series", label},
                          {"variant", vname},
                          {"variant_requested", variant_name(variant)},
                          {"mode", uint32_t(mode)},
                          {"ctx", depth},
                          {"step_layers", shape.layers},
                          {"step_us", step.median_us > 0 ? json(step.median_us) : json(nullptr)},
                          {"tokens_per_s", tok_s > 0 ? json(tok_s) : json(nullptr)},
                          {"splits", plan.splits},
                          {"plan", plan.describe()}});
          rows.back().update(timing_json(t, bytes, peak_gbs, floor));
          auto [it, fresh] = series_index.emplace(label, series.size());
          if (fresh) series.push_back({label, {}, {}, {}, {}, {}});
          PlotSeries& s = series[it->second];
          s.ctx.push_back(depth);
          s.us.push_back(t.median_us);
          s.floor_us.push_back(floor.median_us);
          s.gb_per_s.push_back(gbs);
          s.tokens_per_s.push_back(tok_s);
        }
    }
  progress_done();

  json doc = run_json(caps, shape, o);
  doc.update(json{{"repeat", o.repeat},
              {"step_repeat", step_repeat},
              {"read_bandwidth_gb_per_s", peak_gbs},
              {"read_bandwidth_bytes", big},
              {"rows", rows}});
  const std::string title = "turboprof sweep: " + shape.name + " (" + std::to_string(shape.q_heads) + "q/" +
                            std::to_string(shape.kv_heads) + "kv x " + std::to_string(shape.head_dim) + "), batch " +
                            std::to_string(o.batch) + ", m " + std::to_string(o.m) + " on " + caps.name;
  files.add("sweep.svg", sweep_svg(title, series, peak_gbs));
  files.finish("sweep", table, doc, o.json, measure_header(caps, shape, o, peak_gbs, big), [&] {
    std::cout << "\nGB/s over the stored (compressed) K/V bytes of one call (one layer); floor = streaming read of\n"
                 "the same bytes; step = "
              << shape.layers
              << " calls (one per layer) recorded in one command buffer; tok/s = batch / step time.\n";
    if (!o.out_dir.empty()) std::cout << "files: sweep.csv, sweep.json, sweep.svg in " << o.out_dir << "\n";
  });
  return 0;
}

}  // namespace tkv::prof
