#include "gitcli/signing.h"

#include "base/quote.h"
#include "base/strings.h"
#include "sys/command.h"
#include "sys/dir.h"
#include "sys/fs.h"

namespace berth::gitcli {

namespace {

using Environ = std::vector<std::pair<std::string, std::string>>;

// Long enough for a passphrase typed into the agent's pinentry.
constexpr int kSignTimeoutMs = 5 * 60 * 1000;

std::string Lookup(const Environ& environ, const std::string& name) {
  for (const auto& [key, value] : environ)
    if (key == name) return value;
  return "";
}

// As git tells a literal SSH public key from a file name.
bool IsLiteralSshKey(const std::string& key, std::string* literal) {
  if (StartsWith(key, "key::")) {
    *literal = key.substr(5);
    return true;
  }
  if (StartsWith(key, "ssh-")) {
    *literal = key;
    return true;
  }
  return false;
}

// "~/" at the start of a key file's name is the user's home, as git expands it.
std::string ExpandHome(const std::string& path, const Environ& environ) {
  if (!StartsWith(path, "~/")) return path;
  std::string home = Lookup(environ, "HOME");
  return home.empty() ? path : home + path.substr(1);
}

// What the program printed for people: gpg's status lines ("[GNUPG:] ...") left out.
std::string Stderr(const std::string& err) {
  std::string kept;
  for (const std::string& line : Split(err, '\n')) {
    if (StartsWith(line, "[GNUPG:] ") || line.empty()) continue;
    if (!kept.empty()) kept += "; ";
    kept += line;
  }
  return OneLine(kept.empty() ? err : kept, 600);
}

std::string Failure(const std::string& command, const sys::SeparatedResult& ran) {
  std::string how = ran.timed_out ? "ran past " + std::to_string(kSignTimeoutMs / 1000) + " s"
                    : ran.status.signaled
                        ? "was killed by signal " + std::to_string(ran.status.signal)
                        : "exited with " + std::to_string(ran.status.code);
  std::string said = Stderr(ran.err);
  return "`" + command + "` " + how + (said.empty() ? "" : ": " + said);
}

// A private directory for the payload (and a literal key), removed when done.
class ScratchDir {
 public:
  static Result<ScratchDir> Make(const Environ& environ) {
    std::string parent = Lookup(environ, "TMPDIR");
    if (parent.empty() || parent[0] != '/') parent = "/tmp";
    return ScratchDir(TRY(sys::MakeTempDir(parent, "berth-sign-")));
  }
  ScratchDir(ScratchDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDir& operator=(ScratchDir&&) = delete;
  ~ScratchDir() {
    if (!path_.empty())
      IgnoreError(sys::RemoveTree(path_), "a temporary file of a signature; nothing to undo");
  }
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

Error SignError(const git::CommitSigning& signing, const std::string& why) {
  return Error(Cause::kUnavailable,
               "could not sign the landed commit with " +
                   std::string(git::SigningFormatName(signing.format)) + " key " +
                   EscapeControls(signing.key) + ": " + why,
               0,
               "commit.gpgsign is true in your git config and berth lands nothing unsigned: "
               "make the signing program work (an unlocked key in your agent, say), or turn "
               "signing off for this repository with git config commit.gpgsign false");
}

Result<std::string> SignGpg(const git::CommitSigning& signing, const std::string& program,
                            const Environ& environ, const std::string& payload) {
  ScratchDir scratch = TRY(ScratchDir::Make(environ));
  std::string payload_path = scratch.path() + "/payload";
  TRY(sys::WriteNewFile(payload_path, payload, 0600));
  sys::UniqueFd input = TRY(sys::OpenReadOnly(payload_path));
  std::vector<std::string> argv = {program, "--status-fd=2", "-bsau", signing.key};
  sys::SeparatedResult ran =
      TRY(sys::RunCommandSeparately(argv, environ, "/", kSignTimeoutMs, 1024 * 1024, input.get()));
  std::string command = SignerCommandLine(signing);
  if (ran.timed_out || ran.status.signaled || ran.status.code != 0)
    return SignError(signing, Failure(command, ran));
  // As git, a signature counts only with gpg's own word that it made one.
  if (!StartsWith(ran.err, "[GNUPG:] SIG_CREATED ") &&
      ran.err.find("\n[GNUPG:] SIG_CREATED ") == std::string::npos)
    return SignError(signing, "`" + command + "` exited 0 but reported no SIG_CREATED status" +
                                  (Stderr(ran.err).empty() ? "" : ": " + Stderr(ran.err)));
  std::string signature;
  for (char c : ran.out)
    if (c != '\r') signature += c;
  if (signature.empty()) return SignError(signing, "`" + command + "` printed no signature");
  return signature;
}

Result<std::string> SignSsh(const git::CommitSigning& signing, const std::string& program,
                            const Environ& environ, const std::string& payload) {
  ScratchDir scratch = TRY(ScratchDir::Make(environ));
  std::string payload_path = scratch.path() + "/payload";
  TRY(sys::WriteNewFile(payload_path, payload, 0600));
  std::vector<std::string> argv = {program, "-Y", "sign", "-n", "git", "-f"};
  std::string literal;
  if (IsLiteralSshKey(signing.key, &literal)) {
    // The private half stays in the user's ssh-agent, which -U asks to sign.
    std::string key_path = scratch.path() + "/key.pub";
    TRY(sys::WriteNewFile(key_path, literal + "\n", 0600));
    argv.push_back(key_path);
    argv.push_back("-U");
  } else {
    argv.push_back(ExpandHome(signing.key, environ));
  }
  argv.push_back(payload_path);
  sys::SeparatedResult ran =
      TRY(sys::RunCommandSeparately(argv, environ, scratch.path(), kSignTimeoutMs));
  std::string command = SignerCommandLine(signing);
  if (ran.timed_out || ran.status.signaled || ran.status.code != 0)
    return SignError(signing, Failure(command, ran));
  Result<std::string> signature = sys::ReadFile(payload_path + ".sig");
  if (!signature || signature->empty())
    return SignError(signing, "`" + command + "` exited 0 but wrote no signature file");
  return std::move(*signature);
}

}  // namespace

std::string SignerCommandLine(const git::CommitSigning& signing) {
  if (signing.format == git::CommitSigning::Format::kSsh)
    return signing.program + " -Y sign -n git -f " + EscapeControls(signing.key);
  return signing.program + " --status-fd=2 -bsau " + EscapeControls(signing.key);
}

Result<git::CommitSigner> MakeCommitSigner(const git::CommitSigning& signing,
                                           const Environ& environ) {
  Result<std::string> found =
      sys::FindExecutable(ExpandHome(signing.program, environ), Lookup(environ, "PATH"));
  if (!found)
    return Error(Cause::kUnavailable,
                 std::string("commit.gpgsign is true, but the ") +
                     git::SigningFormatName(signing.format) + " signing program " +
                     EscapeControls(signing.program) + " cannot be run: " + found.error().message(),
                 0,
                 "install it, name it in your git config (gpg.program, gpg.ssh.program or "
                 "gpg.x509.program), or turn signing off with git config commit.gpgsign false");
  std::string program = *found;
  return git::CommitSigner(
      [signing, program, environ](const std::string& payload) -> Result<std::string> {
        if (signing.format == git::CommitSigning::Format::kSsh)
          return SignSsh(signing, program, environ, payload);
        return SignGpg(signing, program, environ, payload);
      });
}

}  // namespace berth::gitcli
