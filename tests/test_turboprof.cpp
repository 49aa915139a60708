// turboprof end to end: the built binary run as a user runs it, at small depths so that the file
// stays quick on lavapipe. profile and sweep print their tables; sweep's CSV, JSON and table
// agree and its SVG is well-formed with a line per type and the ceiling; check passes and
// reports its figures; bad input fails with one line naming the problem and leaves no file.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh directory per test (ctest may run the tests of this file in parallel).
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("test_turboprof_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs turboprof with `args` (shell words), stdout and stderr captured to files (so not a TTY);
// `env` is prefixed to the command ("TKV_CACHE_DIR=... ").
Result turboprof(const std::string& args, const fs::path& dir, const std::string& env = "") {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = env + "'" + TKV_TURBOPROF_PATH + "' " + args + " >'" + out.string() + "' 2>'" +
                          err.string() + "'";
  const int status = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) parts.push_back(cur);
  return parts;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// CSV without quoted fields (turboprof's cells hold no commas): header and rows as maps.
std::vector<std::map<std::string, std::string>> parse_csv(const std::string& text, std::vector<std::string>& header) {
  std::vector<std::map<std::string, std::string>> rows;
  auto lines = split(text, '\n');
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) return rows;
  header = split(lines[0], ',');
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto cells = split(lines[i], ',');
    EXPECT_EQ(cells.size(), header.size()) << lines[i];
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < cells.size() && c < header.size(); ++c) row[header[c]] = cells[c];
    rows.push_back(row);
  }
  return rows;
}

// A small XML well-formedness check, enough for the SVG turboprof writes: balanced tags, quoted
// attributes, entities, one root. Returns the elements in document order.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
};
bool parse_xml(const std::string& s, std::vector<Element>& elements, std::string& why) {
  std::vector<std::string> stack;
  size_t roots = 0, i = 0;
  auto fail = [&](const std::string& w) {
    why = w + " at offset " + std::to_string(i);
    return false;
  };
  auto entity_ok = [&](size_t amp) {
    const size_t semi = s.find(';', amp);
    if (semi == std::string::npos || semi - amp > 8) return false;
    const std::string e = s.substr(amp + 1, semi - amp - 1);
    return e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos" || (!e.empty() && e[0] == '#');
  };
  while (i < s.size()) {
    if (s[i] != '<') {
      if (s[i] == '&' && !entity_ok(i)) return fail("bad entity");
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(s[i]))) return fail("text outside the root");
      ++i;
      continue;
    }
    if (s.compare(i, 5, "<?xml") == 0) {
      const size_t e = s.find("?>", i);
      if (e == std::string::npos || i != 0) return fail("bad XML declaration");
      i = e + 2;
      continue;
    }
    if (s.compare(i, 4, "<!--") == 0) {
      const size_t e = s.find("-->", i);
      if (e == std::string::npos) return fail("unclosed comment");
      i = e + 3;
      continue;
    }
    const bool closing = i + 1 < s.size() && s[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    const size_t name_start = j;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '-' || s[j] == ':' || s[j] == '_'))
      ++j;
    const std::string name = s.substr(name_start, j - name_start);
    if (name.empty()) return fail("empty tag name");
    if (closing) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size() || s[j] != '>') return fail("bad closing tag");
      if (stack.empty() || stack.back() != name) return fail("mismatched </" + name + ">");
      stack.pop_back();
      i = j + 1;
      continue;
    }
    Element el{name, {}};
    bool self_closing = false;
    for (;;) {
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j >= s.size()) return fail("unterminated tag");
      if (s[j] == '>') break;
      if (s[j] == '/') {
        if (j + 1 >= s.size() || s[j + 1] != '>') return fail("bad self-closing tag");
        self_closing = true;
        ++j;
        break;
      }
      const size_t a = j;
      while (j < s.size() && s[j] != '=' && !std::isspace(static_cast<unsigned char>(s[j])) && s[j] != '>') ++j;
      const std::string attr = s.substr(a, j - a);
      if (attr.empty() || j >= s.size() || s[j] != '=' || j + 1 >= s.size() || (s[j + 1] != '"' && s[j + 1] != '\''))
        return fail("attribute without a quoted value in <" + name + ">");
      const char q = s[j + 1];
      const size_t end = s.find(q, j + 2);
      if (end == std::string::npos) return fail("unterminated attribute value");
      const std::string value = s.substr(j + 2, end - j - 2);
      if (value.find('<') != std::string::npos) return fail("'<' in an attribute value");
      for (size_t k = value.find('&'); k != std::string::npos; k = value.find('&', k + 1))
        if (!entity_ok(j + 2 + k)) return fail("bad entity in an attribute value");
      if (el.attrs.count(attr)) return fail("duplicate attribute " + attr);
      el.attrs[attr] = value;
      j = end + 1;
    }
    if (stack.empty() && ++roots > 1) return fail("a second root element");
    elements.push_back(el);
    if (!self_closing) stack.push_back(name);
    i = j + 1;
  }
  if (!stack.empty()) return fail("unclosed <" + stack.back() + ">");
  if (roots != 1) return fail("no root element");
  return true;
}

