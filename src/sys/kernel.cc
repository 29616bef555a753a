#include "sys/kernel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <net/route.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "sys/landlock_abi.h"
#include "sys/retry.h"

namespace berth::sys::kernel {

namespace {

int Errno(int result) { return result == 0 ? 0 : errno; }

}  // namespace

int MakeMountsPrivate() {
  return Errno(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr));
}

int MountTmpfs(const char* target, const char* options, unsigned long flags) {
  return Errno(::mount("tmpfs", target, "tmpfs", flags | MS_NOSUID | MS_NODEV, options));
}

int MountProc(const char* target) {
  return Errno(::mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr));
}

int MountOverlay(const char* target, const char* options) {
  return Errno(::mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, options));
}

int MountDevpts(const char* target) {
  return Errno(::mount("devpts", target, "devpts", MS_NOSUID | MS_NOEXEC,
                       "newinstance,ptmxmode=0666,mode=620"));
}

int BindMount(const char* source, const char* target, bool recursive) {
  unsigned long flags = MS_BIND | (recursive ? MS_REC : 0);
  return Errno(::mount(source, target, nullptr, flags, nullptr));
}

int MakeReadOnly(const char* target, bool recursive) {
  // mount_setattr (Linux 5.12) changes a whole tree in one call; MS_REMOUNT cannot.
  struct mount_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  unsigned int flags = recursive ? AT_RECURSIVE : 0;
  return Errno(
      static_cast<int>(::syscall(SYS_mount_setattr, AT_FDCWD, target, flags, &attr, sizeof attr)));
}

int PivotRoot(const char* new_root, const char* put_old) {
  return Errno(static_cast<int>(::syscall(SYS_pivot_root, new_root, put_old)));
}

int EnterRoot(const char* new_root) {
  if (::chdir(new_root) != 0) return errno;
  if (::syscall(SYS_pivot_root, ".", ".") != 0) return errno;
  if (::umount2(".", MNT_DETACH) != 0) return errno;
  return Errno(::chdir("/"));
}

int MakeDir(const char* path, mode_t mode) {
  if (::mkdir(path, mode) == 0 || errno == EEXIST) return 0;
  return errno;
}

int MakeEmptyFile(const char* path, mode_t mode) {
  // A mount point that already exists (a file of the read-only host view) is used as it is:
  // opening it for writing there would fail with EROFS.
  struct stat st;
  if (::stat(path, &st) == 0) return 0;
  int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return errno == EEXIST ? 0 : errno;
  ::close(fd);
  return 0;
}

int MakeSymlink(const char* target, const char* link) {
  if (::symlink(target, link) == 0 || errno == EEXIST) return 0;
  return errno;
}

int ChangeDir(const char* path) { return Errno(::chdir(path)); }

int SetHostname(const char* name) { return Errno(::sethostname(name, std::strlen(name))); }

int BringUpLoopback() {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  struct ifreq req;
  std::memset(&req, 0, sizeof req);
  std::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(fd, SIOCGIFFLAGS, &req);
  if (rc == 0) {
    req.ifr_flags |= IFF_UP | IFF_RUNNING;
    rc = ::ioctl(fd, SIOCSIFFLAGS, &req);
  }
  int saved = rc == 0 ? 0 : errno;
  ::close(fd);
  return saved;
}

namespace {

// Adds an IPv4 route to `destination`/`mask` through the loopback with `flags`. SIOCADDRT
// rather than netlink: one fixed-size request, no allocation (this runs between clone and
// exec).
int AddLoopbackRoute(in_addr_t destination, in_addr_t mask, unsigned short flags) {
  struct rtentry route;
  std::memset(&route, 0, sizeof route);
  auto* dst = reinterpret_cast<struct sockaddr_in*>(&route.rt_dst);
  dst->sin_family = AF_INET;
  dst->sin_addr.s_addr = destination;
  auto* genmask = reinterpret_cast<struct sockaddr_in*>(&route.rt_genmask);
  genmask->sin_family = AF_INET;
  genmask->sin_addr.s_addr = mask;
  char device[] = "lo";
  route.rt_dev = device;
  route.rt_flags = flags;
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  int rc = ::ioctl(fd, SIOCADDRT, &route);
  int saved = rc == 0 ? 0 : errno;
  ::close(fd);
  return saved;
}

}  // namespace

// A route of type "blackhole" would not do: it fails connect at once too.
int AddBlackholeDefaultRoute() {
  return AddLoopbackRoute(htonl(INADDR_ANY), htonl(INADDR_ANY), RTF_UP);
}

int AddRejectRoute(const char* ipv4) {
  struct in_addr host;
  if (::inet_pton(AF_INET, ipv4, &host) != 1) return EINVAL;
  return AddLoopbackRoute(host.s_addr, htonl(INADDR_NONE), RTF_UP | RTF_HOST | RTF_REJECT);
}

int SetResourceLimit(int resource, rlim_t value) {
  struct rlimit limit = {value, value};
  return Errno(::setrlimit(static_cast<__rlimit_resource>(resource), &limit));
}

