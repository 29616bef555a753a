// Helpers for whole-binary tests: run the real berth binary, give each test its own temp tree,
// and own the host-side listeners and processes that the sandbox must not reach.
//
// Nothing here is thread-safe; each test uses its own fixture instance on the main thread.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"
#include "tests/e2e/lived_in_home.h"

namespace berth::e2e {

// How one program run ended and what it printed.
struct RunResult {
  std::string command;  // argv joined with spaces, for messages only
  int exit_code = -1;   // the exit code, or 128 + signal when the program was killed
  std::string out;
  std::string err;

  // The whole run as text, for assertion messages.
  std::string Describe() const;
};

// Environment variables as (name, value); a later entry replaces an earlier one of that name.
using EnvVars = std::vector<std::pair<std::string, std::string>>;

// Runs `argv` (argv[0] an absolute path) in `cwd` with exactly `env`, stdin on /dev/null,
// collecting stdout and stderr separately. Returns once the program has exited, even if
// processes it left behind still hold its output pipes. A program still running after a
// generous deadline is killed and the test fails.
RunResult RunProgram(const std::vector<std::string>& argv, const EnvVars& env,
                     const std::string& cwd);

bool IsRoot();
// Whether the CI environment variable is set (non-empty): then missing host features fail.
bool InCi();
// The kernel's Landlock ABI version from landlock_create_ruleset(NULL, 0, VERSION); 0 if none.
int LandlockAbi();
// The first non-loopback IPv4 address of an interface that is up, e.g. "10.0.0.5".
std::optional<std::string> HostIpv4Address();
// An executable named `name` in /usr/local/bin, /usr/bin or /bin.
std::optional<std::string> FindInPath(const std::string& name);

// Records that a host feature the test needs is missing: a fatal failure when InCi(), else a
// loud skip. Does nothing when `ok`. Use REQUIRE_FEATURE to also leave the test body.
void RequireFeature(bool ok, const std::string& reason);

#define REQUIRE_FEATURE(ok, reason)                  \
  do {                                               \
    if (!(ok)) {                                     \
      ::berth::e2e::RequireFeature(false, (reason)); \
      return;                                        \
    }                                                \
  } while (0)

// Files.
bool PathExists(const std::string& path);
// The content of `path`, or "<unreadable: ...>".
std::string ReadText(const std::string& path);
Status WriteText(const std::string& path, const std::string& content, mode_t mode = 0644);

// The processes whose /proc/PID/cmdline contains `token`.
std::vector<pid_t> ProcessesWithArgument(const std::string& token);
// Polls /proc until no process mentions `token` or `limit` passes; true when none is left.
bool WaitUntilNoProcessWithArgument(const std::string& token, std::chrono::milliseconds limit);

// Sends SIGKILL to every process whose command line contains `token`; returns how many.
int KillProcessesWithArgument(const std::string& token);

// Polls `condition` every few milliseconds until it holds or `limit` passes; returns its last
// value. For waiting on state that berth changes in other processes, never for timing.
bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit);

// Waits until `path` (relative to the workspace) exists in the workspace a job keeps under
// `job_dir` (the overlay's upper layer, or the copy). A job is `running` a moment before its
// agent's process exists; a file the agent writes first tells that it has started.
bool WaitForWorkspaceFile(const std::string& job_dir, const std::string& path,
                          std::chrono::milliseconds limit);

// Every entry under `dir` (not following symlinks), by path relative to `dir`: its type and
// permission bits, and a file's bytes or a symlink's target. Two equal fingerprints mean the
// tree is byte-for-byte the same, modes included. Unreadable entries are described by their
// error, so a change there still shows as a difference.
std::map<std::string, std::string> TreeFingerprint(const std::string& dir);

// Gives the owner rwx on every directory under `path` (overlayfs leaves a d--------- work
// directory that an unprivileged owner can otherwise not empty), so that RemoveTree works.
Status MakeTreeRemovable(const std::string& path);

// A program started by StartProgram that runs while the test goes on. Wait() collects its
// output and exit as RunProgram does; one that was never waited for is killed and reaped
// when destroyed. Move-only.
class RunningProgram {
 public:
  RunningProgram() = default;
  RunningProgram(RunningProgram&& other) noexcept;
  RunningProgram& operator=(RunningProgram&& other) noexcept;
  RunningProgram(const RunningProgram&) = delete;
  RunningProgram& operator=(const RunningProgram&) = delete;
  ~RunningProgram();

  pid_t pid() const { return pid_; }
  // Waits for the program to exit (killing it after RunProgram's deadline) and returns how it
  // ended. May be called once.
  RunResult Wait();
  // The same with its own deadline, for programs that run longer by design (an agent host
  // whose turn waits on a whole berth job).
  RunResult Wait(std::chrono::seconds limit);

 private:
  friend RunningProgram StartProgram(const std::vector<std::string>& argv, const EnvVars& env,
                                     const std::string& cwd);
  void KillAndReap();

  std::string command_;
  pid_t pid_ = -1;
  sys::UniqueFd out_;
  sys::UniqueFd err_;
};

