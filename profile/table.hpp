// A text table: aligned columns on a terminal, CSV for files.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tkv::prof {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;
  void write_csv(std::ostream& out) const;
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double value, int decimals);

}  // namespace tkv::prof
