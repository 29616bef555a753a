// Landing (PRODUCT.md §8, invariant 9; docs/landing.md): applying a completed job's commit to a
// branch of the user's repository as one new commit, or changing nothing.
//
// Land() checks the job (completed, verified, not landed, branch where it was recorded, the
// policy it ran under), cherry-picks the job commit onto the target's head in memory, and then
// either moves the target ref with a compare-and-set (target not checked out) or applies the
// commit to the checkout that has it (journal, index, files, ref, under crash recovery).
// Lands into one repository are serialized by an exclusive flock on
// <common git dir>/berth-land.lock. Not thread-safe; safe between processes.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"
#include "job/context.h"
#include "store/job_record.h"
#include "store/store.h"

namespace berth::land {

// The steps of applying to a checkout, in order; a crash after any of them is recoverable.
enum class LandStep { kJournalWritten, kIndexWritten, kFilesWritten, kRefMoved };
const char* LandStepName(LandStep step);
std::optional<LandStep> ParseLandStep(const std::string& name);

// LandOptions::authorised_by of the runner's automatic land.
inline constexpr char kAutoLand[] = "auto-land";

struct LandOptions {
  std::string onto;  // target branch; "" = policy's [landing] target, else the current branch
  bool dry_run = false;
  bool reverify = false;
  std::string authorised_by;  // "berth land by <user>" or "auto-land"
  // Called after each step of applying to a checkout; returning false stops there as if the
  // process had died (tests). Unset: run every step. BERTH_TEST_LAND_PAUSE=<step> in the
  // context's environment stops the process (SIGSTOP) after that step.
  std::function<bool(LandStep)> after_step;
  // Reports progress of a re-verification (step, detail).
  std::function<void(const std::string&, const std::string&)> on_event;
};

struct LandResult {
  std::string job;
  std::string target;
  std::string old_head;
  std::string new_commit;  // "" unless landed
  bool landed = false;
  bool dry_run = false;
  bool checked_out = false;        // the target was checked out in a worktree
  std::vector<std::string> paths;  // paths the land changes on the target
  std::vector<std::string> conflicts;
  std::vector<std::string> dirty;  // touched paths with uncommitted changes in the checkout
  std::string refused_reason;      // "" unless refused
  // The format ("openpgp", "ssh", "x509") the landed commit is signed in, as the user's
  // commit.gpgsign asks; "" when signing is off.
  std::string signed_format;

  bool refused() const { return !refused_reason.empty(); }
  nlohmann::json ToJson() const;
};

// Lands `job` (see the file comment). A refusal is a LandResult with refused_reason; an Error
// means landing could not be attempted or an operation failed (nothing half-applied remains:
// the journal is rolled back or forward).
Result<LandResult> Land(const job::JobContext& ctx, store::Store& store,
                        const store::JobRecord& job, const LandOptions& options);

// What berth-land.json in a worktree's git dir records while a land is applied to it.
struct LandJournal {
  std::string job;
  std::string ref;         // full name, refs/heads/<branch>
  std::string old_commit;  // the target's head before
  std::string new_commit;  // the landed commit
  std::vector<std::string> paths;
  std::string authorised_by;  // for the records a recovery writes ("" in older journals)

  nlohmann::json ToJson() const;
  static Result<LandJournal> FromJson(const std::string& text);
};

std::string LandJournalPath(const git::Repository& repo);

// Applies `journal` to `repo`'s checkout: writes the journal (fsync), the index entries of the
// paths, the files, moves the ref (compare-and-set old -> new), calls `record` (the store's
// records of the land; unset: nothing), deletes the journal. The journal outlives the ref
// update until the land is recorded, so that a crash in between is finished by recovery.
// Returns false when the ref had moved (everything rolled back) or `after_step` stopped it;
// an error of `record` leaves the journal for recovery. The caller holds the land lock.
Result<bool> ApplyToCheckout(git::Repository& repo, const LandJournal& journal,
                             const std::function<bool(LandStep)>& after_step,
                             const std::function<Status()>& record = nullptr);

// What recovery found and did.
enum class Recovery { kNothing, kRolledForward, kRolledBack };

// If `repo`'s git dir holds a land journal: ref at the new commit -> the listed paths' index
// entries and files are made to match the new tree (roll forward); ref at the old commit ->
// the old tree (roll back); the journal is then deleted. A ref at neither is an error and the
// journal stays. Takes the land lock itself unless `lock_held`. `recovered`, when given,
// receives the journal that was acted on.
enum class LockHeld { kNo, kYes };
Result<Recovery> RecoverPendingLand(git::Repository& repo, LockHeld lock_held = LockHeld::kNo,
                                    LandJournal* recovered = nullptr);

// RecoverPendingLand in every worktree of `repo`'s repository (the caller holds the land
// lock), and for a land that rolled forward, the records the interrupted land did not write:
// MarkLanded, the audit entry and the receipt's landing (docs/landing.md, Recovery).
Status RecoverInterruptedLands(store::Store& store, git::Repository& repo);

// The runner's auto-land (job::JobContext::auto_land): lands `job` as kAutoLand and returns the
// detail of the job's "land" event (landed, refused and why, or failed and why).
std::string AutoLand(const job::JobContext& ctx, store::Store& store, const store::JobRecord& job);

// The message of a landed commit: `message` ending with the line "Berth-Job: <id>".
std::string LandedMessage(const std::string& message, const std::string& job_id);

}  // namespace berth::land
