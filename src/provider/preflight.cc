#include "provider/preflight.h"

#include <nlohmann/json.hpp>

#include "base/json_read.h"
#include "sys/atomic_file.h"
#include "sys/command.h"
#include "sys/fs.h"

namespace berth::provider {

namespace {

std::string Lookup(const Environ& environ, const std::string& name) {
  return EnvValue(environ, name).value_or("");
}

std::string VersionArgs(const Provider& provider) {
  std::string out;
  for (const std::string& a : provider.version_args) out += (out.empty() ? "" : " ") + a;
  return out;
}

Result<std::string> AskVersion(const Provider& provider, const std::string& cli,
                               const Environ& environ, const std::string& home, int timeout_ms) {
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

std::optional<std::string> EnvValue(const Environ& environ, const std::string& name) {
  for (const auto& [key, value] : environ)
    if (key == name) return value;
  return std::nullopt;
}

Result<std::string> CliVersion(const Provider& provider, const std::string& cli,
                               const Environ& environ, const std::string& home,
                               const std::string& cache_file, int timeout_ms) {
  if (provider.version_args.empty()) return std::string();
  std::optional<std::string> identity = sys::FileIdentity(cli);
  if (cache_file.empty() || !identity) return AskVersion(provider, cli, environ, home, timeout_ms);
  const std::string key = *identity + " " + VersionArgs(provider);
  // The cache is advisory: unreadable or malformed, it is rebuilt; a write that fails is
  // ignored; two writers racing each keep a correct entry of their own.
  nlohmann::json cache =
      ParseJson(sys::ReadFile(cache_file).value_or("{}"), "the version cache").value_or(nullptr);
  if (!cache.is_object()) cache = nlohmann::json::object();
  // An entry of another shape is rebuilt like a missing one.
  const nlohmann::json entry_json = cache.contains(cli) ? cache[cli] : nlohmann::json();
  if (Result<JsonReader> entry = JsonReader::Of(entry_json, cli); entry && entry->Has("version")) {
    std::string cached_key, version;
    if (entry->Read("key", &cached_key) && entry->Read("version", &version) && cached_key == key)
      return version;
  }
  std::string version = TRY(AskVersion(provider, cli, environ, home, timeout_ms));
  cache[cli] = {{"key", key}, {"version", version}};
  IgnoreError(sys::WriteFileAtomic(
                  cache_file,
                  cache.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", 0600),
              "a cache: without it the next run asks the CLI again");
  return version;
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
