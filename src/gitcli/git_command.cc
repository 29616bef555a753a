#include "gitcli/git_command.h"

#include "base/strings.h"
#include "sys/command.h"

namespace berth::gitcli {

namespace {

std::string Lookup(const std::vector<std::pair<std::string, std::string>>& environ,
                   const std::string& name) {
  for (const auto& [key, value] : environ)
    if (key == name) return value;
  return "";
}

}  // namespace

Result<GitCommand> GitCommand::Find(
    const std::vector<std::pair<std::string, std::string>>& environ) {
  std::string git = TRY_CTX(sys::FindExecutable("git", Lookup(environ, "PATH")),
                            "finding the git command, which workers and results need");
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [key, value] : environ) {
    // git's own variables would point it elsewhere (GIT_DIR, GIT_INDEX_FILE of a hook).
    if (key.rfind("GIT_", 0) == 0 && key != "GIT_SSH_COMMAND" && key != "GIT_SSH") continue;
    env.emplace_back(key, value);
  }
  env.emplace_back("GIT_TERMINAL_PROMPT", "0");
  return GitCommand(std::move(git), std::move(env));
}

Result<std::string> GitCommand::Run(const std::string& dir, const std::vector<std::string>& args,
                                    int timeout_ms) const {
  std::vector<std::string> argv = {path_, "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  sys::CommandResult result = TRY(sys::RunCommand(argv, env_, "/", timeout_ms));
  if (!result.timed_out && !result.status.signaled && result.status.code == 0)
    return std::move(result.output);
  // The subcommand names the failure, past any `-c name=value` before it.
  size_t sub = 0;
  while (sub + 1 < args.size() && args[sub] == "-c") sub += 2;
  std::string what = "git " + (sub < args.size() ? args[sub] : std::string());
  std::string why = result.timed_out ? "it ran past " + std::to_string(timeout_ms / 1000) + " s"
                                     : OneLine(result.output, 400);
  return Error(Cause::kUnavailable, what + " in " + dir + " failed: " + why);
}

Result<std::string> GitCommand::Output(const std::string& dir, const std::vector<std::string>& args,
                                       size_t max_output, int timeout_ms) const {
  std::vector<std::string> argv = {path_, "-C", dir};
  argv.insert(argv.end(), args.begin(), args.end());
  // One byte more than allowed tells a listing that fits from one that was cut.
  sys::SeparatedResult result =
      TRY(sys::RunCommandSeparately(argv, env_, "/", timeout_ms, max_output + 1));
  size_t sub = 0;
  while (sub + 1 < args.size() && args[sub] == "-c") sub += 2;
  std::string what = "git " + (sub < args.size() ? args[sub] : std::string());
  if (result.timed_out || result.status.signaled || result.status.code != 0) {
    std::string why = result.timed_out ? "it ran past " + std::to_string(timeout_ms / 1000) + " s"
                                       : OneLine(result.err, 400);
    return Error(Cause::kUnavailable, what + " in " + dir + " failed: " + why);
  }
  if (result.out.size() > max_output)
    return Error(Cause::kUnavailable, what + " in " + dir + " printed more than " +
                                          std::to_string(max_output >> 20) +
                                          " MiB, more than berth reads");
  return std::move(result.out);
}

bool GitCommand::HasCommit(const std::string& dir, const std::string& commit) const {
  return Run(dir, {"cat-file", "-e", commit + "^{commit}"}, 60 * 1000).has_value();
}

}  // namespace berth::gitcli
