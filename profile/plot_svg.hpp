// The sweep's plot, written as SVG by hand (no plotting library is packaged for C++ here): three
// panels against context depth on a log2 x axis: microseconds per call (log y) with each series'
// read floor dotted, GB/s over the stored bytes (linear y) with the measured read bandwidth drawn
// as the ceiling, and decode-step tokens/s (log y). One line per series in every panel.
//
// Hooks for tools and tests: each series is a <path class="series" data-series="LABEL">, each
// floor a <path class="floor" data-series="LABEL">, the ceiling a <line class="ceiling">.
#pragma once

#include <string>
#include <vector>

namespace tkv::prof {

struct PlotSeries {
  std::string label;               // "turbo3", or "turbo3 mag4" when several variants are swept
  std::vector<double> ctx;         // tokens, ascending
  std::vector<double> us;          // per call
  std::vector<double> floor_us;    // streaming read of the same bytes
  std::vector<double> gb_per_s;
  std::vector<double> tokens_per_s;  // decode step; entries <= 0 are left out
};

std::string sweep_svg(const std::string& title, const std::vector<PlotSeries>& series, double ceiling_gb_per_s);

}  // namespace tkv::prof
