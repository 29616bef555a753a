// Submitting a job: resolve the policy, the agent, the base and the prompt; record the job.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"
#include "job/context.h"
#include "job/run_request.h"
#include "job/uncommitted_check.h"
#include "store/store.h"

namespace berth::job {

struct LaneAgent;  // job/lane_submit.h

struct SubmitOptions {
  std::string agent;
  std::optional<std::string> prompt_text;
  std::optional<std::string> prompt_file;
  std::string base = "HEAD";
  bool with_uncommitted = false;
  std::optional<std::string> timeout;
  std::vector<std::string> grants;
  std::vector<std::string> command;  // after `--`: overrides the command provider's argv
  // Run as a read agent whatever the policy says; the command line may lower a capability,
  // never raise it. Also the only way to run without a valid policy.
  bool read_only = false;
  // --full-access: run an agent whose policy says access = "full" with the host as the user
  // (job/full_access.h). BERTH_FULL_ACCESS=1 in berth's environment asks the same.
  bool full_access = false;
  // Set by `berth lane`: the agent comes from its flags within the policy (job/lane_submit.h),
  // and `agent` is kLaneAgentName.
  const LaneAgent* lane = nullptr;
  // --queue: the job goes to the shared queue for `berth worker` (docs/workers.md) instead of
  // running here. `source` is where workers get the repository (a git URL, or a path they all
  // can read); "" for this repository's own path.
  bool queue = false;
  std::string source;
  // `berth run` without --queue or --here: the policy's [defaults] run_on decides; "workers"
  // needs a shared store (PostgreSQL). Other callers (mcp, lane) run their jobs here.
  bool placement_by_policy = false;
  // --no-wait: fail at once when no slot is free here; refused for a job for workers.
  bool no_wait = false;
  // Where Submit leaves the check of the uncommitted changes the job will not see, started
  // beside the job once it is recorded (without --with-uncommitted); nullptr for callers with
  // nobody to tell.
  std::unique_ptr<UncommittedCheck>* uncommitted = nullptr;
};

// The largest prompt a queued job carries in its request.
inline constexpr size_t kMaxQueuedPromptBytes = 1u << 20;

// The job commit's author: the user's identity as git resolves it for `repo` (its config, the
// global and system files; GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL of `ctx.environ` over them, as
// for git commit) into `request`'s author_name and author_email. None, or one git would not
// take, leaves them as they were: the commit is then berth's, and the job says so.
void ResolveAuthor(const JobContext& ctx, git::Repository& repo, RunRequest* request);

// Refuses to start a job from inside a job beyond the policy's max_depth (the job's
// environment carries BERTH_JOB_ID and BERTH_JOB_DEPTH). Cheap: called before anything else.
Status CheckNesting(const JobContext& ctx);

// Creates the job in state `queued` and returns it; `accepted`, when given, receives the
// request as recorded, so that the caller reads it without parsing the record's JSON again.
// Errors carry the cause that maps to the exit code: kPolicyDenied (78), kInvalidArgument
// (64), kNotFound (64).
Result<store::JobRecord> Submit(const JobContext& ctx, store::Store& store,
                                const SubmitOptions& options, RunRequest* accepted = nullptr);
// The same, asking `store` for the store only once the job is ready to be recorded: a caller
// may still be opening it meanwhile (job/store_opening.h).
using StoreSource = std::function<Result<store::Store*>()>;
Result<store::JobRecord> Submit(const JobContext& ctx, const StoreSource& store,
                                const SubmitOptions& options, RunRequest* accepted = nullptr);

}  // namespace berth::job
