// Repository::UserIdentity: the user's git identity as git resolves it for this repository.
#include <git2.h>

#include "git/handles.h"
#include "git/repository.h"

namespace berth::git {

namespace {

// One string value of the snapshot, "" when the key is not set.
Result<std::string> ConfigString(git_config* config, const char* key) {
  git_buf value = GIT_BUF_INIT;
  int code = git_config_get_string_buf(&value, config, key);
  if (code == GIT_ENOTFOUND) return std::string();
  if (code < 0) return Git2Error(std::string("read ") + key + " from the git config", code);
  std::string out(value.ptr, value.size);
  git_buf_dispose(&value);
  return out;
}

}  // namespace

Result<std::optional<Signature>> Repository::UserIdentity() {
  git_config* raw = nullptr;
  // The repository's config with the global (~/.gitconfig), XDG (~/.config/git/config) and
  // system (/etc/gitconfig) files beneath it, includes followed: git's own order.
  if (int code = git_repository_config_snapshot(&raw, static_cast<git_repository*>(this->raw()));
      code < 0)
    return Git2Error("read the repository's git config", code);
  Git2Ptr<git_config, git_config_free> config(raw);
  Signature who;
  who.name = TRY(ConfigString(config.get(), "user.name"));
  who.email = TRY(ConfigString(config.get(), "user.email"));
  if (who.name.empty() || who.email.empty()) return std::optional<Signature>();
  return std::optional<Signature>(who);
}

}  // namespace berth::git
