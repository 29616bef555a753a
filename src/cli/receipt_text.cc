#include "cli/receipt_text.h"

#include <fmt/format.h>

#include "base/quote.h"
#include "git/repository.h"
#include "job/recollect.h"

namespace berth::cli {

std::vector<std::string> SkippedIncludeLines(const job::Receipt& receipt) {
  std::vector<std::string> lines;
  for (const auto& [path, reason] : receipt.skipped_includes)
    lines.push_back("skipped [include] " + QuotePath(path) + ": " + EscapeControls(reason));
  return lines;
}

std::vector<std::string> ApprovalLines(const job::Receipt& receipt) {
  std::vector<std::string> lines;
  for (const job::ApprovalRecord& a : receipt.approvals)
    lines.push_back(EscapeControls(a.answer + " (" + a.rule + ") " + a.kind + ": " + a.asked));
  return lines;
}

std::vector<std::string> ChangedFileLines(const store::JobRecord& job,
                                          const job::Receipt& receipt) {
  std::vector<std::string> lines;
  if (receipt.changes.empty()) return lines;
  Result<git::Repository> repo = git::Repository::Discover(job.repo);
  // The commit holds exactly the receipt's changes on the base: git tells them apart.
  if (repo && job.commit && !job.base.empty()) {
    Result<std::vector<git::FileDiff>> files = repo->DiffFiles(job.base, *job.commit);
    if (files && !files->empty()) {
      for (const git::FileDiff& f : *files)
        lines.push_back(f.status == 'R' ? "R " + QuotePath(f.old_path) + " -> " + QuotePath(f.path)
                                        : std::string(1, f.status) + " " + QuotePath(f.path));
      return lines;
    }
  }
  for (const job::ReceiptChange& c : receipt.changes) {
    char letter = 'D';
    if (c.kind != "delete") {
      letter = '?';
      if (repo && !job.base.empty())
        if (Result<std::optional<git::TreeEntry>> in_base = repo->FindEntry(job.base, c.path))
          letter = *in_base ? 'M' : 'A';
    }
    lines.push_back(std::string(1, letter) + " " + QuotePath(c.path));
  }
  return lines;
}

std::vector<std::string> ReceiptChangeLines(const store::JobRecord& job,
                                            const job::Receipt& receipt) {
  std::vector<std::string> lines = ChangedFileLines(job, receipt);
  for (const auto& [path, reason] : receipt.refusals)
    lines.push_back("refused " + QuotePath(path) + ": " + EscapeControls(reason));
  for (const std::string& path : receipt.ignored_paths)
    lines.push_back("ignored " + QuotePath(path) + " (not committed)");
  if (receipt.ignored > receipt.ignored_paths.size())
    lines.push_back("ignored " + std::to_string(receipt.ignored - receipt.ignored_paths.size()) +
                    " more path(s)");
  for (const auto& [path, reason] : receipt.empty_submodules)
    lines.push_back("submodule " + QuotePath(path) +
                    " was an empty directory: " + EscapeControls(reason));
  for (const std::string& path : receipt.lfs_missing)
    lines.push_back("lfs " + QuotePath(path) +
                    " was a pointer: its content is not in the local LFS store");
  if (receipt.lfs_missing_count > receipt.lfs_missing.size())
    lines.push_back("lfs " +
                    std::to_string(receipt.lfs_missing_count - receipt.lfs_missing.size()) +
                    " more pointer(s)");
  for (std::string& line : SkippedIncludeLines(receipt)) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> CheckLines(const job::Verification& v) {
  std::vector<std::string> lines;
  for (const job::CheckResult& c : v.checks)
    lines.push_back(
        EscapeControls(fmt::format("{} {:<16} {:>8} ms  {}{}", c.passed ? "ok  " : "FAIL", c.name,
                                   c.duration_ms, c.reason, c.required ? "" : " (optional)")));
  return lines;
}

std::string NextLine(const store::JobRecord& job, const std::optional<job::Receipt>& receipt) {
  if (job.landed_commit) return "";
  const std::optional<job::Verification> v =
      receipt ? receipt->verification : std::optional<job::Verification>();
  switch (job.state) {
    case store::JobState::kCompleted:
      if (!job.commit) return "";
      if (!v || v->checks.empty())
        return "berth diff " + job.id + ", then berth land " + job.id +
               " (no check ran: it lands only with [landing] allow_unverified = true)";
      return "berth diff " + job.id + ", then berth land " + job.id;
    case store::JobState::kVerificationFailed: {
      if (!job.commit) break;
      if (v && v->required_passed)  // re-verified since
        return "berth diff " + job.id + ", then berth land " + job.id;
      std::string failed;
      if (v)
        for (const job::CheckResult& c : v->checks)
          if (c.required && !c.passed && !c.log.empty()) {
            failed = c.name;
            break;
          }
      return (failed.empty() ? "berth logs " + job.id
                             : "berth logs " + job.id + " --check " + QuotePath(failed)) +
             ", then berth verify " + job.id + " (berth land " + job.id + " once it passes)";
    }
    case store::JobState::kRefused:
      return "berth diff " + job.id + ", then widen the policy's writable globs and berth " +
             "recollect " + job.id;
    default:
      // Ended before its work was committed (a killed supervisor, a store that refused its
      // writes): what the agent did is still in its workspace.
      if (job::HasKeptWorkspace(job))
        return "berth logs " + job.id + ", berth diff " + job.id +
               " (its kept workspace), then berth recollect " + job.id + " to commit it";
      break;
  }
  return "berth logs " + job.id;
}

}  // namespace berth::cli
