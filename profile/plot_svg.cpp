#include "profile/plot_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

#include "profile/workloads.hpp"

namespace tkv::prof {
namespace {

constexpr double kPanelW = 420, kPanelH = 300;      // plot area of one panel
constexpr double kLeft = 70, kTop = 50, kGap = 90;  // margins
constexpr double kLegendH = 24;
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                               "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A compact tick label: 1500 -> "1.5k", 0.25 -> "0.25".
std::string tick_label(double v) {
  char buf[32];
  if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%gM", v / 1e6);
  else if (v >= 1e3)
    std::snprintf(buf, sizeof buf, "%gk", v / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct Axis {
  double lo, hi;
  bool log;
  double step = 0;  // linear ticks
  double frac(double v) const {
    return log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
  }
};

// The 1-2-5 values at or below / at or above v (v > 0).
double floor125(double v) {
  const double d = std::pow(10.0, std::floor(std::log10(v))), m = v / d * (1 + 1e-9);
  return d * (m >= 5 ? 5 : m >= 2 ? 2 : 1);
}
double ceil125(double v) {
  const double d = std::pow(10.0, std::floor(std::log10(v))), m = v / d * (1 - 1e-9);
  return d * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}

// A log axis from the 1-2-5 value below the data to the one above; a linear one from 0.
Axis make_axis(double lo, double hi, bool log) {
  if (!(hi > 0)) hi = 1;
  if (log) {
    if (!(lo > 0) || lo > hi) lo = hi;
    const double a = floor125(lo), b = ceil125(hi);
    return {a, b > a ? b : ceil125(a * 1.5), true};
  }
  const double step = ceil125(hi * 1.05 / 5);
  return {0, std::ceil(hi * 1.05 / step) * step, false, step};
}

std::vector<double> ticks(const Axis& a) {
  std::vector<double> t;
  if (a.log) {
    for (double p = std::pow(10.0, std::floor(std::log10(a.lo))); p <= a.hi * 1.0000001; p *= 10)
      for (double s : {1.0, 2.0, 5.0})
        if (p * s >= a.lo * 0.9999999 && p * s <= a.hi * 1.0000001) t.push_back(p * s);
    // A wide range keeps only the decades, or the labels collide.
    if (t.size() > 8) {
      std::vector<double> decades;
      for (double v : t)
        if (std::fabs(std::log10(v) - std::round(std::log10(v))) < 1e-9) decades.push_back(v);
      t = decades;
    }
  } else {
    for (double v = a.lo; v <= a.hi * 1.0000001; v += a.step) t.push_back(v);
  }
  return t;
}

struct Panel {
  std::string id, title, y_label;
  bool log_y;
  std::function<const std::vector<double>&(const PlotSeries&)> values;
  bool floors = false;   // dotted floor lines (us panel)
  double ceiling = 0;    // horizontal ceiling line (GB/s panel)
};

}  // namespace

std::string sweep_svg(const std::string& title, const std::vector<PlotSeries>& series, double ceiling_gb_per_s) {
  double xlo = 1e300, xhi = 0;
  for (const auto& s : series)
    for (double x : s.ctx) xlo = std::min(xlo, x), xhi = std::max(xhi, x);
  if (xhi <= 0) xlo = 1024, xhi = 2048;
  // Half a doubling of room on both sides, so end points sit inside the frame.
  const Axis xa{xlo / std::sqrt(2.0), xhi * std::sqrt(2.0), true};
  std::vector<double> xticks;
  for (const auto& s : series)
    for (double x : s.ctx)
      if (std::find(xticks.begin(), xticks.end(), x) == xticks.end()) xticks.push_back(x);
  std::sort(xticks.begin(), xticks.end());
  while (xticks.size() > 9) {  // every other depth when many, keeping both ends
    std::vector<double> thin;
    for (size_t i = 0; i < xticks.size(); i += 2) thin.push_back(xticks[i]);
    if (thin.back() != xticks.back()) thin.push_back(xticks.back());
    xticks = thin;
  }

  const std::vector<Panel> panels = {
      {"us", "time per call", "\u00b5s per call (dotted: read floor)", true,
       [](const PlotSeries& s) -> const std::vector<double>& { return s.us; }, true, 0},
      {"gbps", "bandwidth over stored K/V bytes", "GB/s (dashed: measured read bandwidth)", false,
       [](const PlotSeries& s) -> const std::vector<double>& { return s.gb_per_s; }, false, ceiling_gb_per_s},
      {"tokps", "decode step (all layers)", "tokens/s", true,
       [](const PlotSeries& s) -> const std::vector<double>& { return s.tokens_per_s; }, false, 0},
  };
  const double width = kLeft + panels.size() * (kPanelW + kGap) - kGap + 30;
  const double height = kTop + kPanelH + 60 + kLegendH * double((series.size() + 3) / 4) + 20;

  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
    << "\" viewBox=\"0 0 " << num(width) << " " << num(height) << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<title>" << esc(title) << "</title>\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << num(kLeft) << "\" y=\"22\" font-size=\"15\">" << esc(title) << "</text>\n";

  for (size_t pi = 0; pi < panels.size(); ++pi) {
    const Panel& p = panels[pi];
    const double x0 = kLeft + pi * (kPanelW + kGap), y0 = kTop;
    double lo = 1e300, hi = 0;
    for (const auto& s : series) {
      for (double v : p.values(s))
        if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
      if (p.floors)
        for (double v : s.floor_us)
          if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    hi = std::max(hi, p.ceiling);
    const Axis ya = make_axis(lo, hi, p.log_y);
    auto px = [&](double x) { return x0 + xa.frac(x) * kPanelW; };
    auto py = [&](double y) { return y0 + (1 - ya.frac(y)) * kPanelH; };

    o << "<g class=\"panel\" data-panel=\"" << p.id << "\">\n";
    o << "<text x=\"" << num(x0) << "\" y=\"" << num(y0 - 10) << "\" font-size=\"13\">" << esc(p.title) << "</text>\n";
    o << "<rect x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(kPanelW) << "\" height=\""
      << num(kPanelH) << "\" fill=\"none\" stroke=\"#444\"/>\n";
    for (double t : ticks(ya)) {
      o << "<line x1=\"" << num(x0) << "\" y1=\"" << num(py(t)) << "\" x2=\"" << num(x0 + kPanelW) << "\" y2=\""
        << num(py(t)) << "\" stroke=\"#ddd\"/>\n"
        << "<text x=\"" << num(x0 - 5) << "\" y=\"" << num(py(t) + 4) << "\" text-anchor=\"end\">" << tick_label(t)
        << "</text>\n";
    }
    for (double t : xticks) {
      o << "<line x1=\"" << num(px(t)) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(px(t)) << "\" y2=\""
        << num(y0 + kPanelH) << "\" stroke=\"#eee\"/>\n"
        << "<text x=\"" << num(px(t)) << "\" y=\"" << num(y0 + kPanelH + 15) << "\" text-anchor=\"middle\">"
        << depth_label(uint32_t(t)) << "</text>\n";
    }
    o << "<text x=\"" << num(x0 + kPanelW / 2) << "\" y=\"" << num(y0 + kPanelH + 32)
      << "\" text-anchor=\"middle\">context depth (tokens, log scale)</text>\n";
    o << "<text transform=\"translate(" << num(x0 - 50) << "," << num(y0 + kPanelH / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << esc(p.y_label) << "</text>\n";
    if (p.ceiling > 0)
      o << "<line class=\"ceiling\" x1=\"" << num(x0) << "\" y1=\"" << num(py(p.ceiling)) << "\" x2=\""
        << num(x0 + kPanelW) << "\" y2=\"" << num(py(p.ceiling)) << "\" stroke=\"black\" stroke-dasharray=\"6 4\"/>\n"
        << "<text x=\"" << num(x0 + kPanelW - 4) << "\" y=\"" << num(py(p.ceiling) - 5)
        << "\" text-anchor=\"end\">read bandwidth " << num(p.ceiling) << " GB/s</text>\n";

    auto path = [&](const char* cls, const PlotSeries& s, const std::vector<double>& ys, const char* color,
                    const char* extra) {
      std::string d;
      for (size_t i = 0; i < s.ctx.size() && i < ys.size(); ++i)
        if (ys[i] > 0) d += std::string(d.empty() ? "M" : " L") + num(px(s.ctx[i])) + " " + num(py(ys[i]));
      if (d.empty()) return;
      o << "<path class=\"" << cls << "\" data-series=\"" << esc(s.label) << "\" d=\"" << d
        << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"" << (extra[0] ? "1.2" : "2") << "\"" << extra
        << "/>\n";
    };
    for (size_t si = 0; si < series.size(); ++si) {
      const auto& s = series[si];
      const char* color = kColors[si % std::size(kColors)];
      if (p.floors) path("floor", s, s.floor_us, color, " stroke-dasharray=\"2 3\"");
      path("series", s, p.values(s), color, "");
      const auto& ys = p.values(s);
      for (size_t i = 0; i < s.ctx.size() && i < ys.size(); ++i)
        if (ys[i] > 0)
          o << "<circle cx=\"" << num(px(s.ctx[i])) << "\" cy=\"" << num(py(ys[i])) << "\" r=\"3\" fill=\"" << color
            << "\"/>\n";
    }
    o << "</g>\n";
  }

  // Legend: four entries per row under the panels.
  o << "<g class=\"legend\">\n";
  for (size_t si = 0; si < series.size(); ++si) {
    const double lx = kLeft + double(si % 4) * 220, ly = kTop + kPanelH + 60 + kLegendH * double(si / 4);
    o << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(lx + 24) << "\" y2=\"" << num(ly)
      << "\" stroke=\"" << kColors[si % std::size(kColors)] << "\" stroke-width=\"2\"/>\n"
      << "<text x=\"" << num(lx + 30) << "\" y=\"" << num(ly + 4) << "\">" << esc(series[si].label) << "</text>\n";
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

}  // namespace tkv::prof
