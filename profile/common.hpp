// What turboprof's subcommands share: the resolved shape and depths, progress on a terminal,
// device records as JSON, and output files that appear only when a run completes.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kvcache/vk/caps.hpp"
#include "kvcache/vk/context.hpp"
#include "profile/commands.hpp"
#include "profile/measure.hpp"

namespace tkv::prof {

struct Shape {
  std::string name;
  uint32_t q_heads, kv_heads, head_dim;
  uint32_t layers;  // of the model: the decode-step view
};
// The workload, or the explicit --q-heads/--kv-heads/--head-dim (all three or none).
Shape resolve_shape(const CommonOptions& o);
nlohmann::json shape_json(const Shape& s);

// --ctx, or `cpu_default` / `gpu_default` by device class when it is empty.
std::vector<uint32_t> resolve_depths(const CommonOptions& o, const DeviceCaps& caps, const char* cpu_default,
                                     const char* gpu_default);

// Fails (one line naming the point and the reason) when a measurement point cannot run on this
// device: the cache DecodeBench would allocate, plus the streaming read of the same bytes, must
// fit its buffers and memory, and the plan must exist for every variant asked for. Called for
// every point before anything is measured, so that a bad depth fails fast with no output.
void check_point(const DeviceCaps& caps, const Shape& shape, const TypePair& pair, uint32_t depth, uint32_t batch,
                 uint32_t m, const std::vector<Variant>& variants);

// The variants a point runs: `variants` for a turbo pair, less tc where the device cannot run it
// (no tensor cores, or a shape tc does not handle); the native path for f16 / q8_0 pairs. Throws
// when nothing is left (tc alone asked for where it cannot run).
std::vector<Variant> point_variants(const DeviceCaps& caps, const Shape& shape, const TypePair& pair,
                                    const std::vector<Variant>& variants, uint32_t m = 1);

// The variant a table names for a pair's planned calls: the plan's for turbo types; f16 and q8_0
// name the tensor cores (tc) where they run there, else "native" (their one scalar kernel).
std::string shown_variant(const TypePair& pair, Variant planned);

// Progress on a terminal only; nothing when stderr is piped.
void progress(const std::string& text);
void progress_done();

nlohmann::json caps_json(const DeviceCaps& c);
// The lines every subcommand's text output opens with: "device: ...\nworkload: ..., batch B, m M"
// (no trailing newline; callers append what is theirs).
std::string run_header(const DeviceCaps& caps, const Shape& shape, const CommonOptions& o);
// run_header, then the measured read bandwidth and a blank line: what precedes a measurement table.
std::string measure_header(const DeviceCaps& caps, const Shape& shape, const CommonOptions& o, double peak_gbs,
                           uint64_t read_bytes);
// The JSON document every subcommand starts from: device, workload, batch and m.
nlohmann::json run_json(const DeviceCaps& caps, const Shape& shape, const CommonOptions& o);
// The Vulkan device named by --device (or the best one).
std::shared_ptr<vk::Context> open_device(const CommonOptions& o);
// "[3/10] turbo3 at 8K": a measurement point, for progress lines.
std::string point_label(size_t point, size_t points, const TypePair& pair, uint32_t depth);
std::string mib(uint64_t bytes);

// The fields every measured point's JSON row carries: its times, the bytes it reads, GB/s over
// them, % of the read bandwidth and its multiple of the read floor (a streaming read of the same
// bytes).
nlohmann::json timing_json(const Timing& t, uint64_t kv_bytes, double peak_gbs, const Timing& floor);

// Files for --out, kept in memory until commit(): a failed run leaves no file behind, and a
// completed one replaces each file whole (written to NAME.tmp, then renamed).
class OutputFiles {
 public:
  // Rejects an --out that exists and is not a directory before anything is measured.
  explicit OutputFiles(std::string dir);
  void add(const std::string& name, std::string content) { files_[name] = std::move(content); }
  void commit() const;
  // Adds STEM.csv and STEM.json, commits, and prints the JSON document (--json), or `header`,
  // the table and `footer`.
  template <class Table>
  void finish(const std::string& stem, const Table& table, const nlohmann::json& doc, bool json_out,
              const std::string& header, const std::function<void()>& footer) {
    std::ostringstream csv;
    table.write_csv(csv);
    add(stem + ".csv", csv.str());
    add(stem + ".json", doc.dump(2) + "\n");
    commit();
    if (json_out) {
      std::cout << doc.dump(2) << "\n";
      return;
    }
    std::cout << header;
    table.print(std::cout);
    footer();
  }

 private:
  std::string dir_;
  std::map<std::string, std::string> files_;
};

}  // namespace tkv::prof
