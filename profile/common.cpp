#include "profile/common.hpp"

#include <sstream>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "attention/plan.hpp"
#include "kvcache/error.hpp"
#include "kvcache/kv_cache.hpp"
#include "profile/measure.hpp"
#include "profile/table.hpp"
#include "profile/workloads.hpp"

namespace tkv::prof {

using nlohmann::json;

Shape resolve_shape(const CommonOptions& o) {
  if (o.q_heads || o.kv_heads || o.head_dim) {
    if (!o.q_heads || !o.kv_heads || !o.head_dim)
      fail(ErrorCode::invalid_argument, "--q-heads, --kv-heads and --head-dim go together");
    if (o.q_heads % o.kv_heads)
      fail(ErrorCode::invalid_argument, "--q-heads " + std::to_string(o.q_heads) + " is not a multiple of --kv-heads " +
                                            std::to_string(o.kv_heads));
    check_head_dim(o.head_dim);
    // A custom shape has no model behind it: 32 layers (llama8b's) unless --layers says.
    return {"custom", o.q_heads, o.kv_heads, o.head_dim, o.layers ? o.layers : 32};
  }
  const auto& w = find_workload(o.workload);
  return {w.name, w.q_heads, w.kv_heads, w.head_dim, o.layers ? o.layers : w.layers};
}

json shape_json(const Shape& s) {
  return {{"name", s.name}, {"q_heads", s.q_heads}, {"kv_heads", s.kv_heads}, {"head_dim", s.head_dim},
          {"layers", s.layers}};
}

std::vector<uint32_t> resolve_depths(const CommonOptions& o, const DeviceCaps& caps, const char* cpu_default,
                                     const char* gpu_default) {
  if (!o.ctx.empty()) return parse_depths(o.ctx);
  return parse_depths(caps.device_class == DeviceClass::cpu ? cpu_default : gpu_default);
}

namespace {

// The decode shape of a measurement point, as the planner sees it.
DecodeShape point_shape(const Shape& shape, const TypePair& pair, uint32_t batch, uint32_t m, uint32_t depth,
                        uint32_t page_size) {
  DecodeShape ds;
  ds.k_type = pair.k;
  ds.v_type = pair.v;
  ds.head_dim = shape.head_dim;
  ds.q_heads = shape.q_heads;
  ds.kv_heads = shape.kv_heads;
  ds.batch = batch;
  ds.m = m;
  ds.max_context = depth;
  ds.page_size = page_size;
  return ds;
}

}  // namespace

void check_point(const DeviceCaps& caps, const Shape& shape, const TypePair& pair, uint32_t depth, uint32_t batch,
                 uint32_t m, const std::vector<Variant>& variants) {
  const std::string where = pair.label() + " at depth " + depth_label(depth) + " (batch " + std::to_string(batch) +
                            ", " + shape.name + ") on " + caps.name + ": ";
  try {
    if (m > depth) fail(ErrorCode::invalid_argument, "--m " + std::to_string(m) + " exceeds the depth");
    DecodeSetup setup{pair.k, pair.v, shape.q_heads, shape.kv_heads, shape.head_dim, batch, depth, m, 0};
    const CacheConfig cfg = DecodeBench::cache_config(setup);
    KvCache::validate(caps, cfg);
    // The read floor streams as many bytes as one call reads, in at least one 256 MiB rotation.
    uint64_t tokens = 0;
    for (uint32_t l : ragged_lengths(batch, depth, m)) tokens += l;
    const uint64_t call_bytes =
        tokens * shape.kv_heads *
        (RowLayout::make(pair.k, shape.head_dim).device_row_bytes() + RowLayout::make(pair.v, shape.head_dim).device_row_bytes());
    const uint64_t pages = (cfg.capacity_tokens + cfg.page_size - 1) / cfg.page_size;
    const uint64_t cache_bytes = cfg.layers * pages * cfg.page_size * cfg.kv_heads *
                                 (RowLayout::make(pair.k, shape.head_dim).device_row_bytes() +
                                  RowLayout::make(pair.v, shape.head_dim).device_row_bytes());
    const uint64_t need = cache_bytes + std::max<uint64_t>(call_bytes, 256ull << 20);
    if (const uint64_t have = caps.device_local_bytes(); have && need > have)
      fail(ErrorCode::capacity, "needs about " + mib(need) + " of device memory (cache and read floor), the device has " +
                                    mib(have));
    const DecodeShape ds = point_shape(shape, pair, batch, m, depth, cfg.page_size);
    for (Variant v : point_variants(caps, shape, pair, variants, m)) {
      PlanRequest request;
      request.variant = v;
      plan_decode(caps, ds, request);
    }
  } catch (const Error& e) {
    throw Error(e.code(), where + e.what());
  }
}

std::string shown_variant(const TypePair& pair, Variant planned) {
  const bool turbo = variant_applies(pair.k) || variant_applies(pair.v);
  return turbo || planned == Variant::tc ? std::string(variant_name(planned)) : "native";
}

std::vector<Variant> point_variants(const DeviceCaps& caps, const Shape& shape, const TypePair& pair,
                                    const std::vector<Variant>& variants, uint32_t m) {
  if (!variant_applies(pair.k) && !variant_applies(pair.v)) return {Variant::automatic};
  std::vector<Variant> out;
  const std::string tc_problem = tensor_core_problem(caps, point_shape(shape, pair, 1, m, 1, 64));
  for (Variant v : variants)
    if (v != Variant::tc || tc_problem.empty()) out.push_back(v);
  if (out.empty()) fail(ErrorCode::invalid_argument, "variant tc cannot run " + pair.label() + ": " + tc_problem);
  return out;
}

void progress(const std::string& text) {
  static const bool tty = isatty(fileno(stderr));
  if (tty) std::fprintf(stderr, "\r\033[K%s", text.c_str());
}

void progress_done() {
  static const bool tty = isatty(fileno(stderr));
  if (tty) std::fprintf(stderr, "\r\033[K");
}

std::string mib(uint64_t bytes) { return fixed(double(bytes) / (1 << 20), 1) + " MiB"; }

json caps_json(const DeviceCaps& c) {
  json heaps = json::array();
  for (const auto& h : c.heaps) heaps.push_back({{"bytes", h.size}, {"device_local", h.device_local}});
  return {{"index", c.index},
          {"name", c.name},
          {"vendor", vendor_name(c.vendor)},
          {"vendor_id", c.vendor_id},
          {"device_id", c.device_id},
          {"class", device_class_name(c.device_class)},
          {"driver", c.driver_name},
          {"driver_info", c.driver_info},
          {"api_version", api_version_string(c.api_version)},
          {"subgroup_size", c.subgroup_size},
          {"subgroup_size_range", {c.min_subgroup_size, c.max_subgroup_size}},
          {"compute_units", c.compute_units},
          {"max_shared_memory", c.max_shared_memory},
          {"max_storage_buffer_range", c.max_storage_buffer_range},
          {"fp16", c.fp16_arithmetic},
          {"int8", c.int8_arithmetic},
          {"storage_16bit", c.storage_16bit},
          {"storage_8bit", c.storage_8bit},
          {"integer_dot_product", c.integer_dot_product},
          {"cooperative_matrix", c.cooperative_matrix},
          {"cooperative_matrix_shapes", c.cooperative_matrix_shapes},
          {"heaps", heaps},
          {"supported", c.unsupported_reason().empty()},
          {"unsupported_reason", c.unsupported_reason()}};
}

OutputFiles::OutputFiles(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!dir_.empty() && std::filesystem::exists(dir_, ec) && !std::filesystem::is_directory(dir_, ec))
    fail(ErrorCode::io, "--out " + dir_ + " exists and is not a directory");
}

