#include "provider/model_check.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <vector>

namespace berth::provider {

namespace {

std::string Normalize(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* prefix : {"models/", "anthropic/", "openai/", "google/", "xai/"})
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
  return name;
}

std::vector<std::string> Tokens(const std::string& name) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= name.size()) {
    size_t dash = name.find('-', pos);
    if (dash == std::string::npos) dash = name.size();
    out.push_back(name.substr(pos, dash - pos));
    pos = dash + 1;
  }
  return out;
}

bool IsDigits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// What may follow a model's name in a snapshot of the same model: dates and build numbers,
// "preview", "exp", "latest".
bool IsSnapshotSuffix(const std::vector<std::string>& tokens, size_t from) {
  for (size_t i = from; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (!IsDigits(t) && t != "preview" && t != "exp" && t != "latest") return false;
  }
  return true;
}

// Size or speed variants: a different model, never the same one.
bool IsVariant(const std::string& token) {
  static const char* kVariants[] = {"mini", "nano", "lite", "micro", "small", "fast"};
  return std::any_of(std::begin(kVariants), std::end(kVariants),
                     [&](const char* v) { return token == v; });
}

}  // namespace

bool ModelMatches(const std::string& requested_raw, const std::string& reported_raw) {
  const std::string requested = Normalize(requested_raw);
  const std::string reported = Normalize(reported_raw);
  if (requested.empty() || reported.empty()) return false;
  if (requested == reported) return true;
  std::vector<std::string> want = Tokens(requested);
  if (want.size() > 1 && want.back() == "latest") want.pop_back();
  const std::vector<std::string> got = Tokens(reported);
  // A snapshot: the requested tokens, then only dates, build numbers or preview markers.
  if (got.size() >= want.size() && std::equal(want.begin(), want.end(), got.begin()) &&
      IsSnapshotSuffix(got, want.size()))
    return true;
  // A rolling alias of one or two tokens ("sonnet", "opus", "pro", "flash-lite"): a concrete
  // model whose name holds those tokens in order, not followed by a variant marker.
  if (want.size() <= 2 && std::none_of(want.begin(), want.end(), IsDigits)) {
    for (size_t i = 0; i + want.size() <= got.size(); ++i) {
      if (!std::equal(want.begin(), want.end(), got.begin() + static_cast<long>(i))) continue;
      size_t next = i + want.size();
      if (next < got.size() && IsVariant(got[next])) continue;
      return true;
    }
  }
  return false;
}

ModelCheck CheckModel(const Provider& provider, const std::string& requested,
                      const std::string& reported) {
  ModelCheck check;
  check.requested = requested;
  check.reported = reported;
  if (!reported.empty()) {
    check.evidence = "reported";
    if (!requested.empty() && !ModelMatches(requested, reported)) {
      check.ok = false;
      check.reason = "the job asked for model " + requested + " but " + provider.name +
                     " reported " + reported;
    }
    return check;
  }
  if (requested.empty()) {
    check.evidence = "cli-default";
    return check;
  }
  if (!provider.reports_model) {
    check.evidence = "pinned-argv";
    return check;
  }
  check.evidence = "missing";
  check.ok = false;
  check.reason =
      provider.name + " did not report which model it used (asked for " + requested + ")";
  return check;
}

nlohmann::json ModelCheck::ToJson() const {
  nlohmann::json j = {{"evidence", evidence}, {"ok", ok}};
  j["requested"] = requested.empty() ? nlohmann::json(nullptr) : nlohmann::json(requested);
  j["reported"] = reported.empty() ? nlohmann::json(nullptr) : nlohmann::json(reported);
  if (!reason.empty()) j["reason"] = reason;
  return j;
}

}  // namespace berth::provider
