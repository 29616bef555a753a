// Repository::DiffFiles and Repository::DiffStat: per-file line counts between two commits,
// and the --stat text made from them. libgit2's own stats formatter prints paths raw; a path
// is agent-controlled, so the summary quotes every path as git does.
#include <git2.h>

#include <algorithm>

#include "base/quote.h"
#include "git/handles.h"
#include "git/repository.h"

namespace berth::git {

namespace {

using PatchPtr = Git2Ptr<git_patch, git_patch_free>;

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string StatName(const FileDiff& file) {
  if (file.old_path != file.path) return QuotePath(file.old_path) + " => " + QuotePath(file.path);
  return QuotePath(file.path);
}

}  // namespace

Result<std::vector<FileDiff>> Repository::DiffFiles(const std::string& from,
                                                    const std::string& to) {
  DiffPtr diff = TRY(DiffTrees(static_cast<git_repository*>(raw()), from, to,
                               /*find_renames=*/true));
  std::vector<FileDiff> files;
  const size_t count = git_diff_num_deltas(diff.get());
  for (size_t i = 0; i < count; ++i) {
    git_patch* raw_patch = nullptr;
    if (int code = git_patch_from_diff(&raw_patch, diff.get(), i); code < 0)
      return Git2Error("diff file " + std::to_string(i), code);
    PatchPtr patch(raw_patch);
    const git_diff_delta* delta = git_patch_get_delta(patch.get());
    FileDiff file;
    file.path = delta->status == GIT_DELTA_DELETED ? delta->old_file.path : delta->new_file.path;
    file.old_path = delta->status == GIT_DELTA_RENAMED ? delta->old_file.path : file.path;
    file.status = git_diff_status_char(delta->status);
    file.binary = (delta->flags & GIT_DIFF_FLAG_BINARY) != 0;
    size_t context = 0;
    if (int code = git_patch_line_stats(&context, &file.insertions, &file.deletions, patch.get());
        code < 0)
      return Git2Error("count the lines of " + file.path, code);
    files.push_back(std::move(file));
  }
  return files;
}

Result<std::string> Repository::DiffStat(const std::string& from, const std::string& to) {
  std::vector<FileDiff> files = TRY(DiffFiles(from, to));
  if (files.empty()) return std::string();
  size_t name_width = 0, most = 0, insertions = 0, deletions = 0;
  for (const FileDiff& f : files) {
    name_width = std::max(name_width, StatName(f).size());
    most = std::max(most, f.insertions + f.deletions);
    insertions += f.insertions;
    deletions += f.deletions;
  }
  const size_t count_width = std::to_string(most).size();
  // The +/- bar fills what is left of 80 columns, scaled down when the largest change is wider.
  const size_t room = name_width + count_width + 5 < 80 ? 80 - name_width - count_width - 5 : 10;
  std::string out;
  for (const FileDiff& f : files) {
    std::string name = StatName(f);
    out += " " + name + std::string(name_width - name.size(), ' ') + " | ";
    if (f.binary) {
      out += "Bin\n";
      continue;
    }
    std::string n = std::to_string(f.insertions + f.deletions);
    out += std::string(count_width - n.size(), ' ') + n;
    size_t plus = f.insertions, minus = f.deletions;
    if (most > room) {
      plus = (plus * room + most - 1) / most;
      minus = (minus * room + most - 1) / most;
    }
    if (plus + minus > 0) out += " " + std::string(plus, '+') + std::string(minus, '-');
    out += "\n";
  }
  out += " " + Plural(files.size(), "file changed", "files changed");
  if (insertions > 0 || deletions == 0)
    out += ", " + Plural(insertions, "insertion(+)", "insertions(+)");
  if (deletions > 0) out += ", " + Plural(deletions, "deletion(-)", "deletions(-)");
  return out + "\n";
}

}  // namespace berth::git
