#include "gitcli/mirror.h"

#include <cstdint>
#include <cstdio>

#include "git/repository.h"
#include "sys/dir.h"
#include "sys/file_lock.h"
#include "sys/fs.h"
#include "sys/process.h"
#include "sys/self.h"

namespace berth::gitcli {

namespace {

// FNV-1a: stable across builds and hosts, unlike std::hash, so that workers sharing a root
// agree on a mirror's name.
uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

// Whether the mirror at `path` has `commit`, read in this process (libgit2): the common case,
// every job on a base the mirror has, costs no git command.
bool HasCommitHere(const std::string& path, const std::string& commit) {
  Result<git::Repository> repo = git::Repository::Discover(path);
  if (!repo) return false;
  Result<std::string> resolved = repo->ResolveCommit(commit);
  return resolved && *resolved == commit;
}

}  // namespace

std::string Mirrors::NameOf(const std::string& source) {
  std::string tail = source;
  while (!tail.empty() && tail.back() == '/') tail.pop_back();
  if (size_t slash = tail.find_last_of("/:"); slash != std::string::npos)
    tail = tail.substr(slash + 1);
  if (tail.size() > 4 && tail.compare(tail.size() - 4, 4, ".git") == 0)
    tail.resize(tail.size() - 4);
  std::string name;
  for (char c : tail) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || c == '.';
    name += plain ? c : '_';
    if (name.size() == 40) break;
  }
  if (name.empty() || name[0] == '.') name = "repo" + name;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a(source)));
  return name + "-" + std::string(hex, 12);
}

bool Mirrors::Has(const std::string& source, const std::string& base) const {
  const std::string path = PathOf(source);
  return sys::Exists(path) && HasCommitHere(path, base);
}

Result<std::string> Mirrors::Ensure(const std::string& source, const std::string& base) {
  TRY(sys::MakeDirs(root_, 0700));
  const std::string name = NameOf(source);
  const std::string path = root_ + "/" + name;
  sys::FileLock lock = TRY_CTX(sys::FileLock::Acquire(root_ + "/." + name + ".lock"),
                               "locking the mirror of " + source);
  if (!sys::Exists(path)) {
    // Cloned aside and renamed: a clone cut short never passes for a mirror.
    const std::string partial = path + ".partial-" + std::to_string(sys::CurrentPid());
    IgnoreError(sys::RemoveTree(partial), "a leftover of an earlier clone; the clone says more");
    TRY_CTX(git_.Run(root_, {"clone", "--quiet", "--no-checkout", "--", source, partial}),
            "cloning " + source + " for this worker");
    TRY(sys::Rename(partial, path));
  }
  if (HasCommitHere(path, base)) return path;
  // The commit itself first (servers allow it for reachable commits), then every branch.
  IgnoreError(git_.Run(path, {"fetch", "--quiet", "--no-tags", "origin", base}),
              "the branches are fetched next, which is what most servers allow");
  if (HasCommitHere(path, base)) return path;
  TRY_CTX(git_.Run(path, {"fetch", "--quiet", "--no-tags", "origin",
                          "+refs/heads/*:refs/remotes/origin/*"}),
          "fetching " + source);
  if (HasCommitHere(path, base)) return path;
  return Error(
      Cause::kUnavailable,
      "commit " + base.substr(0, 12) + " is not in " + source + " as this worker sees it", 0,
      "push the job's base to " + source + ", or queue the job with a --source that has it");
}

}  // namespace berth::gitcli