int SetNoNewPrivs() { return Errno(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)); }

int SetParentDeathSignal(int signal) { return Errno(::prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0)); }

int SetChildSubreaper() { return Errno(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)); }

int DropAllCapabilities() {
  // Securebits first: they need CAP_SETPCAP, which is dropped below.
  int bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 && errno != EPERM) return errno;
  for (int cap = 0; cap <= 63; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
      return errno;
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return errno;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  std::memset(data, 0, sizeof data);
  return Errno(static_cast<int>(::syscall(SYS_capset, &header, data)));
}

int WriteUserMap(pid_t pid, const char* file, const char* content) {
  char path[64];
  int n = 0;
  // Hand-rolled "/proc/%d/%s": snprintf is not async-signal-safe.
  const char prefix[] = "/proc/";
  std::memcpy(path, prefix, sizeof prefix - 1);
  n = sizeof prefix - 1;
  char digits[16];
  int d = 0;
  unsigned value = static_cast<unsigned>(pid);
  do {
    digits[d++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  while (d > 0) path[n++] = digits[--d];
  path[n++] = '/';
  for (const char* c = file; *c != '\0' && n < 62; ++c) path[n++] = *c;
  path[n] = '\0';
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int rc = WriteAll(fd, content, std::strlen(content));
  ::close(fd);
  return rc;
}

int LandlockCreateRuleset(uint64_t fs_access, uint64_t net_access, uint64_t scoped, int* fd) {
  landlock::RulesetAttr attr = {fs_access, net_access, scoped};
  // Older kernels reject a larger struct unless its extra fields are zero, so pass the
  // size that ends with the last non-zero field.
  size_t size = offsetof(landlock::RulesetAttr, handled_access_net);
  if (net_access != 0) size = offsetof(landlock::RulesetAttr, scoped);
  if (scoped != 0) size = sizeof attr;
  long rc = ::syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (rc < 0) return errno;
  *fd = static_cast<int>(rc);
  return 0;
}

int LandlockAllowPath(int ruleset_fd, const char* path, uint64_t access, bool optional) {
  int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return optional && errno == ENOENT ? 0 : errno;
  struct stat st;
  // Directory-only rights on a file are rejected with EINVAL.
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= landlock::kFileAccess;
  landlock::PathBeneathAttr rule = {access, fd};
  long rc = ::syscall(SYS_landlock_add_rule, ruleset_fd, landlock::kRulePathBeneath, &rule, 0);
  int saved = rc == 0 ? 0 : errno;
  ::close(fd);
  return saved;
}

int LandlockAllowPort(int ruleset_fd, uint64_t port, uint64_t access) {
  landlock::NetPortAttr rule = {access, port};
  long rc = ::syscall(SYS_landlock_add_rule, ruleset_fd, landlock::kRuleNetPort, &rule, 0);
  return rc == 0 ? 0 : errno;
}

int LandlockRestrictSelf(int ruleset_fd) {
  return Errno(static_cast<int>(::syscall(SYS_landlock_restrict_self, ruleset_fd, 0)));
}

int InstallSeccomp(const struct sock_fprog* program) {
  return Errno(static_cast<int>(::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, program)));
}

int InstallSeccompWithListener(const struct sock_fprog* program, int* fd) {
  long rc =
      ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, program);
  if (rc < 0) return errno;
  *fd = static_cast<int>(rc);
  return 0;
}

int SendFd(int socket, int fd) {
  char byte = 0;
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  std::memset(control, 0, sizeof control);
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  ssize_t n = RetryEintr([&] { return ::sendmsg(socket, &msg, MSG_NOSIGNAL); });
  return n == 1 ? 0 : errno;
}

int ListenTcpLoopback(uint16_t port, int* fd) {
  // Non-blocking, so that whoever serves it can poll and never hang in accept().
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  int one = 1;
  (void)::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in address;
  std::memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(s, reinterpret_cast<struct sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(s, 128) != 0) {
    int saved = errno;
    ::close(s);
    return saved;
  }
  *fd = s;
  return 0;
}

int WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

int WriteAllToPeer(int fd, const void* data, size_t size) {
  sigset_t broken_pipe;
  sigemptyset(&broken_pipe);
  sigaddset(&broken_pipe, SIGPIPE);
  sigset_t old;
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &broken_pipe, &old); rc != 0) return rc;
  // A SIGPIPE already pending is someone else's: it is left for them.
  sigset_t pending;
  sigemptyset(&pending);
  const bool was_pending = ::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
  int rc = WriteAll(fd, data, size);
  if (rc == EPIPE && !was_pending) {
    struct timespec now = {0, 0};
    (void)RetryEintr([&] { return ::sigtimedwait(&broken_pipe, nullptr, &now); });
  }
  (void)::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return rc;
}

int ReadAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, p + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return got == 0 ? ENODATA : EIO;
    got += static_cast<size_t>(n);
  }
  return 0;
}

int MakeSignalSet(std::initializer_list<int> signals, sigset_t* set) {
  if (sigemptyset(set) != 0) return errno;
  for (int signal : signals)
    if (sigaddset(set, signal) != 0) return errno;
  return 0;
}