// The lines of a printed table whose cells (split on whitespace) start with `first`.
std::vector<std::vector<std::string>> table_rows(const std::string& out, const std::string& first) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : split(out, '\n')) {
    auto w = words(line);
    if (!w.empty() && w[0] == first) rows.push_back(w);
  }
  return rows;
}

// Small shapes and depths: lavapipe runs every call on the CPU.
const std::string kSmall = "--q-heads 4 --kv-heads 2 --head-dim 64 --repeat 2";

}  // namespace

TEST(Turboprof, ProfilePrintsATable) {
  const auto dir = scratch("profile");
  const auto r = turboprof("profile " + kSmall + " --types turbo3,f16 --ctx 256 --modes 0,1", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("read bandwidth:"), std::string::npos);
  EXPECT_NE(r.out.find("us/call"), std::string::npos);
  EXPECT_EQ(table_rows(r.out, "turbo3").size(), 2u) << r.out;  // modes 0 and 1
  EXPECT_EQ(table_rows(r.out, "f16").size(), 2u) << r.out;
  // Piped: no progress line on stderr.
  EXPECT_EQ(r.err.find('\r'), std::string::npos);
  fs::remove_all(dir);
}

TEST(Turboprof, SweepTableCsvJsonAndPlotAgree) {
  const auto dir = scratch("sweep");
  const auto out_dir = dir / "out";
  const auto r = turboprof("sweep " + kSmall + " --layers 4 --types turbo3,q8_0 --ctx 256,512 --out '" +
                               out_dir.string() + "'",
                           dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);

  // The CSV is the table.
  std::vector<std::string> header;
  const auto csv = parse_csv(slurp(out_dir / "sweep.csv"), header);
  ASSERT_EQ(csv.size(), 4u);  // 2 types x 2 depths
  for (const char* col : {"type", "variant", "ctx", "us/call", "GB/s", "x floor", "step us", "tok/s"})
    EXPECT_NE(std::find(header.begin(), header.end(), col), header.end()) << col;
  std::vector<std::vector<std::string>> printed = table_rows(r.out, "turbo3");
  for (auto& row : table_rows(r.out, "q8_0")) printed.push_back(row);
  ASSERT_EQ(printed.size(), csv.size()) << r.out;
  for (const auto& row : printed) {
    bool found = false;
    for (const auto& c : csv) {
      std::vector<std::string> cells;
      for (const auto& h : header) cells.push_back(c.at(h));
      found = found || cells == row;
    }
    EXPECT_TRUE(found) << "printed row not in the CSV: " << row[0] << " " << row[3];
  }

  // The JSON holds the same points, unrounded.
  const json doc = json::parse(slurp(out_dir / "sweep.json"));
  ASSERT_EQ(doc["rows"].size(), csv.size());
  EXPECT_GT(doc["read_bandwidth_gb_per_s"].get<double>(), 0.0);
  EXPECT_EQ(doc["workload"]["layers"], 4);
  for (size_t i = 0; i < csv.size(); ++i) {
    const auto& j = doc["rows"][i];
    const auto& c = csv[i];
    EXPECT_EQ(j["type"].get<std::string>(), c.at("type"));
    EXPECT_EQ(j["variant"].get<std::string>(), c.at("variant"));
    EXPECT_EQ(j["ctx"].get<uint32_t>() % 256, 0u);
    EXPECT_EQ(std::to_string(j["ctx"].get<uint32_t>()), c.at("ctx"));
    EXPECT_NEAR(j["us_median"].get<double>(), std::stod(c.at("us/call")), 0.051);
    EXPECT_NEAR(j["read_floor_us"].get<double>(), std::stod(c.at("floor us")), 0.051);
    EXPECT_NEAR(j["step_us"].get<double>(), std::stod(c.at("step us")), 0.051);
    EXPECT_NEAR(j["tokens_per_s"].get<double>(), std::stod(c.at("tok/s")), 0.051);
    EXPECT_NEAR(j["tokens_per_s"].get<double>(), 1e6 / j["step_us"].get<double>(), 1e-6 * j["tokens_per_s"].get<double>());
    EXPECT_GT(j["gb_per_s"].get<double>(), 0.0);
  }

  // The plot: well-formed SVG, a line per type in each panel, the bandwidth ceiling.
  std::vector<Element> elements;
  std::string why;
  ASSERT_TRUE(parse_xml(slurp(out_dir / "sweep.svg"), elements, why)) << why;
  ASSERT_FALSE(elements.empty());
  EXPECT_EQ(elements[0].name, "svg");
  EXPECT_EQ(elements[0].attrs["xmlns"], "http://www.w3.org/2000/svg");
  std::map<std::string, int> series;
  int ceilings = 0;
  for (const auto& e : elements) {
    const auto cls = e.attrs.find("class");
    if (cls == e.attrs.end()) continue;
    if (e.name == "path" && cls->second == "series") {
      ++series[e.attrs.at("data-series")];
      EXPECT_EQ(e.attrs.at("d").rfind("M", 0), 0u);
      EXPECT_NE(e.attrs.at("d").find(" L"), std::string::npos);  // two depths: a line, not a point
    }
    if (e.name == "line" && cls->second == "ceiling") ++ceilings;
  }
  EXPECT_EQ(series.size(), 2u);
  EXPECT_EQ(series["turbo3"], 3);  // us, GB/s and tokens/s panels
  EXPECT_EQ(series["q8_0"], 3);
  EXPECT_EQ(ceilings, 1);

  // --out holds the three files and nothing else (no .tmp left behind).
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(out_dir)) {
    ++files;
    EXPECT_NE(e.path().extension(), ".tmp");
  }
  EXPECT_EQ(files, 3u);
  fs::remove_all(dir);
}

