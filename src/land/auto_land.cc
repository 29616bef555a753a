// The runner's auto-land, given to it through job::JobContext::auto_land.
#include "land/land.h"

namespace berth::land {

std::string AutoLand(const job::JobContext& ctx, store::Store& store, const store::JobRecord& job) {
  LandOptions options;
  options.authorised_by = kAutoLand;
  Result<LandResult> landed = Land(ctx, store, job, options);
  if (!landed) return "auto-land failed: " + landed.error().ToString();
  if (landed->refused()) return "auto-land refused: " + landed->refused_reason;
  return "auto-landed on " + landed->target + " as " + landed->new_commit.substr(0, 12);
}

}  // namespace berth::land
