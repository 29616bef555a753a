#include "sys/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "sys/fs.h"

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
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  Pipe out = TRY(MakePipe());
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) return Error::FromErrno("open /dev/null", errno);
  UniqueFd null_in(null_fd);
  const int64_t start = MonotonicMillis();
  pid_t pid = ::fork();
  if (pid < 0) return Error::FromErrno("fork", errno);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(null_in.get(), 0);
    ::dup2(out.write.get(), 1);
    ::dup2(out.write.get(), 2);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  out.write.Reset();
  CommandResult result;
  char buffer[4096];
  while (true) {
    int64_t left = timeout_ms - (MonotonicMillis() - start);
    if (left <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
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
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Error::FromErrno("waitpid", errno);
  }
  result.status = ExitStatus::FromWaitStatus(status);
  return result;
}

}  // namespace berth::sys
