#include "sys/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "sys/unique_fd.h"

extern char** environ;

namespace berth::sys {

namespace {

// posix_spawn's attribute and file-action objects, destroyed on every return path.
class SpawnAttributes {
 public:
  SpawnAttributes() { init_error_ = ::posix_spawnattr_init(&attr_); }
  ~SpawnAttributes() {
    if (init_error_ == 0) ::posix_spawnattr_destroy(&attr_);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  int init_error() const { return init_error_; }
  posix_spawnattr_t* get() { return &attr_; }

 private:
  posix_spawnattr_t attr_;
  int init_error_;
};

class FileActions {
 public:
  FileActions() { init_error_ = ::posix_spawn_file_actions_init(&actions_); }
  ~FileActions() {
    if (init_error_ == 0) ::posix_spawn_file_actions_destroy(&actions_);
  }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  int init_error() const { return init_error_; }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
  int init_error_;
};

Error SpawnError(const std::string& what, const std::string& program, int rc) {
  return Error::FromErrno(what + " for " + program, rc);
}

}  // namespace

Result<Process> Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty() || options.argv[0][0] != '/')
    return Error(Cause::kInvalidArgument, "Spawn needs an absolute program path");
  const std::string& program = options.argv[0];
  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : options.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  SpawnAttributes attr;
  if (attr.init_error() != 0) return SpawnError("posix_spawnattr_init", program, attr.init_error());
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.group == ProcessGroup::kNewGroup) flags |= POSIX_SPAWN_SETPGROUP;
  if (options.group == ProcessGroup::kNewSession) flags |= POSIX_SPAWN_SETSID;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if (int rc = ::posix_spawnattr_setflags(attr.get(), flags); rc != 0)
    return SpawnError("posix_spawnattr_setflags", program, rc);
  if (int rc = ::posix_spawnattr_setsigmask(attr.get(), &none); rc != 0)
    return SpawnError("posix_spawnattr_setsigmask", program, rc);
  if (int rc = ::posix_spawnattr_setsigdefault(attr.get(), &all); rc != 0)
    return SpawnError("posix_spawnattr_setsigdefault", program, rc);
  if (options.group == ProcessGroup::kNewGroup) {
    if (int rc = ::posix_spawnattr_setpgroup(attr.get(), 0); rc != 0)
      return SpawnError("posix_spawnattr_setpgroup", program, rc);
  }

  FileActions actions;
  if (actions.init_error() != 0)
    return SpawnError("posix_spawn_file_actions_init", program, actions.init_error());
  for (int target = 0; target < 3; ++target) {
    const int fd = options.stdio[target];
    int rc = 0;
    if (fd == kDevNull)
      rc = ::posix_spawn_file_actions_addopen(actions.get(), target, "/dev/null", O_RDWR, 0);
    else if (fd >= 0 && fd != target)  // fd == target: the child inherits it as it is
      rc = ::posix_spawn_file_actions_adddup2(actions.get(), fd, target);
    if (rc != 0) return SpawnError("posix_spawn_file_actions (stdio)", program, rc);
  }
  if (!options.cwd.empty()) {
    if (int rc = ::posix_spawn_file_actions_addchdir_np(actions.get(), options.cwd.c_str());
        rc != 0)
      return SpawnError("posix_spawn_file_actions_addchdir_np", program, rc);
  }

  pid_t pid = -1;
  // glibc's posix_spawn waits (CLONE_VFORK) until the child has exec'd, and returns the errno
  // of whichever step failed: a dup2, the chdir, setsid or the exec itself.
  if (int rc = ::posix_spawn(&pid, program.c_str(), actions.get(), attr.get(), argv.data(),
                             options.inherit_env ? environ : envp.data());
      rc != 0) {
    Error e = Error::FromErrno("cannot start " + program, rc);
    if (!options.cwd.empty())
      e.WithHint("check that the program exists and that " + options.cwd +
                 " is a directory it may enter");
    return e;
  }
  // The child is ours and unreaped, so the pid cannot have been reused before pidfd_open.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  return Process(pid, std::move(pidfd), ProcessStartTime(pid).value_or(0));
}

Result<pid_t> SpawnDetached(const std::vector<std::string>& argv, const std::string& log_path) {
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return Error::FromErrno("open " + log_path, errno);
  UniqueFd log(log_fd);
  SpawnOptions options;
  options.argv = argv;
  options.inherit_env = true;
  options.stdio[0] = kDevNull;
  options.stdio[1] = log.get();
  options.stdio[2] = log.get();
  options.group = ProcessGroup::kNewSession;
  Process process = TRY(Spawn(options));
  return process.Release();
}

}  // namespace berth::sys
