#include "tests/e2e/e2e_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>

#include "sys/disk.h"
#include "sys/fs.h"
#include "sys/retry.h"
#include "sys/spawn.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace berth::e2e {

namespace {

// Far beyond any run of the suite; only a hung berth reaches it. A real agent CLI's first run
// in a fresh home takes a few seconds on an idle machine, and CI runs the suites beside the
// clang build: there the first Codex run of the lived-in suite once took over 30 s (8 times
// its idle time), so the bound leaves room for that.
constexpr std::chrono::seconds kRunDeadline{120};
constexpr uint32_t kLandlockCreateRulesetVersion = 1u << 0;
constexpr int kListenBacklog = 16;

int64_t MillisUntil(std::chrono::steady_clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                               std::chrono::steady_clock::now())
      .count();
}

std::string Join(const std::vector<std::string>& parts) {
  std::string joined;
  for (const std::string& part : parts) joined += (joined.empty() ? "" : " ") + part;
  return joined;
}

// "NAME=VALUE" strings, the last value of each name winning, in first-seen order.
std::vector<std::string> EnvironmentStrings(const EnvVars& env) {
  std::map<std::string, size_t> last;
  for (size_t i = 0; i < env.size(); ++i) last[env[i].first] = i;
  std::vector<std::string> strings;
  for (size_t i = 0; i < env.size(); ++i) {
    if (last[env[i].first] == i) strings.push_back(env[i].first + "=" + env[i].second);
  }
  return strings;
}

