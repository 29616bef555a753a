#include "doctor/layers_check.h"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <ctime>

#include "base/strings.h"
#include "env/layer.h"

namespace berth::doctor {

namespace {

constexpr char kSection[] = "layers";

// UTC to the second, as `berth env ls` shows it.
std::string WallTime(int64_t ms) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(ms / 1000)));
}

std::string Describe(const env::Layer& layer) {
  const env::LayerMeta& m = layer.meta;
  const size_t users = env::LayerUsers(layer).size();
  return fmt::format(
      "{} from {} in {:.1f}s, {}, {} job(s) used it",
      m.built_at_ms > 0 ? "built " + WallTime(m.built_at_ms) : "built at an unknown time",
      m.commit.substr(0, 12), static_cast<double>(m.duration_ms) / 1000, FormatBytes(m.size_bytes),
      users);
}

}  // namespace

void CheckLayers(const Inputs& in, std::vector<Item>* items) {
  Result<env::LayerListing> listing = env::ListLayers(in.state_dir);
  if (!listing) {
    items->push_back({kSection, "state", ItemStatus::kUnknown, listing.error().ToString(),
                      listing.error().hint()});
    return;
  }
  const EnvironmentProbe& probe = in.environment;
  if (probe.in_repository && probe.has_environment) {
    if (!probe.problem.empty()) {
      items->push_back({kSection, "this repository", ItemStatus::kUnknown,
                        "HEAD's environment key: " + probe.problem,
                        "fix the [environment] table (berth policy check)"});
    } else {
      bool built = false;
      for (const env::Layer& layer : listing->layers) built = built || layer.key == probe.key;
      items->push_back(
          {kSection, "this repository", built ? ItemStatus::kOk : ItemStatus::kMissing,
           "HEAD " + probe.head.substr(0, 12) + " has key " + probe.key.substr(0, 12) +
               (built ? ", built" : ", not built yet: the first job builds it and waits"),
           built ? "" : "prebuild it with `berth env build`"});
    }
  }
  for (const env::Layer& layer : listing->layers)
    items->push_back({kSection, layer.key.substr(0, 12), ItemStatus::kOk, Describe(layer), ""});
  for (const std::string& problem : listing->problems)
    items->push_back({kSection, "unreadable", ItemStatus::kUnknown, problem,
                      "remove it with `berth env rm KEY`"});
  if (listing->layers.empty() && listing->problems.empty() &&
      !(probe.in_repository && probe.has_environment))
    items->push_back({kSection, "layers", ItemStatus::kOk, "none built", ""});
}

}  // namespace berth::doctor