// Starts `argv` like RunProgram does, but returns at once. On failure the result has pid -1
// and a failure was recorded.
RunningProgram StartProgram(const std::vector<std::string>& argv, const EnvVars& env,
                            const std::string& cwd);

// A bound socket owned by the test, close-on-exec.
struct BoundSocket {
  sys::UniqueFd fd;
  int port = 0;  // for TCP and UDP
};
// A TCP socket listening on `address` (numeric IPv4) at an ephemeral port.
Result<BoundSocket> ListenTcp(const std::string& address);
// A UDP socket bound to `address` (numeric IPv4) at an ephemeral port.
Result<BoundSocket> BindUdp(const std::string& address);
// A Unix stream socket listening at `path`, or at abstract `name` (no leading NUL).
Result<BoundSocket> ListenUnix(const std::string& path);
Result<BoundSocket> ListenAbstract(const std::string& name);
// Receives one datagram on `fd`, waiting at most `wait` for it; nullopt when none came.
std::optional<std::string> ReceiveDatagram(int fd, std::chrono::milliseconds wait);

// A process outside any sandbox that pause()s until it is killed: a target for signals,
// ptrace and /proc. Kills and reaps it when destroyed. Move-only.
class PausedProcess {
 public:
  static Result<PausedProcess> Start();
  PausedProcess(PausedProcess&& other) noexcept;
  PausedProcess& operator=(PausedProcess&& other) noexcept;
  PausedProcess(const PausedProcess&) = delete;
  PausedProcess& operator=(const PausedProcess&) = delete;
  ~PausedProcess();

  pid_t pid() const { return pid_; }

 private:
  explicit PausedProcess(pid_t pid) : pid_(pid) {}
  void KillAndReap();
  pid_t pid_ = -1;
};

// A temp tree per test under /var/tmp (world-readable so that an unprivileged run works the
// same as a root one):
//   ROOT/ws     the workspace and the cwd of every run
//   ROOT/home   HOME, with .ssh/id_rsa ("SECRET-KEY"), .aws/credentials and .netrc
//   ROOT/state  BERTH_STATE_DIR
// Removed in TearDown together with the paths registered with RemoveAfterTest; processes from
// StartPausedProcess are killed and reaped there.
//
// Two environment variables pick the variant a suite runs in (docs/testing.md); SetUp prints
// which one, once per test binary:
//   BERTH_TEST_HOME=lived-in  HOME is also filled with LivedInHome (default "empty": as above)
//   BERTH_TEST_ROOT=DIR       ROOT is made under DIR, e.g. /tmp (default /var/tmp)
class SandboxTest : public ::testing::Test {
 public:
  // Runs `berth ARGS` in the workspace with PATH, HOME and BERTH_STATE_DIR set, plus `env`.
  RunResult Run(const std::vector<std::string>& args, const EnvVars& env = {}) const;
  // Starts `berth ARGS` like Run() but returns at once; Wait() on the result collects it.
  RunningProgram Start(const std::vector<std::string>& args, const EnvVars& env = {}) const;
  // Runs `berth sandbox BERTH_ARGS -- sandbox_probe OP...`.
  RunResult Probe(const std::vector<std::string>& op,
                  const std::vector<std::string>& berth_args = {}, const EnvVars& env = {}) const;
  // Runs `argv` directly, outside any sandbox, with the same environment and cwd.
  RunResult RunOutside(const std::vector<std::string>& argv) const;
  // Runs `sandbox_probe OP...` outside any sandbox: the control experiment.
  RunResult ProbeOutside(const std::vector<std::string>& op) const;

  const std::string& root() const { return root_; }
  const std::string& ws() const { return ws_; }
  const std::string& home() const { return home_; }
  const std::string& state() const { return state_; }
  // The lived-in home's files and socket, or null when HOME is the nearly-empty one.
  const LivedInHome* lived_in() const { return lived_in_.get(); }
  // A name unique to this test run, for paths outside ROOT and for process tokens.
  std::string UniqueName(const std::string& what) const;

 protected:
  void SetUp() override;
  void TearDown() override;

  // Called before SetUp (from a derived SetUp): this test gets a lived-in HOME, or its ROOT
  // under `parent`, whatever the environment asks.
  void UseLivedInHome() { force_lived_in_ = true; }
  void UseRootUnder(const std::string& parent) { forced_root_parent_ = parent; }

  // Removes `path` (a file or a tree) in TearDown, for things tests create outside ROOT.
  void RemoveAfterTest(const std::string& path) { cleanup_paths_.push_back(path); }
  // Starts a PausedProcess that TearDown kills and reaps; returns its pid, or -1 after
  // recording a failure.
  pid_t StartPausedProcess();
  // What every berth run of Run() and Start() gets: PATH, HOME and BERTH_STATE_DIR.
  EnvVars BaseEnv() const;

 private:
  std::string root_;
  std::string ws_;
  std::string home_;
  std::string state_;
  std::vector<std::string> cleanup_paths_;
  std::vector<PausedProcess> paused_processes_;
  bool force_lived_in_ = false;
  std::string forced_root_parent_;
  std::unique_ptr<LivedInHome> lived_in_;
};

}  // namespace berth::e2e
