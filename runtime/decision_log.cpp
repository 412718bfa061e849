#include "runtime/decision_log.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <system_error>

#include "runtime/logging.hpp"
#include "runtime/sites.hpp"
#include "veda/error.hpp"

namespace veda::detail {
namespace {
constexpr const char* kHeader = "# veda decision record v1: op-class<TAB>n<TAB>tier<TAB>site";

// Site names are user text: keep each record on one line.
std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '\\') o += "\\\\";
    else if (c == '\n') o += "\\n";
    else if (c == '\t') o += "\\t";
    else o += c;
  }
  return o;
}

std::string unescape(const std::string& s) {
  std::string o;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      o += s[i];
      continue;
    }
    const char c = s[++i];
    o += c == 'n' ? '\n' : c == 't' ? '\t' : c;
  }
  return o;
}
}  // namespace

DecisionRecorder::DecisionRecorder(const std::string& path, const std::string& field) : path_(path) {
  std::string why;
  if (!out_.open(path, why)) throw ConfigError(field, path, "cannot create the decision record: " + why);
  if (!out_.write(kHeader) || !out_.write("\n") || !out_.flush())
    throw ConfigError(field, path, "cannot write the decision record: " + out_.error());
}

DecisionRecorder::~DecisionRecorder() {
  std::lock_guard lock(mu_);
  if (!out_.close()) report_failure();
}

void DecisionRecorder::report_failure() {
  if (reported_) return;
  reported_ = true;
  log().error("could not write the decision record to {}: {}; the record is incomplete", path_, out_.error());
}

void DecisionRecorder::add(const Site& site, std::size_t n, Tier tier) {
  std::lock_guard lock(mu_);
  const std::string line = std::to_string(static_cast<int>(site.op())) + '\t' + std::to_string(n) + '\t' +
                           tier_name(tier) + '\t' + escape(site.name()) + '\n';
  bool ok = out_.write(line);
  ++count_;
  if (ok && (count_ & 1023) == 0) ok = out_.flush();  // a crashed run still leaves most of its record
  if (!ok) report_failure();
}

DecisionReplay::DecisionReplay(const std::string& path, const std::string& field) : path_(path) {
  const FileText f = read_file(path, kRecordMaxBytes);
  if (!f.ok) throw ConfigError(field, path, "cannot read the decision record: " + f.error);
  parse(f.text, field);
}

DecisionReplay::DecisionReplay(FromText, std::string_view text, const std::string& path, const std::string& field)
    : path_(path) {
  parse(text, field);
}

void DecisionReplay::parse(std::string_view text, const std::string& field) {
  const std::string& path = path_;
  std::size_t pos = 0;
  // The next line without its '\n' (getline's rule: a last line needs none).
  auto next_line = [&](std::string& line) {
    if (pos >= text.size()) return false;
    const std::size_t nl = std::min(text.find('\n', pos), text.size());
    line.assign(text.substr(pos, nl - pos));
    pos = nl + 1;
    return true;
  };
  std::string line;
  if (!next_line(line) || line != kHeader)
    throw ConfigError(field, path, "not a veda decision record (the first line must be '" + std::string(kHeader) + "')");
  for (std::size_t no = 2; next_line(line); ++no) {
    auto bad = [&](const char* why) {
      throw ConfigError(field, path, "line " + std::to_string(no) + ": " + why + ": '" + line.substr(0, 80) + "'");
    };
    std::size_t t[3], at = 0;
    for (auto& p : t) {
      p = line.find('\t', at);
      if (p == std::string::npos) bad("expected four tab-separated fields");
      at = p + 1;
    }
    int op = -1;
    std::size_t n = 0;
    const char* b = line.data();
    const auto op_read = std::from_chars(b, b + t[0], op);
    if (op_read.ec != std::errc() || op_read.ptr != b + t[0] || op < 0 || op > static_cast<int>(OpClass::Attention))
      bad("bad op class");
    // .ec too: a size that overflows is an error, not 0.
    const auto n_read = std::from_chars(b + t[0] + 1, b + t[1], n);
    if (n_read.ec == std::errc::result_out_of_range) bad("size out of range");
    if (n_read.ec != std::errc() || n_read.ptr != b + t[1] || t[1] == t[0] + 1) bad("bad size");
    Tier tier;
    try {
      tier = parse_tier(line.substr(t[1] + 1, t[2] - t[1] - 1));
    } catch (const InvalidArgument&) {
      bad("unknown tier");
    }
    if (tier == Tier::Count) bad("empty tier");
    sites_[{op, unescape(line.substr(t[2] + 1))}].calls.push_back({n, tier});
  }
}

Tier DecisionReplay::next(const Site& site, std::size_t n) {
  std::lock_guard lock(mu_);
  const auto it = sites_.find({static_cast<int>(site.op()), site.name()});
  const std::string where = "veda replay (" + path_ + "): site '" + site.name() + "'";
  if (it == sites_.end()) throw ReplayMismatch(where + " is not in the record: it comes from another program");
  Queue& q = it->second;
  const std::size_t k = q.taken + 1;
  if (q.taken == q.calls.size())
    throw ReplayMismatch(where + ": this is call " + std::to_string(k) + ", the record has " +
                         std::to_string(q.calls.size()));
  const Entry& e = q.calls[q.taken];
  if (e.n != n)
    throw ReplayMismatch(where + ", call " + std::to_string(k) + ": the record has " + std::to_string(e.n) +
                         " elements, this call " + std::to_string(n));
  // Checked here, not left to the forced-tier path (an InvalidArgument that
  // would blame the caller): the record, not the call, is wrong.
  if (!(site.tiers() & tier_bit(e.tier)))
    throw ReplayMismatch(where + ", call " + std::to_string(k) + ": the record has tier '" + tier_name(e.tier) +
                         "', which this site does not offer: it comes from another program");
  ++q.taken;
  return e.tier;
}

std::uint64_t DecisionReplay::remaining() const {
  std::lock_guard lock(mu_);
  std::uint64_t r = 0;
  for (const auto& [key, q] : sites_) r += q.calls.size() - q.taken;
  return r;
}

}  // namespace veda::detail