TEST(Turboprof, SweepJsonOnStdout) {
  const auto dir = scratch("sweep_json");
  const auto r = turboprof("sweep " + kSmall + " --layers 2 --types f16 --ctx 256 --json", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);  // nothing but the document on stdout
  ASSERT_EQ(doc["rows"].size(), 1u);
  EXPECT_EQ(doc["rows"][0]["type"], "f16");
  EXPECT_EQ(doc["rows"][0]["ctx"], 256);
  EXPECT_GT(doc["rows"][0]["tokens_per_s"].get<double>(), 0.0);
  fs::remove_all(dir);
}

TEST(Turboprof, TimelineReportsEachPhase) {
  const auto dir = scratch("timeline");
  const auto r = turboprof("timeline " + kSmall + " --types turbo3,q8_0 --ctx 512 --json", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["rows"].size(), 2u);
  for (const auto& row : doc["rows"]) {
    EXPECT_GT(row["workgroups_with_tokens"].get<uint32_t>(), 0u) << row.dump();
    EXPECT_GE(row["mergers"].get<uint32_t>(), 2u) << row.dump();  // one per KV head (batch 1, m 1)
    EXPECT_GT(row["span_us"].get<double>(), 0.0) << row.dump();
    EXPECT_GT(row["tiles_us"].get<double>(), 0.0) << row.dump();
    EXPECT_GT(row["call_us"].get<double>(), 0.0) << row.dump();
  }
  fs::remove_all(dir);
}

