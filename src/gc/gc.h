// Garbage collection of finished jobs (`berth gc`): workspaces, job branches, snapshot
// registrations, snapshots nobody uses, orphans, and supervisors that outlived their job.
//
// PRODUCT.md invariant 8 decides what may go: only jobs that were landed (landed_at_ms set)
// or explicitly discarded (an audit entry with action "discard") lose their job directory
// and branch; everything else is kept and reported with the reason. A job branch is deleted
// only while it still points at the job's recorded commit. Store records and audit entries
// are never deleted. See docs/gc.md.
//
// Not thread-safe; one call uses the given store and opens the repositories it needs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/store.h"

namespace berth::gc {

enum class GcMode { kApply, kDryRun };

struct GcOptions {
  GcMode mode = GcMode::kApply;
  // Only jobs that ended more than this long ago are removed (orphans have no end time).
  std::optional<int64_t> older_than_ms;
  // Job ids or unique prefixes to discard (terminal jobs only); also an orphan job directory's
  // name or an orphan branch's name.
  std::vector<std::string> discard;
  std::string user;     // who discards, for the audit entry
  int64_t now_ms = 0;   // wall clock
  int grace_ms = 3000;  // SIGTERM to SIGKILL for leftover supervisors
  // A supervisor may still write its receipt just after its job turned terminal; only one
  // still running this long after the job ended is a leftover.
  int64_t leftover_after_ms = 30000;
  // `berth worker`'s own collection: only its attempt directories (below) and the snapshots
  // they registered, never a job branch, a job directory of this host's own jobs, an orphan
  // or a supervisor. See docs/gc.md.
  bool attempts_only = false;
};

// Why a job's workspace stays, in kinds a summary can count: it is live (or in a state this
// berth does not know), its work is neither landed nor discarded, or it is landed or
// discarded but ended within --older-than. kNone for a removed job.
enum class KeptFor { kNone, kLive, kUnlanded, kRecent };

struct GcJob {
  std::string id;
  std::string why;  // removed: "landed" / "discarded"; kept: the reason
  KeptFor kept_for = KeptFor::kNone;
  std::string job_dir;
  bool dir_removed = false;
  std::string repo;
  std::string branch;
  bool branch_removed = false;
  std::vector<std::string> snapshots_unregistered;  // commits
  uint64_t bytes = 0;
};

struct GcBranch {
  std::string repo;
  std::string branch;
  std::string commit;
  std::string why;
};

struct GcOrphan {
  std::string kind;    // "job-dir" or "branch"
  std::string repo;    // branches only
  std::string name;    // the directory's path, or the branch
  std::string commit;  // branches only
  bool removed = false;
  std::string why;
  uint64_t bytes = 0;
};

struct GcKill {
  std::string id;
  int64_t pid = 0;
  std::string how;  // "SIGTERM", "SIGKILL", "gone", or the error
};

struct GcReport {
  bool dry_run = false;
  std::vector<std::string> discarded;  // audit entries written (or that would be)
  std::vector<GcKill> killed;
  std::vector<GcJob> removed;                  // jobs whose directory, branch or registration went
  std::vector<GcJob> kept;                     // jobs with something on disk that stays, and why
  std::vector<GcBranch> kept_branches;         // job branches that moved since the job committed
  std::vector<std::string> removed_snapshots;  // commits
  std::vector<std::string> removed_layers;     // environment layer keys (docs/environments.md)
  std::vector<GcOrphan> orphans;
  std::vector<std::string> warnings;  // things that could not be checked or removed
  uint64_t freed_bytes = 0;
};

// Runs the whole collection. Fails before changing anything when a --discard argument names
// a live job, matches nothing, or is ambiguous; later problems become report warnings.
Result<GcReport> CollectGarbage(store::Store& store, const std::string& state_dir,
                                const GcOptions& options);

nlohmann::json GcReportToJson(const GcReport& report);

}  // namespace berth::gc
