// Repository::UserIdentity, CommitSigningConfig and PromisorRemote: the user's git identity,
// signing settings and partial clone's remote as git resolves them for this repository.
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

// The repository's config with the global (~/.gitconfig), XDG (~/.config/git/config) and
// system (/etc/gitconfig) files beneath it, includes followed: git's own order.
Result<Git2Ptr<git_config, git_config_free>> ConfigSnapshot(void* repo) {
  git_config* raw = nullptr;
  if (int code = git_repository_config_snapshot(&raw, static_cast<git_repository*>(repo)); code < 0)
    return Git2Error("read the repository's git config", code);
  return Git2Ptr<git_config, git_config_free>(raw);
}

}  // namespace

const char* SigningFormatName(CommitSigning::Format format) {
  switch (format) {
    case CommitSigning::Format::kOpenPgp:
      return "openpgp";
    case CommitSigning::Format::kX509:
      return "x509";
    case CommitSigning::Format::kSsh:
      return "ssh";
  }
  return "openpgp";
}

Result<std::optional<CommitSigning>> Repository::CommitSigningConfig() {
  Git2Ptr<git_config, git_config_free> config = TRY(ConfigSnapshot(raw()));
  int gpgsign = 0;
  if (int code = git_config_get_bool(&gpgsign, config.get(), "commit.gpgsign");
      code < 0 && code != GIT_ENOTFOUND)
    return Git2Error("read commit.gpgsign from the git config", code);
  if (gpgsign == 0) return std::optional<CommitSigning>();
  CommitSigning signing;
  std::string format = TRY(ConfigString(config.get(), "gpg.format"));
  if (format.empty() || format == "openpgp") {
    signing.format = CommitSigning::Format::kOpenPgp;
    signing.program = TRY(ConfigString(config.get(), "gpg.openpgp.program"));
    if (signing.program.empty()) signing.program = TRY(ConfigString(config.get(), "gpg.program"));
    if (signing.program.empty()) signing.program = "gpg";
  } else if (format == "x509") {
    signing.format = CommitSigning::Format::kX509;
    signing.program = TRY(ConfigString(config.get(), "gpg.x509.program"));
    if (signing.program.empty()) signing.program = "gpgsm";
  } else if (format == "ssh") {
    signing.format = CommitSigning::Format::kSsh;
    signing.program = TRY(ConfigString(config.get(), "gpg.ssh.program"));
    if (signing.program.empty()) signing.program = "ssh-keygen";
  } else {
    return Error(Cause::kUnavailable, "gpg.format is '" + format +
                                          "' in the git config; git knows openpgp, x509 and ssh");
  }
  signing.key = TRY(ConfigString(config.get(), "user.signingkey"));
  if (!signing.key.empty()) return std::optional<CommitSigning>(signing);
  if (signing.format == CommitSigning::Format::kSsh)
    return Error(Cause::kUnavailable,
                 "commit.gpgsign is true with gpg.format = ssh, but user.signingkey is not set "
                 "(berth does not run gpg.ssh.defaultKeyCommand)",
                 0,
                 "set user.signingkey to your SSH key, e.g. git config user.signingkey "
                 "~/.ssh/id_ed25519.pub");
  std::optional<Signature> who = TRY(UserIdentity());
  if (!who)
    return Error(Cause::kUnavailable,
                 "commit.gpgsign is true, but neither user.signingkey nor user.name and "
                 "user.email are set, so there is no key to sign with",
                 0, "set user.signingkey (git config user.signingkey KEY-ID)");
  signing.key = who->name + " <" + who->email + ">";
  return std::optional<CommitSigning>(signing);
}

Result<std::optional<Signature>> Repository::UserIdentity() {
  Git2Ptr<git_config, git_config_free> config = TRY(ConfigSnapshot(raw()));
  Signature who;
  who.name = TRY(ConfigString(config.get(), "user.name"));
  who.email = TRY(ConfigString(config.get(), "user.email"));
  if (who.name.empty() || who.email.empty()) return std::optional<Signature>();
  return std::optional<Signature>(who);
}

Result<std::string> Repository::PromisorRemote() {
  Git2Ptr<git_config, git_config_free> config = TRY(ConfigSnapshot(raw()));
  struct Found {
    std::string name;
  } found;
  // A partial clone has one promisor remote as a rule; with several, the first found.
  // Every entry, filtered here: libgit2's regular expressions (git_config_foreach_match) leak
  // a match block per entry with this build's PCRE2 (LeakSanitizer found them).
  int code = git_config_foreach(
      config.get(),
      [](const git_config_entry* entry, void* payload) -> int {
        std::string_view key = entry->name;  // remote.<name>.promisor
        constexpr std::string_view kPrefix = "remote.", kSuffix = ".promisor";
        if (key.size() <= kPrefix.size() + kSuffix.size() || !key.starts_with(kPrefix) ||
            !key.ends_with(kSuffix))
          return 0;
        int on = 0;
        if (git_config_parse_bool(&on, entry->value) < 0 || !on) return 0;
        static_cast<Found*>(payload)->name =
            std::string(key.substr(kPrefix.size(), key.size() - kPrefix.size() - kSuffix.size()));
        return 1;  // the first one: stop
      },
      &found);
  if (code < 0) return Git2Error("read the promisor remotes from the git config", code);
  if (!found.name.empty()) return found.name;
  std::string extension = TRY(ConfigString(config.get(), "extensions.partialclone"));
  while (!extension.empty() && (extension.back() == '\n' || extension.back() == ' '))
    extension.pop_back();
  return extension;
}

}  // namespace berth::git