// --workgroups: every traced call's workgroups, each with its phases in order and one merger per
// group, the summary's counts.
TEST(Turboprof, TimelineWritesEachWorkgroup) {
  const auto dir = scratch("timeline_workgroups");
  const auto r = turboprof("timeline " + kSmall + " --types turbo3 --ctx 512 --workgroups --json", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["rows"].size(), 1u);
  const json& row = doc["rows"][0];
  ASSERT_EQ(row["calls"].size(), 2u) << row.dump();  // (kSmall's --repeat 2)
  for (const auto& call : row["calls"]) {
    EXPECT_GT(call["call_us"].get<double>(), 0.0);
    uint32_t mergers = 0, with_tokens = 0;
    double first = 1e30;
    for (const auto& w : call["workgroups"]) {
      const json& at = w["at_us"];
      ASSERT_EQ(at.size(), 6u);
      first = std::min(first, at[0].get<double>());
      if (!w["had_tokens"].get<bool>()) continue;
      ++with_tokens;
      for (int i = 1; i < 4; ++i) EXPECT_GE(at[i].get<double>(), at[i - 1].get<double>()) << w.dump();
      if (w["merged"].get<bool>()) {
        ++mergers;
        EXPECT_GE(at[5].get<double>(), at[4].get<double>()) << w.dump();
        EXPECT_GE(at[4].get<double>(), at[3].get<double>()) << w.dump();
      } else {
        EXPECT_TRUE(at[4].is_null()) << w.dump();
      }
    }
    EXPECT_DOUBLE_EQ(first, 0.0);
    EXPECT_EQ(mergers, row["mergers"].get<uint32_t>());
    EXPECT_EQ(with_tokens, row["workgroups_with_tokens"].get<uint32_t>());
  }
  // (only into a JSON document: named, not dropped)
  const auto bare = turboprof("timeline " + kSmall + " --types turbo3 --ctx 512 --workgroups", dir);
  EXPECT_NE(bare.rc, 0);
  EXPECT_NE(bare.err.find("--workgroups"), std::string::npos) << bare.err;
  fs::remove_all(dir);
}

TEST(Turboprof, CheckPassesAndReportsFigures) {
  const auto dir = scratch("check");
  const auto out_dir = dir / "out";
  const auto r = turboprof("check --q-heads 8 --kv-heads 2 --head-dim 128 --ctx 256 --types all,turbo3/q8_0 --json "
                           "--out '" + out_dir.string() + "'",
                           dir);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const json doc = json::parse(r.out);
  EXPECT_TRUE(doc["pass"].get<bool>());
  EXPECT_EQ(doc["exactness_bound"].get<double>(), 1e-4);
  ASSERT_EQ(doc["rows"].size(), 6u);
  std::map<std::string, double> rel;
  for (const auto& row : doc["rows"]) {
    for (const char* k : {"rel_err_mean", "rel_err_worst", "cos_mean", "cos_min", "kl_mean", "kl_max", "exactness"})
      EXPECT_TRUE(std::isfinite(row[k].get<double>())) << k;
    EXPECT_LE(row["exactness"].get<double>(), 1e-4);
    EXPECT_LE(row["rel_err_mean"].get<double>(), row["rel_err_worst"].get<double>());
    EXPECT_GE(row["cos_mean"].get<double>(), row["cos_min"].get<double>());
    EXPECT_TRUE(row["pass"].get<bool>());
    rel[row["type"].get<std::string>()] = row["rel_err_mean"].get<double>();
  }
  // Fewer bits, more error: the figures mean what they say.
  EXPECT_LT(rel["f16"], rel["q8_0"]);
  EXPECT_LT(rel["q8_0"], rel["turbo4"]);
  EXPECT_LT(rel["turbo4"], rel["turbo3"]);
  EXPECT_LT(rel["turbo3"], rel["turbo2"]);
  const json file = json::parse(slurp(out_dir / "check.json"));
  EXPECT_EQ(file["rows"], doc["rows"]);
  std::vector<std::string> header;
  EXPECT_EQ(parse_csv(slurp(out_dir / "check.csv"), header).size(), 6u);
  fs::remove_all(dir);
}