// Appends what `fd` has to `out`; closes it at end of file. Returns false when it would block.
bool ReadSome(sys::UniqueFd& fd, std::string* out) {
  char buf[4096];
  ssize_t n = sys::RetryEintr([&] { return read(fd.get(), buf, sizeof(buf)); });
  if (n > 0) {
    out->append(buf, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && errno == EAGAIN) return false;
  fd.Reset();  // end of file, or an error that ends the stream just the same
  return false;
}

// Reads both pipes until `pid` exits, then drains what they already hold without waiting for
// end of file: a process the program left behind may keep them open.
void CollectOutput(pid_t pid, sys::UniqueFd out_fd, sys::UniqueFd err_fd,
                   std::chrono::seconds limit, RunResult* result) {
  sys::UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd.valid()) ADD_FAILURE() << "pidfd_open: " << std::strerror(errno);
  auto deadline = std::chrono::steady_clock::now() + limit;
  bool killed = false;
  for (bool exited = !pidfd.valid(); !exited;) {
    if (!killed && MillisUntil(deadline) <= 0) {
      ADD_FAILURE() << "still running after " << limit.count() << " s, killed: " << result->command;
      kill(pid, SIGKILL);
      killed = true;
    }
    pollfd fds[3] = {
        {pidfd.get(), POLLIN, 0}, {out_fd.get(), POLLIN, 0}, {err_fd.get(), POLLIN, 0}};
    int timeout = killed ? -1 : static_cast<int>(std::max<int64_t>(MillisUntil(deadline), 0));
    if (poll(fds, 3, timeout) < 0 && errno != EINTR) {
      ADD_FAILURE() << "poll: " << std::strerror(errno);
      break;
    }
    if (fds[1].revents != 0) ReadSome(out_fd, &result->out);
    if (fds[2].revents != 0) ReadSome(err_fd, &result->err);
    exited = fds[0].revents != 0;
  }
  for (auto [fd, text] : {std::pair{&out_fd, &result->out}, std::pair{&err_fd, &result->err}}) {
    if (!fd->valid()) continue;
    fcntl(fd->get(), F_SETFL, fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
    while (fd->valid() && ReadSome(*fd, text)) {
    }
  }
  int status = 0;
  if (sys::RetryEintr([&] { return waitpid(pid, &status, 0); }) < 0) {
    ADD_FAILURE() << "waitpid: " << std::strerror(errno);
    return;
  }
  result->exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

Result<BoundSocket> BindInet(const std::string& address, int type) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1)
    return Error(Cause::kInvalidArgument, "not an IPv4 address: " + address);
  BoundSocket bound{sys::UniqueFd(socket(AF_INET, type | SOCK_CLOEXEC, 0))};
  if (!bound.fd.valid()) return Error::FromErrno("socket", errno);
  if (bind(bound.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    return Error::FromErrno("bind " + address, errno);
  if (type == SOCK_STREAM && listen(bound.fd.get(), kListenBacklog) != 0)
    return Error::FromErrno("listen " + address, errno);
  socklen_t len = sizeof(addr);
  if (getsockname(bound.fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return Error::FromErrno("getsockname", errno);
  bound.port = ntohs(addr.sin_port);
  return bound;
}

// `offset` 1 puts the name in the abstract namespace (a leading NUL, no trailing one).
Result<BoundSocket> ListenUnixAt(const std::string& name, size_t offset) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (offset + name.size() >= sizeof(addr.sun_path))
    return Error(Cause::kInvalidArgument, "unix socket name too long: " + name);
  std::memcpy(addr.sun_path + offset, name.data(), name.size());
  socklen_t len = offsetof(sockaddr_un, sun_path) + offset + name.size() + (offset == 0 ? 1 : 0);
  BoundSocket bound{sys::UniqueFd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0))};
  if (!bound.fd.valid()) return Error::FromErrno("socket", errno);
  if (bind(bound.fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
    return Error::FromErrno("bind unix socket " + name, errno);
  if (listen(bound.fd.get(), kListenBacklog) != 0)
    return Error::FromErrno("listen unix socket " + name, errno);
  return bound;
}

}  // namespace

std::string RunResult::Describe() const {
  return "`" + command + "` exited " + std::to_string(exit_code) + "\n--- stdout ---\n" + out +
         "--- stderr ---\n" + err + "--------------";
}

RunningProgram StartProgram(const std::vector<std::string>& argv, const EnvVars& env,
                            const std::string& cwd) {
  RunningProgram program;
  program.command_ = Join(argv);
  Result<sys::Pipe> out = sys::MakePipe();
  Result<sys::Pipe> err = sys::MakePipe();
  if (!out || !err) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return program;
  }
  sys::SpawnOptions options;
  options.argv = argv;
  options.env = EnvironmentStrings(env);
  options.cwd = cwd;
  options.stdio[0] = sys::kDevNull;
  options.stdio[1] = out->write.get();
  options.stdio[2] = err->write.get();
  Result<sys::Process> spawned = sys::Spawn(options);
  if (!spawned) {
    ADD_FAILURE() << program.command_ << ": " << spawned.error().ToString();
    return program;
  }
  // RunningProgram kills and reaps it itself (KillAndReap, CollectOutput).
  pid_t pid = spawned->Release();
  program.pid_ = pid;
  program.out_ = std::move(out->read);
  program.err_ = std::move(err->read);
  return program;
}

RunningProgram::RunningProgram(RunningProgram&& other) noexcept
    : command_(std::move(other.command_)),
      pid_(std::exchange(other.pid_, -1)),
      out_(std::move(other.out_)),
      err_(std::move(other.err_)) {}

RunningProgram& RunningProgram::operator=(RunningProgram&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    command_ = std::move(other.command_);
    pid_ = std::exchange(other.pid_, -1);
    out_ = std::move(other.out_);
    err_ = std::move(other.err_);
  }
  return *this;
}

RunningProgram::~RunningProgram() { KillAndReap(); }

void RunningProgram::KillAndReap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  sys::RetryEintr([&] { return waitpid(pid_, nullptr, 0); });
  pid_ = -1;
}

RunResult RunningProgram::Wait() { return Wait(kRunDeadline); }

RunResult RunningProgram::Wait(std::chrono::seconds limit) {
  RunResult result;
  result.command = command_;
  if (pid_ <= 0) return result;
  CollectOutput(std::exchange(pid_, -1), std::move(out_), std::move(err_), limit, &result);
  return result;
}

RunResult RunProgram(const std::vector<std::string>& argv, const EnvVars& env,
                     const std::string& cwd) {
  return StartProgram(argv, env, cwd).Wait();
}

bool IsRoot() { return geteuid() == 0; }

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && ci[0] != '\0';
}

