// A home directory as a developer's machine has it, for the tests that meet a real machine:
// agent CLI state (~/.claude.json, ~/.claude, ~/.codex), a ~/.gitconfig with an [include] and a
// credential helper, caches, ~/.local/bin and ~/.nvm toolchains, dotfiles that are symlinks
// into a ~/dotfiles repository, every well-known credential file (each with its own marker
// secret), and a listening Unix socket. See docs/testing.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "tests/e2e/unix_http_server.h"

namespace berth::e2e {

// One credential file of the lived-in home.
struct CredentialFile {
  std::string path;    // relative to HOME, e.g. ".ssh/id_ed25519"
  std::string marker;  // the secret string the file holds; never printed by a test
  // The state directory of the agent CLI this file belongs to ("~/.claude"), whose own jobs
  // see it (copy-on-write); empty for every other credential.
  std::string state_dir;
};

// Every credential file the lived-in home holds, in a fixed order.
const std::vector<CredentialFile>& LivedInCredentials();

// The populated home. Destroying it stops the socket server; the files stay for the test's
// temp tree to remove.
class LivedInHome {
 public:
  // Fills `home` (an existing, possibly non-empty directory; files in it are overwritten) and
  // starts the server of its Unix socket.
  static Result<std::unique_ptr<LivedInHome>> Create(const std::string& home);

  const std::string& home() const { return home_; }
  // The absolute paths of LivedInCredentials(), in order.
  std::vector<std::string> CredentialPaths() const;
  // The home's own Unix socket (a user daemon's, like a gpg or ssh agent's) and its server.
  const UnixHttpServer& socket() const { return *socket_; }

 private:
  explicit LivedInHome(std::string home) : home_(std::move(home)) {}
  std::string home_;
  std::unique_ptr<UnixHttpServer> socket_;
};

}  // namespace berth::e2e