void OutputFiles::commit() const {
  if (dir_.empty() || files_.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) fail(ErrorCode::io, "cannot create --out " + dir_ + ": " + ec.message());
  // Every file is written in full before any is renamed into place, so that a failure (a full
  // disk) leaves the previous set, not a mix.
  std::vector<std::pair<fs::path, fs::path>> staged;
  auto discard = [&] {
    for (const auto& [tmp, path] : staged) fs::remove(tmp, ec);
  };
  for (const auto& [name, content] : files_) {
    const fs::path path = fs::path(dir_) / name;
    const fs::path tmp = path.string() + ".tmp";
    staged.emplace_back(tmp, path);
    std::ofstream f(tmp, std::ios::trunc | std::ios::binary);
    f << content;
    f.close();
    if (!f) {
      discard();
      fail(ErrorCode::io, "cannot write " + path.string());
    }
  }
  for (const auto& [tmp, path] : staged) {
    fs::rename(tmp, path, ec);
    if (ec) {
      discard();
      fail(ErrorCode::io, "cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
    }
  }
}

std::string run_header(const DeviceCaps& caps, const Shape& shape, const CommonOptions& o) {
  std::ostringstream out;
  out << "device: " << caps.name << " (" << caps.driver_name << " " << caps.driver_info << ")\n"
      << "workload: " << shape.name << " (" << shape.q_heads << " query heads, " << shape.kv_heads
      << " KV heads, head dim " << shape.head_dim << ", " << shape.layers << " layers), batch " << o.batch << ", m "
      << o.m;
  return out.str();
}

std::string point_label(size_t point, size_t points, const TypePair& pair, uint32_t depth) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string here.
  std::string at = "[";
  at += std::to_string(point);
  at += '/';
  at += std::to_string(points);
  at += "] ";
  at += pair.label();
  at += " at ";
  at += depth_label(depth);
  return at;
}

json run_json(const DeviceCaps& caps, const Shape& shape, const CommonOptions& o) {
  return {{"device", caps_json(caps)}, {"workload", shape_json(shape)}, {"batch", o.batch}, {"m", o.m}};
}

std::shared_ptr<vk::Context> open_device(const CommonOptions& o) {
  vk::ContextOptions co;
  co.device = o.device;
  return vk::Context::create(co);
}

std::string measure_header(const DeviceCaps& caps, const Shape& shape, const CommonOptions& o, double peak_gbs,
                           uint64_t read_bytes) {
  std::ostringstream s;
  s << run_header(caps, shape, o) << "\n"
    << "read bandwidth: " << fixed(peak_gbs, 1) << " GB/s (streaming read of " << mib(read_bytes) << ")\n\n";
  return s.str();
}

nlohmann::json timing_json(const Timing& t, uint64_t kv_bytes, double peak_gbs, const Timing& floor) {
  const double gbs = double(kv_bytes) / (t.median_us * 1e3);
  return {{"us_median", t.median_us},
          {"us_min", t.min_us},
          {"us_max", t.max_us},
          {"kv_bytes", kv_bytes},
          {"gb_per_s", gbs},
          {"pct_read_bw", 100.0 * gbs / peak_gbs},
          {"read_floor_us", floor.median_us},
          {"x_floor", t.median_us / floor.median_us}};
}

}  // namespace tkv::prof