int BlockSignals(const sigset_t* set, sigset_t* old) {
  return Errno(::sigprocmask(SIG_BLOCK, set, old));
}

int RestoreSignals(const sigset_t* old) { return Errno(::sigprocmask(SIG_SETMASK, old, nullptr)); }

int WaitSignal(const sigset_t* set, int* signo) {
  siginfo_t info;
  int rc = RetryEintr([&] { return ::sigwaitinfo(set, &info); });
  if (rc < 0) return errno;
  *signo = rc;
  return 0;
}

pid_t ForkRaw() {
  long pid = ::syscall(SYS_clone, SIGCHLD, 0, nullptr, nullptr, 0);
  return pid < 0 ? -errno : static_cast<pid_t>(pid);
}

pid_t ReapAny(int* status, bool no_hang) {
  pid_t pid = RetryEintr([&] { return ::waitpid(-1, status, no_hang ? WNOHANG : 0); });
  return pid < 0 ? -errno : pid;
}

int SendSignalTo(pid_t pid, int signal) { return Errno(::kill(pid, signal)); }

pid_t ReapChild(pid_t pid, int* status, bool no_hang) {
  pid_t reaped = RetryEintr([&] { return ::waitpid(pid, status, no_hang ? WNOHANG : 0); });
  return reaped < 0 ? -errno : reaped;
}

int SleepMillis(int millis) {
  struct timespec wait {
    millis / 1000, static_cast<long>(millis % 1000) * 1000000L
  };
  return Errno(::nanosleep(&wait, nullptr));
}

int FileHolds(const char* path, const char* text, char* buffer, size_t limit) {
  int fd = RetryEintr([&] { return ::open(path, O_RDONLY | O_CLOEXEC); });
  if (fd < 0) return errno;
  size_t size = 0;
  while (size < limit) {
    ssize_t n = RetryEintr([&] { return ::read(fd, buffer + size, limit - size); });
    if (n < 0) {
      int error = errno;
      ::close(fd);
      return error;
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  ::close(fd);
  const size_t length = std::strlen(text);
  for (size_t i = 0; i + length <= size; ++i)
    if (std::memcmp(buffer + i, text, length) == 0) return 0;
  return EAGAIN;
}

int ResetSignals() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &action, nullptr);  // EINVAL for reserved real-time signals is fine
  }
  sigset_t none;
  sigemptyset(&none);
  return Errno(::sigprocmask(SIG_SETMASK, &none, nullptr));
}

int CloseOnExecFrom3() {
  return Errno(static_cast<int>(::syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC)));
}

int CloseAllFrom3Except(int keep) {
  if (keep < 3) return Errno(static_cast<int>(::syscall(SYS_close_range, 3, ~0U, 0)));
  if (keep > 3) {
    if (int rc = Errno(static_cast<int>(::syscall(SYS_close_range, 3, keep - 1, 0))); rc != 0)
      return rc;
  }
  return Errno(static_cast<int>(::syscall(SYS_close_range, keep + 1, ~0U, 0)));
}

int PathExists(const char* path) {
  return Errno(::faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW));
}

int Execute(const char* path, char* const argv[], char* const envp[]) {
  ::execve(path, argv, envp);
  return errno;
}

int KillAllChildren() {
  char path[64] = "/proc/self/task/";
  // The calling thread's id, formatted by hand.
  char digits[16];
  int d = 0;
  unsigned value = static_cast<unsigned>(::syscall(SYS_gettid));
  do {
    digits[d++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  int n = static_cast<int>(std::strlen(path));
  while (d > 0) path[n++] = digits[--d];
  std::memcpy(path + n, "/children", 10);
  while (true) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    char buffer[4096];
    ssize_t len = RetryEintr([&] { return ::read(fd, buffer, sizeof buffer - 1); });
    ::close(fd);
    if (len <= 0) break;
    buffer[len] = '\0';
    for (char* p = buffer; *p != '\0';) {
      pid_t pid = 0;
      while (*p >= '0' && *p <= '9') pid = pid * 10 + (*p++ - '0');
      if (pid > 0) ::kill(pid, SIGKILL);
      while (*p == ' ' || *p == '\n') ++p;
      if (*p != '\0' && (*p < '0' || *p > '9')) break;
    }
    int status = 0;
    while (RetryEintr([&] { return ::waitpid(-1, &status, WNOHANG); }) > 0) {
    }
  }
  int status = 0;
  while (RetryEintr([&] { return ::waitpid(-1, &status, 0); }) > 0) {
  }
  return 0;
}

int CloseFd(int fd) { return Errno(::close(fd)); }

int DuplicateTo(int fd, int target) {
  if (fd == target) {
    int flags = ::fcntl(fd, F_GETFD);
    return flags < 0 ? errno : Errno(::fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC));
  }
  return ::dup2(fd, target) < 0 ? errno : 0;
}

void ExitNow(int code) { ::_exit(code); }

}  // namespace berth::sys::kernel
