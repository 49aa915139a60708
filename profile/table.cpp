#include "profile/table.hpp"

#include <algorithm>
#include <cstdio>

namespace tkv::prof {

void Table::print(std::ostream& out) const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& r : rows_)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string& s = c < cells.size() ? cells[c] : std::string();
      out << (c ? "  " : "") << s << std::string(width[c] - s.size(), ' ');
    }
    out << '\n';
  };
  line(headers_);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& r : rows_) line(r);
}

void Table::write_csv(std::ostream& out) const {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (size_t c = 0; c < headers_.size(); ++c) out << (c ? "," : "") << cell(headers_[c]);
  out << '\n';
  for (const auto& r : rows_) {
    for (size_t c = 0; c < r.size(); ++c) out << (c ? "," : "") << cell(r[c]);
    out << '\n';
  }
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace tkv::prof