TEST(Turboprof, TuneWritesAPolicyTheDecoderUses) {
  // The policy goes to TKV_CACHE_DIR (never the user's cache here); a sweep with the same
  // directory then runs the variant the policy names.
  const auto dir = scratch("tune");
  const auto cache = dir / "cache";
  const std::string env = "TKV_CACHE_DIR='" + cache.string() + "' ";
  const auto r = turboprof("tune " + kSmall + " --types turbo3 --ctx 256,512 --subgroups 4,8 --out '" +
                               (dir / "out").string() + "'",
                           dir, env);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("policy written to"), std::string::npos) << r.out;
  fs::path policy;
  for (const auto& e : fs::directory_iterator(cache))
    if (e.path().filename().string().rfind("policy-", 0) == 0) policy = e.path();
  ASSERT_FALSE(policy.empty());
  const json p = json::parse(slurp(policy));
  EXPECT_EQ(p["format"], "turbokv-policy");
  ASSERT_FALSE(p["rules"].empty());
  uint32_t next = 0;  // the rules tile [0, inf) in order
  for (const auto& rule : p["rules"]) {
    EXPECT_EQ(rule["k_type"], "turbo3");
    EXPECT_EQ(rule.value("min_context", 0u), next);
    next = rule.value("max_context", 0xffffffffu);
  }
  EXPECT_EQ(next, 0xffffffffu);

  const json doc = json::parse(slurp(dir / "out" / "tune.json"));
  std::map<uint32_t, std::string> chosen;  // per depth
  for (const auto& row : doc["rows"]) {  // (--subgroups is tried only where tc is the fastest)
    ASSERT_TRUE(row.contains("subgroups")) << row;
    if (row["variant"] != "tc") EXPECT_EQ(row["subgroups"], 0u) << row;
  }
  for (const auto& row : doc["rows"])
    if (row["chosen"].get<bool>()) {
      EXPECT_EQ(chosen.count(row["ctx"].get<uint32_t>()), 0u);
      chosen[row["ctx"].get<uint32_t>()] = row["variant"].get<std::string>();
    }
  ASSERT_EQ(chosen.size(), 2u);

  const auto s = turboprof("sweep " + kSmall + " --layers 1 --types turbo3 --ctx 256,512 --json", dir, env);
  ASSERT_EQ(s.rc, 0) << s.err;
  // The parsed document must outlive the loop: a range-for over a member of a temporary reads
  // freed memory (found by AddressSanitizer).
  const json sweep = json::parse(s.out);
  for (const auto& row : sweep["rows"])
    EXPECT_EQ(row["variant"].get<std::string>(), chosen[row["ctx"].get<uint32_t>()]) << row["ctx"];
  fs::remove_all(dir);
}

