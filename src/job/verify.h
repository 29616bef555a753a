// Verification (PRODUCT.md §8): the policy's checks, run in order on exactly the tree of the
// job commit, in the sandbox, with no network and no credential-shaped variables.
//
// The job commit is materialised as its own snapshot and mounted as the lower layer of a
// fresh overlay, shared by the checks of one verification (so a build check's outputs feed a
// test check) and discarded afterwards: files the agent left uncommitted are never seen, and
// nothing a check writes changes the job's result.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "git/repository.h"
#include "job/context.h"
#include "job/limit_record.h"
#include "job/run_request.h"
#include "sandbox/spec.h"
#include "store/job_record.h"

namespace berth::job {

struct CheckResult {
  std::string name;
  std::vector<std::string> argv;
  bool required = true;
  int expect_exit = 0;
  std::optional<int> exit;
  std::optional<int> signal;
  bool timed_out = false;
  bool over_output_limit = false;
  int64_t duration_ms = 0;
  bool passed = false;
  std::string reason;       // why it failed, or "exited 0 as expected"
  std::string output_tail;  // the last few KiB of its output, secrets masked
  // Its whole output as captured (masked, bounded by the job's output_limit like the agent's
  // stdout), relative to the job dir: "checks/<verification>/<index>.log"; "" when none was
  // kept (a check not run, or a receipt written before logs were kept).
  std::string log;
  uint64_t output_bytes = 0;        // everything it wrote, before masking and bounding
  std::vector<LimitRecord> limits;  // what the sandbox applied (no `source`)

  // The codec of one entry of a receipt's `verification.checks` (docs/receipt.md).
  nlohmann::json ToJson() const;
  static Result<CheckResult> FromJson(const nlohmann::json& json, const std::string& where);
  bool operator==(const CheckResult&) const = default;
};

struct Verification {
  std::vector<CheckResult> checks;
  bool required_passed = true;  // every required check passed
  std::string started_at;
  std::string commit;
  std::string policy_sha256;
  // A re-verification (`berth verify`, `land --reverify`): the OS user who ran it and the
  // command. Both "" for the job's own verification.
  std::string by;
  std::string via;

  // The codec of a receipt's `verification` and of each entry of `verification_history`.
  nlohmann::json ToJson() const;
  static Result<Verification> FromJson(const nlohmann::json& json, const std::string& where);
  bool operator==(const Verification&) const = default;
  // "5 check(s) passed", or "3 of 5 check(s) passed; optional check(s) failed: lint, docs".
  std::string Summary() const;
};

// Names and values that must never reach a check (docs/verification.md): names ending in
// TOKEN(S), KEY(S), SECRET(S), PASSWORD, PASSWD, CREDENTIAL(S), SESSION, COOKIE, PAT, AUTH, or
// starting with a cloud or forge prefix; values that are URLs carrying a password.
bool IsCredentialShaped(const std::string& name, const std::string& value);

// Removes every credential-shaped variable from a check's environment, except the variables
// its `cache:` grants set (confine::IsCacheGrantVariable): a grant's own variable is never a
// credential, while a same-named value the caller passed or set is dropped before it gets here.
void DropCredentialShaped(sandbox::SandboxSpec* spec);

// The kept log of the check named `name` in `v`, as a path under `job_dir`; nullopt when there
// is no such check or it kept no log.
std::optional<std::string> CheckLogPath(const std::string& job_dir, const Verification& v,
                                        const std::string& name);

// Runs `request.checks` on `commit`. `on_event(step, detail)` reports each check starting
// and ending. With `budget_ms` (what is left of the job's deadline) no check runs past it:
// each gets the smaller of its own timeout and what is left, and once nothing is left the
// rest fail unrun, timed out. Errors only when verification could not be set up at all.
Result<Verification> RunChecks(
    const JobContext& ctx, const RunRequest& request, const store::JobRecord& job,
    const std::string& commit, git::Repository& repo,
    const std::function<void(const std::string&, const std::string&)>& on_event,
    std::optional<int64_t> budget_ms = std::nullopt);

}  // namespace berth::job
