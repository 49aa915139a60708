#include "profile/commands.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "attention/plan.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "kvcache/vk/context.hpp"
#include "profile/common.hpp"
#include "profile/measure.hpp"
#include "profile/table.hpp"
#include "profile/workloads.hpp"

namespace tkv::prof {

using nlohmann::json;

std::string TypePair::label() const {
  return k == v ? std::string(type_name(k)) : std::string(type_name(k)) + "/" + std::string(type_name(v));
}

std::vector<TypePair> parse_type_pairs(const std::string& text) {
  std::vector<TypePair> pairs;
  if (text.empty() || text == "all") {
    for (KvType t : kAllTypes) pairs.push_back({t, t});
    return pairs;
  }
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto slash = item.find('/');
    if (item == "all") {
      for (KvType t : kAllTypes) pairs.push_back({t, t});
    } else if (slash == std::string::npos) {
      const KvType t = parse_type(item);
      pairs.push_back({t, t});
    } else {
      pairs.push_back({parse_type(item.substr(0, slash)), parse_type(item.substr(slash + 1))});
    }
  }
  if (pairs.empty()) fail(ErrorCode::invalid_argument, "--types lists no type");
  return pairs;
}

std::vector<uint32_t> parse_uint_list(const std::string& text, const char* option) {
  std::vector<uint32_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const unsigned long v = std::stoul(item, &used);
      if (used != item.size() || v > 1024) throw std::invalid_argument(item);
      out.push_back(uint32_t(v));
    } catch (const std::exception&) {
      fail(ErrorCode::invalid_argument, std::string(option) + ": '" + item + "' is not a small number");
    }
  }
  if (out.empty()) fail(ErrorCode::invalid_argument, std::string(option) + " lists nothing");
  return out;
}

std::vector<Variant> parse_variants(const std::string& text) {
  if (text == "all") return {std::begin(kAllVariants), std::end(kAllVariants)};
  std::vector<Variant> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(parse_variant(item));
  if (out.empty()) fail(ErrorCode::invalid_argument, "--variants lists no variant");
  return out;
}

std::vector<ProfileMode> parse_modes(const std::string& text) {
  std::vector<ProfileMode> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (auto dash = item.find('-'); dash != std::string::npos && dash > 0) {
      const auto lo = parse_mode(item.substr(0, dash)), hi = parse_mode(item.substr(dash + 1));
      if (lo > hi) fail(ErrorCode::invalid_argument, "mode range '" + item + "' runs backwards");
      for (uint32_t m = uint32_t(lo); m <= uint32_t(hi); ++m) out.push_back(ProfileMode(m));
    } else {
      out.push_back(parse_mode(item));
    }
  }
  if (out.empty()) fail(ErrorCode::invalid_argument, "--modes lists no mode");
  return out;
}

int run_devices(const CommonOptions& o) {
  auto instance = vk::Instance::create();
  const auto devices = instance->devices();
  const uint32_t best = vk::select_device(devices, o.device);
  DecodeShape shape;  // llama8b at 32K, batch 1: the plan each device would get
  shape.k_type = shape.v_type = KvType::turbo3;
  shape.max_context = 32768;
  if (o.json) {
    json all = json::array();
    for (const auto& d : devices) {
      json j = caps_json(d);
      j["selected"] = d.index == best;
      if (d.unsupported_reason().empty()) j["plan_llama8b_32k"] = plan_decode(d, shape).describe();
      all.push_back(j);
    }
    std::cout << all.dump(2) << "\n";
    return 0;
  }
  for (const auto& d : devices) {
    std::cout << (d.index == best ? "* " : "  ") << d.index << ": " << d.name << " (" << vendor_name(d.vendor) << ", "
              << device_class_name(d.device_class) << ")\n";
    std::cout << "    driver " << d.driver_name << " " << d.driver_info << ", Vulkan " << api_version_string(d.api_version)
              << "\n    subgroup " << d.subgroup_size << " (" << d.min_subgroup_size << ".." << d.max_subgroup_size
              << "), compute units " << (d.compute_units ? std::to_string(d.compute_units) : "unknown")
              << ", shared memory " << d.max_shared_memory / 1024 << " KiB, max buffer "
              << mib(d.max_storage_buffer_range) << ", device memory " << mib(d.device_local_bytes()) << "\n";
    std::cout << "    fp16 " << d.fp16_arithmetic << ", int8 " << d.int8_arithmetic << ", 16-bit storage "
              << d.storage_16bit << ", integer dot " << d.integer_dot_product << ", cooperative matrix "
              << d.cooperative_matrix << "\n";
    if (auto why = d.unsupported_reason(); !why.empty())
      std::cout << "    not usable: " << why << "\n";
    else
      std::cout << "    plan (llama8b, turbo3, 32K, batch 1): " << plan_decode(d, shape).describe() << "\n";
  }
  return 0;
}

