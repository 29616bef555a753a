// Signing the commits berth writes onto the user's branches with the user's own signing
// program, as `git commit` does when commit.gpgsign is true (docs/landing.md, "Signing").
// The program runs on the host, as the user, with the user's environment (their gpg-agent or
// ssh-agent); it never runs in a sandbox, and no job ever sees the key or the agent.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "git/repository.h"

namespace berth::gitcli {

// A signer for git::Repository::CherryPick that runs `signing.program`, found along the PATH
// of `environ` (which is also its environment), the way git runs it for the format:
//   openpgp, x509: PROGRAM --status-fd=2 -bsau KEY, the payload on stdin, the armored
//                  signature on stdout, and a SIG_CREATED status line required;
//   ssh:           PROGRAM -Y sign -n git -f KEYFILE [-U] FILE, the payload in FILE and the
//                  signature read from FILE.sig (-U and a temporary KEYFILE for a literal key).
// kUnavailable now when the program is not found. The signer's errors are kUnavailable too,
// and name the command, its exit status and what it printed on stderr.
Result<git::CommitSigner> MakeCommitSigner(
    const git::CommitSigning& signing,
    const std::vector<std::pair<std::string, std::string>>& environ);

// The command line a signer runs, for messages: "gpg --status-fd=2 -bsau KEY".
std::string SignerCommandLine(const git::CommitSigning& signing);

}  // namespace berth::gitcli
