#include "cli/receipt_text.h"

#include "base/quote.h"

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

std::vector<std::string> ReceiptChangeLines(const job::Receipt& receipt) {
  std::vector<std::string> lines;
  for (const job::ReceiptChange& f : receipt.changes)
    lines.push_back(std::string(f.kind == "delete" ? "- " : "+ ") + QuotePath(f.path));
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
  for (std::string& line : SkippedIncludeLines(receipt)) lines.push_back(std::move(line));
  return lines;
}

}  // namespace berth::cli