int LandlockAbi() {
  long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::optional<std::string> HostIpv4Address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* entry = list; entry != nullptr && !found; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    if ((entry->ifa_flags & IFF_LOOPBACK) != 0 || (entry->ifa_flags & IFF_UP) == 0) continue;
    char text[INET_ADDRSTRLEN] = "";
    auto* addr = reinterpret_cast<sockaddr_in*>(entry->ifa_addr);
    if (inet_ntop(AF_INET, &addr->sin_addr, text, sizeof(text)) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
}

std::optional<std::string> FindInPath(const std::string& name) {
  for (const char* dir : {"/usr/local/bin", "/usr/bin", "/bin"}) {
    std::string path = std::string(dir) + "/" + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return std::nullopt;
}

void RequireFeature(bool ok, const std::string& reason) {
  if (ok) return;
  if (InCi()) FAIL() << "host feature missing, and CI is set so this is a failure: " << reason;
  GTEST_SKIP() << "SKIPPED LOUDLY: " << reason;
}

bool PathExists(const std::string& path) { return sys::TypeOf(path) != sys::FileType::kMissing; }

std::string ReadText(const std::string& path) {
  Result<std::string> text = sys::ReadFile(path);
  return text ? *text : "<unreadable: " + text.error().ToString() + ">";
}

Status WriteText(const std::string& path, const std::string& content, mode_t mode) {
  sys::UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd.valid()) return Error::FromErrno("open " + path, errno);
  if (write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size()))
    return Error::FromErrno("write " + path, errno);
  return {};
}

std::vector<pid_t> ProcessesWithArgument(const std::string& token) {
  std::vector<pid_t> pids;
  Result<std::vector<std::string>> entries = sys::ListDir("/proc");
  if (!entries) return pids;
  for (const std::string& name : *entries) {
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    Result<std::string> cmdline = sys::ReadFile("/proc/" + name + "/cmdline");
    if (!cmdline) continue;  // it ended meanwhile
    for (char& c : *cmdline) c = c == '\0' ? ' ' : c;
    if (cmdline->find(token) != std::string::npos) pids.push_back(std::atoi(name.c_str()));
  }
  return pids;
}

bool WaitUntilNoProcessWithArgument(const std::string& token, std::chrono::milliseconds limit) {
  constexpr std::chrono::milliseconds kRescanInterval{10};
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!ProcessesWithArgument(token).empty()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kRescanInterval);
  }
  return true;
}

