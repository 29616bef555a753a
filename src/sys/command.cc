#include "sys/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "sys/fs.h"
#include "sys/spawn.h"

namespace berth::sys {

namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> FindExecutable(const std::string& name, const std::string& path_var) {
  if (name.empty()) return Error(Cause::kInvalidArgument, "no program named");
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    return Error(Cause::kNotFound, name + " is not an executable file");
  }
  size_t pos = 0;
  while (pos <= path_var.size()) {
    size_t colon = path_var.find(':', pos);
    if (colon == std::string::npos) colon = path_var.size();
    std::string dir = path_var.substr(pos, colon - pos);
    pos = colon + 1;
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = dir + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return Error(Cause::kNotFound, name + " was not found in PATH");
}

Result<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                 const std::vector<std::pair<std::string, std::string>>& env,
                                 const std::string& cwd, int timeout_ms, size_t max_output) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
    return Error(Cause::kInvalidArgument, "RunCommand needs an absolute program path");
  Pipe out = TRY(MakePipe());
  SpawnOptions options;
  options.argv = argv;
  for (const auto& [name, value] : env) options.env.push_back(name + "=" + value);
  options.cwd = cwd;
  options.stdio[0] = kDevNull;
  options.stdio[1] = out.write.get();
  options.stdio[2] = out.write.get();
  options.group = ProcessGroup::kNewGroup;
  const int64_t start = MonotonicMillis();
  Result<Process> spawned = Spawn(options);
  CommandResult result;
  if (!spawned) {
    // A program that cannot be started (missing, not executable, a directory it may not
    // enter) is reported like a shell would, 127 or 126, with the reason as its output:
    // callers judge the command's status, not the mechanics of starting it.
    const int err = spawned.error().sys_errno();
    if (err == 0 || err == EAGAIN || err == ENOMEM) return std::move(spawned).error();
    result.status.code = err == ENOENT ? 127 : 126;
    result.output = spawned.error().ToString().substr(0, max_output);
    return result;
  }
  Process process = std::move(*spawned);
  out.write.Reset();
  char buffer[4096];
  while (true) {
    int64_t left = timeout_ms - (MonotonicMillis() - start);
    if (left <= 0) {
      result.timed_out = true;
      IgnoreError(process.SignalGroup(SIGKILL),
                  "the group may be gone already; the signal to the leader below still counts");
      TRY(process.Signal(SIGKILL));
      break;
    }
    struct pollfd fd = {out.read.get(), POLLIN, 0};
    int ready = ::poll(&fd, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t n = ::read(out.read.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t room = max_output > result.output.size() ? max_output - result.output.size() : 0;
    result.output.append(buffer, std::min(room, static_cast<size_t>(n)));
  }
  result.status = TRY(process.Wait());
  return result;
}

Result<SeparatedResult> RunCommandSeparately(
    const std::vector<std::string>& argv,
    const std::vector<std::pair<std::string, std::string>>& env, const std::string& cwd,
    int timeout_ms, size_t max_output, int stdin_fd) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
    return Error(Cause::kInvalidArgument, "RunCommandSeparately needs an absolute program path");
  Pipe out = TRY(MakePipe());
  Pipe err = TRY(MakePipe());
  SpawnOptions options;
  options.argv = argv;
  for (const auto& [name, value] : env) options.env.push_back(name + "=" + value);
  options.cwd = cwd;
  options.stdio[0] = stdin_fd;
  options.stdio[1] = out.write.get();
  options.stdio[2] = err.write.get();
  options.group = ProcessGroup::kNewGroup;
  const int64_t start = MonotonicMillis();
  Process process = TRY(Spawn(options));
  out.write.Reset();
  err.write.Reset();
  SeparatedResult result;
  UniqueFd* fds[2] = {&out.read, &err.read};
  std::string* sinks[2] = {&result.out, &result.err};
  char buffer[4096];
  while (fds[0]->valid() || fds[1]->valid()) {
    int64_t left = timeout_ms - (MonotonicMillis() - start);
    if (left <= 0) {
      result.timed_out = true;
      IgnoreError(process.SignalGroup(SIGKILL),
                  "the group may be gone already; the signal to the leader below still counts");
      TRY(process.Signal(SIGKILL));
      break;
    }
    struct pollfd polls[2] = {{fds[0]->get(), POLLIN, 0}, {fds[1]->get(), POLLIN, 0}};
    int ready = ::poll(polls, 2, static_cast<int>(left));
    if (ready <= 0) continue;  // EINTR or the deadline: the loop head decides
    for (int i = 0; i < 2; ++i) {
      if (polls[i].revents == 0) continue;
      ssize_t n = ::read(fds[i]->get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fds[i]->Reset();
        continue;
      }
      size_t room = max_output > sinks[i]->size() ? max_output - sinks[i]->size() : 0;
      sinks[i]->append(buffer, std::min(room, static_cast<size_t>(n)));
    }
  }
  result.status = TRY(process.Wait());
  return result;
}

}  // namespace berth::sys
