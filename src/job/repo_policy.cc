#include "job/repo_policy.h"

#include <optional>

#include "git/repository.h"

namespace berth::job {

Result<policy::Policy> LoadRepoPolicy(const std::string& repo_root) {
  Result<policy::Policy> loaded = policy::LoadPolicy(repo_root);
  if (loaded || loaded.error().cause() != Cause::kNotFound) return loaded;
  Result<git::Repository> repo = git::Repository::Discover(repo_root);
  if (!repo) return loaded;
  constexpr const char* kPath = ".berth/policy.toml";
  Result<std::optional<std::string>> text = repo->SparseFileAtHead(kPath);
  if (!text) {
    Error error = text.error();
    error.AddContext("reading the sparse checkout's policy");
    return error;
  }
  if (!*text) return loaded;
  return policy::ParsePolicy(**text, std::string(kPath) + " (HEAD's, outside the sparse checkout)");
}

}  // namespace berth::job