// The issue probe: one row per kind, body and warp count, each with the work it names; its
// results are checked against the CPU's inside turboprof (a wrong word fails the run). Bad lists
// name themselves.
TEST(Turboprof, IssueProbeRunsEveryPointAndChecksItsResults) {
  const auto dir = scratch("issue");
  const auto r = turboprof("issue --kinds int,fp32,alu,imad --body 1,4 --warps 1,2 --steps 8 --repeat 1 --json", dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["rows"].size(), 16u);  // 4 kinds x 2 bodies x 2 warp counts
  for (const auto& row : doc["rows"]) {
    const uint64_t body = row["body"], iters = row["iterations"], inv = row["invocations"];
    EXPECT_EQ(iters, 8 / body);
    EXPECT_EQ(row["updates"].get<uint64_t>(), inv * iters * body * 8) << row;
    EXPECT_GT(row["us"].get<double>(), 0.0) << row;
  }
  // The tensor-core kinds run where the device has NV cooperative matrices (their results
  // checked the same way); elsewhere they fail with one line that says what is missing.
  const auto m = turboprof("issue --kinds mma,mix --mmas 3 --body 2 --warps 1 --steps 8 --repeat 1 --json", dir);
  if (m.rc == 0) {
    const json mdoc = json::parse(m.out);
    ASSERT_EQ(mdoc["rows"].size(), 2u);
    for (const auto& row : mdoc["rows"]) {
      const uint64_t inv = row["invocations"], per_copy = row["kind"] == "mma" ? 8 : 3;
      EXPECT_EQ(row["mmas"].get<uint64_t>(), inv / 32 * 4 * 2 * per_copy) << row;
    }
  } else {
    EXPECT_EQ(m.rc, 2);
    EXPECT_NE(m.err.find("cooperative_matrix"), std::string::npos) << m.err;
  }
  for (const char* bad : {"issue --kinds int,fp64", "issue --body 0", "issue --warps 65", "issue --body 1,,2",
                          "issue --kinds mix --mmas 9", "issue --steps 2000000"}) {
    const auto b = turboprof(bad, dir);
    EXPECT_EQ(b.rc, 2) << bad;
    EXPECT_TRUE(b.out.empty()) << bad;
    EXPECT_EQ(b.err.find('\n'), b.err.size() - 1) << bad << ": not one line: " << b.err;
  }
  const auto named = turboprof("issue --kinds int,fp64", dir);
  EXPECT_NE(named.err.find("fp64"), std::string::npos) << named.err;
  fs::remove_all(dir);
}

TEST(Turboprof, BadInputFailsWithOneLineAndNoFiles) {
  struct Case {
    std::string args, names;
  };
  const Case cases[] = {
      {"sweep --types turbo9 --ctx 256", "turbo9"},
      {"sweep --types turbo3/q9 --ctx 256", "q9"},
      {"sweep --variants mag4,foo --ctx 256", "foo"},
      {"sweep --workload llama9 --ctx 256", "llama9"},
      {"sweep --device nosuchdevice --ctx 256", "nosuchdevice"},
      {"sweep --workload mha64 --device 99 --ctx 256", "99"},
      {"sweep --ctx 1k..x", "x"},
      {"sweep --ctx 4k..1k", "4k..1k"},
      {"sweep --ctx 1k,,2k", "1k,,2k"},
      {"sweep --ctx 0", "0"},
      {"sweep --workload mha64 --types turbo3 --ctx 100000k", "100000K"},
      {"sweep --q-heads 4 --ctx 256", "--kv-heads"},
      {"sweep --batch 0 --ctx 256", "--batch"},
      {"check --types turbo9 --ctx 256", "turbo9"},
      {"check --workload mha64 --ctx 100000k", "100000K"},
      {"profile --modes 0,7 --ctx 256", "7"},
      {"tune --types q8_0 --ctx 256 --dry-run", "q8_0"},
      {"tune --types turbo3 --ctx 256 --subgroups 4,5 --dry-run", "--subgroups 5"},
  };
  const auto dir = scratch("bad");
  for (const auto& c : cases) {
    const auto out_dir = dir / "out";
    const auto r = turboprof(c.args + " --out '" + out_dir.string() + "'", dir);
    EXPECT_NE(r.rc, 0) << c.args;
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
    ASSERT_FALSE(r.err.empty()) << c.args;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << c.args << ": not one line: " << r.err;
    EXPECT_EQ(r.err.rfind("turboprof: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << c.args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out_dir)) << c.args << " left " << out_dir;
    fs::remove_all(out_dir);
  }
  fs::remove_all(dir);
}
