// The work of a job that ended without a commit, seen and collected again (docs/verification.md
// "Refused jobs").
//
// A refused job commits nothing, but its workspace is kept in its job directory; so is that of
// a job that failed, went stale or was cancelled before its work was committed (its supervisor
// killed, the job store refusing its writes). `berth diff` collects that workspace with every
// path allowed and shows the patch; `berth recollect` collects it under the policy as it is
// now and, when nothing is refused any more, records the result as a new job: committed on its
// own branch, verified by the current policy's checks, and landable like any job.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"
#include "job/context.h"
#include "job/run_request.h"
#include "policy/glob.h"
#include "store/store.h"
#include "workspace/workspace.h"

namespace berth::job {

// Drops from `changes` what is never the job's: files the provider's CLI writes for itself,
// and the environment's paths (its layer's, whatever the agent wrote there).
void DropNonJobPaths(const RunRequest& request, workspace::ChangeSet* changes);

// Whether `job` ended without a commit after its workspace was made, so that its agent's work,
// if any, is only in its kept workspace: refused, failed, stale, cancelled, timed out...
// (a completed job without a commit changed nothing).
bool MayHoldKeptWork(const store::JobRecord& job);
// MayHoldKeptWork, and its workspace is still there (no `berth gc` removed it).
bool HasKeptWorkspace(const store::JobRecord& job);

// Collects the kept workspace of `job` (an ended job without a commit) against its base under
// `writable`, as the job's own collection did. kNotFound when the workspace is gone.
Result<workspace::ChangeSet> CollectKept(const store::JobRecord& job, const RunRequest& request,
                                         git::Repository& repo, const policy::GlobSet& writable);

// Every change the kept workspace of `job` holds, whatever the writable globs say, written as
// a commit on the job's base that no ref names (git's gc prunes it): what `berth diff` shows of
// a job MayHoldKeptWork says may have some. `refusals` receives what no policy could commit
// (symlinks leaving the workspace, special files, paths under .git or .berth).
Result<std::string> KeptChangesCommit(const store::JobRecord& job, git::Repository& repo,
                                      std::vector<workspace::Refusal>* refusals);

struct Recollected {
  // The new job, when nothing was refused; its state says how its verification went.
  std::optional<store::JobRecord> job;
  std::vector<workspace::Refusal> refusals;  // what the current policy still refuses
};

// `berth recollect`: collects the kept workspace of `refused` (a job MayHoldKeptWork accepts,
// refused or not) under the
// writable globs its agent has in the policy as it is now. When something is still refused,
// nothing is recorded and `refusals` says what. Otherwise a new job is recorded, ended
// (`completed` or `verification-failed`), with the commit on its own branch, the current
// policy's checks run on it, `recollected_from` in its receipt, and a `recollect` audit entry
// on both jobs. `on_event(step, detail)` reports the checks.
Result<Recollected> Recollect(
    const JobContext& ctx, store::Store& store, const store::JobRecord& refused,
    const std::function<void(const std::string&, const std::string&)>& on_event);

}  // namespace berth::job
