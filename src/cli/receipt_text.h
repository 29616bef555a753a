// The lines that `berth run`, `berth show` and `berth diff` print about a receipt's changes:
// every path quoted (QuotePath), every reason escaped (EscapeControls), because both come from
// the agent.
#pragma once

#include <string>
#include <vector>

#include "job/receipt.h"
#include "store/job_record.h"

namespace berth::cli {

// The files `job` changed, one line each, lettered as `git diff --name-status` letters them:
// "A PATH" added, "M PATH" modified, "D PATH" deleted, "R OLD -> NEW" renamed, "T PATH" type
// changed (docs/cli.md "Changed files"). A job with a commit: git's diff of its base and
// commit, renames paired. Without one (refused, failed): the receipt's changes, a delete as D
// and an upsert as M when its path is in the base's tree, else A (renames are not paired);
// "?" when the repository cannot be read to tell.
std::vector<std::string> ChangedFileLines(const store::JobRecord& job, const job::Receipt& receipt);
// ChangedFileLines, then "refused PATH: REASON" per refusal and "skipped [include] PATH:
// REASON" per [include] path the workspace did not copy, in that order.
std::vector<std::string> ReceiptChangeLines(const store::JobRecord& job,
                                            const job::Receipt& receipt);
// "accept|decline (RULE) KIND: ASKED" per approval request, in order, each escaped (what was
// asked comes from the agent).
std::vector<std::string> ApprovalLines(const job::Receipt& receipt);
// "ok   NAME  DURATION  REASON" / "FAIL NAME ..." per check of `v`, "(optional)" marked, each
// escaped (a check's name comes from the policy, its reason from its exit).
std::vector<std::string> CheckLines(const job::Verification& v);
// What to run next after `job` ended, only commands that can succeed for its outcome; "" when
// there is nothing to do (no changes, or landed).
std::string NextLine(const store::JobRecord& job, const std::optional<job::Receipt>& receipt);
// Only the "skipped [include]" lines.
std::vector<std::string> SkippedIncludeLines(const job::Receipt& receipt);

}  // namespace berth::cli