int KillProcessesWithArgument(const std::string& token) {
  int killed = 0;
  for (pid_t pid : ProcessesWithArgument(token)) {
    if (pid != getpid() && kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

bool WaitUntil(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  constexpr std::chrono::milliseconds kPollInterval{20};
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

bool WaitForWorkspaceFile(const std::string& job_dir, const std::string& path,
                          std::chrono::milliseconds limit) {
  return WaitUntil(
      [&] {
        return PathExists(job_dir + "/upper/" + path) || PathExists(job_dir + "/copy/" + path);
      },
      limit);
}

namespace {

void FingerprintInto(const std::string& dir, const std::string& prefix,
                     std::map<std::string, std::string>* out) {
  Result<std::vector<std::string>> names = sys::ListDir(dir);
  if (!names) {
    (*out)[prefix + "<list>"] = names.error().ToString();
    return;
  }
  for (const std::string& name : *names) {
    const std::string path = dir + "/" + name;
    const std::string key = prefix + name;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      (*out)[key] = std::string("lstat: ") + std::strerror(errno);
      continue;
    }
    std::string mode = std::to_string(st.st_mode & 07777);
    if (S_ISDIR(st.st_mode)) {
      (*out)[key] = "dir " + mode;
      FingerprintInto(path, key + "/", out);
    } else if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlink(path.c_str(), target, sizeof(target));
      (*out)[key] = "symlink -> " + (n < 0 ? std::string("?") : std::string(target, n));
    } else if (S_ISREG(st.st_mode)) {
      Result<std::string> content = sys::ReadFile(path);
      (*out)[key] = "file " + mode + " " +
                    (content ? *content : "<unreadable: " + content.error().ToString() + ">");
    } else {
      (*out)[key] = "special " + std::to_string(st.st_mode) + " rdev " + std::to_string(st.st_rdev);
    }
  }
}

}  // namespace

std::map<std::string, std::string> TreeFingerprint(const std::string& dir) {
  std::map<std::string, std::string> entries;
  FingerprintInto(dir, "", &entries);
  return entries;
}

Status MakeTreeRemovable(const std::string& path) {
  if (sys::TypeOf(path) != sys::FileType::kDirectory) return {};
  // Pre-order: each directory is opened for the walk after the callback has made it so.
  auto open_up = [](const char* p, const struct stat* st, int type, struct FTW*) -> int {
    if (type == FTW_D || type == FTW_DNR) chmod(p, (st->st_mode & 07777) | S_IRWXU);
    return 0;
  };
  if (nftw(path.c_str(), open_up, 16, FTW_PHYS) != 0)
    return Error::FromErrno("chmod -R u+rwx " + path, errno);
  return {};
}

Result<BoundSocket> ListenTcp(const std::string& address) { return BindInet(address, SOCK_STREAM); }

Result<BoundSocket> BindUdp(const std::string& address) { return BindInet(address, SOCK_DGRAM); }

Result<BoundSocket> ListenUnix(const std::string& path) { return ListenUnixAt(path, 0); }

Result<BoundSocket> ListenAbstract(const std::string& name) { return ListenUnixAt(name, 1); }

std::optional<std::string> ReceiveDatagram(int fd, std::chrono::milliseconds wait) {
  pollfd pfd = {fd, POLLIN, 0};
  if (sys::RetryEintr([&] { return poll(&pfd, 1, static_cast<int>(wait.count())); }) <= 0)
    return std::nullopt;
  char buf[512];
  ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

Result<PausedProcess> PausedProcess::Start() {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Error::FromErrno("fork", errno);
  if (pid == 0) {
    // Only async-signal-safe calls here. Die with the test rather than outlive it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    for (;;) pause();
  }
  return PausedProcess(pid);
}

PausedProcess::PausedProcess(PausedProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)) {}

PausedProcess& PausedProcess::operator=(PausedProcess&& other) noexcept {
  if (this != &other) {
    KillAndReap();
    pid_ = std::exchange(other.pid_, -1);
  }
  return *this;
}

PausedProcess::~PausedProcess() { KillAndReap(); }

void PausedProcess::KillAndReap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  sys::RetryEintr([&] { return waitpid(pid_, nullptr, 0); });
  pid_ = -1;
}

namespace {

// The variant chosen by BERTH_TEST_HOME and BERTH_TEST_ROOT, checked once per binary.
struct Variant {
  bool lived_in = false;
  std::string root_parent = "/var/tmp";
  std::string error;  // a bad value: every test fails with it
};

const Variant& EnvironmentVariant() {
  static const Variant kVariant = [] {
    Variant v;
    const char* home = std::getenv("BERTH_TEST_HOME");
    const std::string home_value = home == nullptr ? "" : home;
    if (home_value == "lived-in") {
      v.lived_in = true;
    } else if (!home_value.empty() && home_value != "empty") {
      v.error = "BERTH_TEST_HOME=" + home_value + ": expected 'empty' or 'lived-in'";
    }
    const char* root = std::getenv("BERTH_TEST_ROOT");
    if (root != nullptr && root[0] != '\0') {
      v.root_parent = root;
      bool is_dir = sys::TypeOfFollowing(v.root_parent) == sys::FileType::kDirectory;
      if (v.root_parent[0] != '/' || !is_dir)
        v.error = "BERTH_TEST_ROOT=" + v.root_parent + ": expected an existing absolute directory";
    }
    std::printf("berth e2e variant: HOME %s, ROOT under %s\n", v.lived_in ? "lived-in" : "empty",
                v.root_parent.c_str());
    std::fflush(stdout);
    return v;
  }();
  return kVariant;
}

}  // namespace

void SandboxTest::SetUp() {
  const Variant& variant = EnvironmentVariant();
  ASSERT_TRUE(variant.error.empty()) << variant.error;
  const std::string& parent =
      forced_root_parent_.empty() ? variant.root_parent : forced_root_parent_;
  Result<std::string> made = sys::MakeTempDir(parent, "berth-e2e-");
  ASSERT_TRUE(made) << made.error().ToString();
  // berth resolves the workspace through symlinks; so do we, to compare paths it reports.
  Result<std::string> real = sys::RealPath(*made);
  root_ = real ? *real : *made;
  ASSERT_EQ(chmod(root_.c_str(), 0755), 0) << std::strerror(errno);
  ws_ = root_ + "/ws";
  home_ = root_ + "/home";
  state_ = root_ + "/state";
  for (const std::string& dir : {ws_, home_ + "/.ssh", home_ + "/.aws", state_}) {
    Status made_dir = sys::MakeDirs(dir, 0755);
    ASSERT_TRUE(made_dir) << made_dir.error().ToString();
  }
  for (const auto& [path, content] : {std::pair{home_ + "/.ssh/id_rsa", "SECRET-KEY\n"},
                                      std::pair{home_ + "/.aws/credentials", "SECRET-KEY\n"},
                                      std::pair{home_ + "/.netrc", "SECRET-KEY\n"}}) {
    Status written = WriteText(path, content, 0600);
    ASSERT_TRUE(written) << written.error().ToString();
  }
  if (variant.lived_in || force_lived_in_) {
    Result<std::unique_ptr<LivedInHome>> lived_in = LivedInHome::Create(home_);
    ASSERT_TRUE(lived_in) << lived_in.error().ToString();
    lived_in_ = std::move(*lived_in);
  }
}

void SandboxTest::TearDown() {
  paused_processes_.clear();
  lived_in_.reset();
  for (const std::string& path : cleanup_paths_) {
    Status removed = sys::RemoveTree(path);
    EXPECT_TRUE(removed) << removed.error().ToString();
  }
  if (root_.empty()) return;
  // Forcibly, as berth gc does: a job whose supervisor was killed leaves its overlays' work
  // dirs with mode-000 directories inside (overlayfs's work/work, a volatile mount's mark).
  Status removed = sys::RemoveTreeForcibly(root_);
  EXPECT_TRUE(removed) << removed.error().ToString();
}

EnvVars SandboxTest::BaseEnv() const {
  EnvVars env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"HOME", home_}, {"BERTH_STATE_DIR", state_}};
  // A sanitizer tree's berth runs with the options the suite was given (scripts/asan-tests).
  for (const char* name : {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"})
    if (const char* value = std::getenv(name)) env.emplace_back(name, value);
  return env;
}

RunResult SandboxTest::Run(const std::vector<std::string>& args, const EnvVars& env) const {
  std::vector<std::string> argv = {BERTH_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  EnvVars full_env = BaseEnv();
  full_env.insert(full_env.end(), env.begin(), env.end());
  return RunProgram(argv, full_env, ws_);
}

RunResult SandboxTest::Probe(const std::vector<std::string>& op,
                             const std::vector<std::string>& berth_args, const EnvVars& env) const {
  std::vector<std::string> args = {"sandbox"};
  args.insert(args.end(), berth_args.begin(), berth_args.end());
  args.insert(args.end(), {"--", SANDBOX_PROBE});
  args.insert(args.end(), op.begin(), op.end());
  return Run(args, env);
}

RunningProgram SandboxTest::Start(const std::vector<std::string>& args, const EnvVars& env) const {
  std::vector<std::string> argv = {BERTH_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  EnvVars full_env = BaseEnv();
  full_env.insert(full_env.end(), env.begin(), env.end());
  return StartProgram(argv, full_env, ws_);
}

RunResult SandboxTest::RunOutside(const std::vector<std::string>& argv) const {
  return RunProgram(argv, BaseEnv(), ws_);
}

RunResult SandboxTest::ProbeOutside(const std::vector<std::string>& op) const {
  std::vector<std::string> argv = {SANDBOX_PROBE};
  argv.insert(argv.end(), op.begin(), op.end());
  return RunOutside(argv);
}

std::string SandboxTest::UniqueName(const std::string& what) const {
  return root_.substr(root_.rfind('/') + 1) + "-" + what;
}

pid_t SandboxTest::StartPausedProcess() {
  Result<PausedProcess> process = PausedProcess::Start();
  if (!process) {
    ADD_FAILURE() << process.error().ToString();
    return -1;
  }
  pid_t pid = process->pid();
  paused_processes_.push_back(std::move(*process));
  return pid;
}

}  // namespace berth::e2e