int run_profile(const CommonOptions& o) {
  auto ctx = open_device(o);
  const auto& caps = ctx->caps();
  const Shape shape = resolve_shape(o);
  const auto depths = resolve_depths(o, caps, "1k,4k", "4k,32k,128k");
  const auto pairs = parse_type_pairs(o.types);
  const auto variants = parse_variants(o.variants);
  const auto modes = parse_modes(o.modes.empty() ? "0-4" : o.modes);
  const auto dpls = parse_uint_list(o.dpl, "--dpl");
  const auto unrolls = parse_uint_list(o.unroll, "--unroll");
  OutputFiles files(o.out_dir);

  // Check every point fits before measuring anything: a bad depth fails fast, with no output.
  for (uint32_t depth : depths)
    for (const auto& p : pairs) check_point(caps, shape, p, depth, o.batch, o.m, variants);

  progress("measuring the read bandwidth");
  const ReadBandwidth peak = measure_read_bandwidth(*ctx, o.repeat);
  const uint64_t big = peak.bytes;
  const double peak_gbs = peak.gb_per_s;

  Table table({"type", "variant", "mode", "ctx", "us/call", "min", "max", "GB/s", "% read BW", "% of mode 1",
               "x floor", "splits", "dpl", "unroll", "isolates"});
  json rows = json::array();
  for (uint32_t depth : depths)
    for (const auto& p : pairs) {
      progress("filling a " + p.label() + " cache to " + depth_label(depth));
      DecodeSetup setup{p.k, p.v, shape.q_heads, shape.kv_heads, shape.head_dim, o.batch, depth, o.m, 0};
      DecodeBench bench(ctx, setup);
      const uint64_t bytes = bench.kv_bytes_per_call();
      const Timing floor = measure_read(*ctx, bytes, o.repeat);
      for (uint32_t dpl : dpls)
      for (uint32_t unroll : unrolls)
      for (Variant variant : point_variants(caps, shape, p, variants, o.m)) {
        double mode1_us = 0;
        std::vector<std::pair<ProfileMode, Timing>> timed;
        for (ProfileMode mode : modes) {
          if (!mode_supported(p.k, mode) || !mode_supported(p.v, mode)) continue;
          progress("profiling " + p.label() + " " + std::string(variant_name(variant)) + " mode " +
                   std::string(mode_name(mode)) + " at " + depth_label(depth));
          DecodeOptions options;
          options.variant = variant;
          options.profile_mode = mode;
          options.dims_per_lane = dpl;
          options.unroll = unroll;
          timed.emplace_back(mode, bench.time(o.repeat, options));
          if (mode == ProfileMode::zero) mode1_us = timed.back().second.median_us;
        }
        for (const auto& [mode, t] : timed) {
          DecodeOptions options;
          options.variant = variant;
          options.profile_mode = mode;
          options.dims_per_lane = dpl;
          options.unroll = unroll;
          const auto plan = bench.plan(options);
          const std::string vname = shown_variant(p, plan.variant);
          const double gbs = double(bytes) / (t.median_us * 1e3);
          const double of_mode1 = mode1_us > 0 ? 100.0 * mode1_us / t.median_us : 0.0;
          table.add({p.label(), vname, std::string(mode_name(mode)), depth_label(depth), fixed(t.median_us, 1),
                     fixed(t.min_us, 1), fixed(t.max_us, 1), fixed(gbs, 1), fixed(100.0 * gbs / peak_gbs, 1),
                     mode1_us > 0 ? fixed(of_mode1, 1) : "-", fixed(t.median_us / floor.median_us, 2),
                     std::to_string(plan.splits), std::to_string(plan.dims_per_lane), std::to_string(plan.unroll),
                     std::string(mode_isolates(mode))});
          rows.push_back({{"k_type", type_name(p.k)},
                          {"v_type", type_name(p.v)},
                          {"variant", vname},
                          {"mode", uint32_t(mode)},
                          {"meaningful", mode == ProfileMode::full},
                          {"ctx", depth},
                          {"pct_of_mode1", mode1_us > 0 ? json(of_mode1) : json(nullptr)},
                          {"plan", plan.describe()}});
          rows.back().update(timing_json(t, bytes, peak_gbs, floor));
        }
      }
    }
  progress_done();

  json doc = run_json(caps, shape, o);
  doc.update(json{{"repeat", o.repeat},
              {"read_bandwidth_gb_per_s", peak_gbs},
              {"read_bandwidth_bytes", big},
              {"rows", rows}});
  files.finish("profile", table, doc, o.json, measure_header(caps, shape, o, peak_gbs, big), [&] {
    std::cout << "\nGB/s over the stored (compressed) K/V bytes; x floor = time / streaming read of the same bytes;\n"
                 "% of mode 1 = mode 1's time / this time. Modes 1-4 give wrong outputs on purpose: for profiling only.\n";
  });
  return 0;
}

}  // namespace tkv::prof
