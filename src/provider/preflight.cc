#include "provider/preflight.h"

#include "sys/command.h"
#include "sys/fs.h"

namespace berth::provider {

namespace {

std::string Lookup(const Environ& environ, const std::string& name) {
  for (const auto& [key, value] : environ)
    if (key == name) return value;
  return {};
}

std::string InstallHint(const Provider& p) {
  if (p.name == "codex") return "install it with `npm install -g @openai/codex`";
  if (p.name == "claude") return "install it with `npm install -g @anthropic-ai/claude-code`";
  if (p.name == "gemini") return "install it with `npm install -g @google/gemini-cli`";
  if (p.name == "grok") return "install it with `npm install -g @vibe-kit/grok-cli`";
  return "install " + p.executable + " or fix executable in [providers." + p.name + "]";
}

}  // namespace

std::string ExpandHome(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

Result<std::string> FindCli(const Provider& provider, const Environ& environ) {
  Result<std::string> found = sys::FindExecutable(provider.executable, Lookup(environ, "PATH"));
  if (found) return found;
  return Error(
      Cause::kUnavailable,
      "the " + provider.name + " CLI (" + provider.executable + ") was not found in PATH", 0,
      InstallHint(provider) + ", then check with `berth doctor --provider " + provider.name + "`");
}

Result<std::string> CliVersion(const Provider& provider, const std::string& cli,
                               const Environ& environ, const std::string& home, int timeout_ms) {
  if (provider.version_args.empty()) return std::string();
  std::vector<std::string> argv = {cli};
  argv.insert(argv.end(), provider.version_args.begin(), provider.version_args.end());
  Environ env = {{"PATH", Lookup(environ, "PATH")}, {"HOME", home}, {"NO_COLOR", "1"}};
  for (const char* name : {"LANG", "TERM"})
    if (std::string v = Lookup(environ, name); !v.empty()) env.emplace_back(name, v);
  sys::CommandResult run =
      TRY_CTX(sys::RunCommand(argv, env, home.empty() ? "/" : home, timeout_ms), "running " + cli);
  std::string first = run.output.substr(0, run.output.find('\n'));
  if (run.timed_out)
    return Error(Cause::kUnavailable, cli + " --version did not answer within " +
                                          std::to_string(timeout_ms / 1000) + " s");
  if (run.status.signaled || run.status.code != 0)
    return Error(Cause::kUnavailable,
                 cli + " --version failed (status " + std::to_string(run.status.ShellCode()) + ")" +
                     (first.empty() ? "" : ": " + first),
                 0, "reinstall the " + provider.name + " CLI");
  return first;
}

Credentials FindCredentials(const Provider& provider, const Environ& environ,
                            const std::string& home) {
  Credentials c;
  c.needed = !provider.credentials.empty() || !provider.auth_files.empty();
  for (const std::string& name : provider.credentials)
    if (!Lookup(environ, name).empty()) c.variables.push_back(name);
  for (const std::string& file : provider.auth_files) {
    std::string path = ExpandHome(file, home);
    if (sys::TypeOfFollowing(path) == sys::FileType::kRegular) c.files.push_back(path);
  }
  return c;
}

Status RequireCredentials(const Provider& provider, const Credentials& found,
                          const std::string& home) {
  if (found.present()) return {};
  std::string looked;
  for (const std::string& name : provider.credentials)
    looked += (looked.empty() ? "$" : ", $") + name;
  for (const std::string& file : provider.auth_files)
    looked += (looked.empty() ? "" : ", ") + ExpandHome(file, home);
  return Error(Cause::kUnauthenticated,
               provider.name + " is not logged in: none of " + looked + " is present", 0,
               provider.login_hint.empty() ? "set one of them" : provider.login_hint);
}

std::string ParentSandboxMarker(const Environ& environ) {
  for (const char* name : {"CODEX_SANDBOX_NETWORK_DISABLED"}) {
    std::string value = Lookup(environ, name);
    if (!value.empty() && value != "0") return std::string(name) + "=" + value;
  }
  return {};
}

}  // namespace berth::provider
