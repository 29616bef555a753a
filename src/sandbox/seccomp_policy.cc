#include "sandbox/seccomp_policy.h"

#include <linux/sched.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sys/fs.h"

namespace berth::sandbox {

namespace {

struct ContextDeleter {
  void operator()(scmp_filter_ctx ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

Error SeccompError(const std::string& what, int rc) {
  return Error(Cause::kInternal, "seccomp: " + what, -rc);
}

}  // namespace

const std::vector<const char*>& DeniedSyscalls() {
  static const std::vector<const char*> kDenied = {
      // Kernel code and kernel state.
      "init_module",
      "finit_module",
      "delete_module",
      "kexec_load",
      "kexec_file_load",
      "bpf",
      "perf_event_open",
      "reboot",
      "swapon",
      "swapoff",
      "acct",
      "syslog",
      "quotactl",
      "lookup_dcookie",
      "uselib",
      "vhangup",
      "iopl",
      "ioperm",
      // Time is global.
      "settimeofday",
      "clock_settime",
      "clock_adjtime",
      "adjtimex",
      // Mounts: the job's namespace is built before the filter and never changes after.
      "mount",
      "umount2",
      "pivot_root",
      "move_mount",
      "fsopen",
      "fsconfig",
      "fsmount",
      "fspick",
      "open_tree",
      "mount_setattr",
      // io_uring bypasses seccomp for the operations it performs.
      "io_uring_setup",
      "io_uring_enter",
      "io_uring_register",
      // The kernel keyring is not namespaced.
      "keyctl",
      "add_key",
      "request_key",
      // File handles escape bind mounts; userfaultfd is an exploitation primitive.
      "open_by_handle_at",
      "name_to_handle_at",
      "userfaultfd",
  };
  return kDenied;
}

Result<std::vector<struct sock_filter>> CompileSeccomp(const SeccompOptions& options) {
  // Without an API level libseccomp probes the kernel with a handful of seccomp() calls on
  // every start; level 6 (Linux 5.x: user notification, TSYNC_ESRCH) is what berth needs anyway.
  static const bool kApiSet = seccomp_api_set(6) == 0;
  (void)kApiSet;
  Context ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Error(Cause::kInternal, "seccomp_init failed");
  scmp_filter_ctx c = ctx.get();
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  for (const char* name : DeniedSyscalls()) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    if ((rc = seccomp_rule_add(c, deny, nr, 0)) < 0) return SeccompError(name, rc);
  }
  // clone3 passes its flags in memory the filter cannot read.
  if ((rc = seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
    return SeccompError("clone3", rc);
  if (!options.allow_user_namespaces) {
    const scmp_datum_t userns = CLONE_NEWUSER;
    const uint32_t refuse = options.notify_user_namespaces ? SCMP_ACT_NOTIFY : deny;
    if ((rc = seccomp_rule_add(c, refuse, SCMP_SYS(unshare), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, userns, userns))) < 0 ||
        (rc = seccomp_rule_add(c, refuse, SCMP_SYS(clone), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, userns, userns))) < 0 ||
        (rc = seccomp_rule_add(c, deny, SCMP_SYS(setns), 0)) < 0 ||
        (rc = seccomp_rule_add(c, deny, SCMP_SYS(chroot), 0)) < 0)
      return SeccompError("user namespace rules", rc);
  }
  if (options.notify_unix_connects) {
    // A pathname sockaddr_un is 3 to 110 bytes long; 16 and 28 are sockaddr_in and
    // sockaddr_in6 (a 13/14- or 25/26-byte Unix path has those lengths too and goes uncounted).
    // libseccomp takes one comparison per argument and rule, so the lengths 0..15, 17..27 and
    // 29..127 are covered by masked ranges, one rule each.
    static_assert(sizeof(struct sockaddr_in) == 16 && sizeof(struct sockaddr_in6) == 28 &&
                  sizeof(struct sockaddr_un) <= 127);
    constexpr scmp_datum_t kAll = ~scmp_datum_t{0};
    const struct {
      scmp_datum_t mask, value;
    } kLengths[] = {
        {kAll & ~scmp_datum_t{15}, 0},  {kAll, 17},
        {kAll & ~scmp_datum_t{1}, 18},  {kAll & ~scmp_datum_t{3}, 20},
        {kAll & ~scmp_datum_t{3}, 24},  {kAll, 29},
        {kAll & ~scmp_datum_t{1}, 30},  {kAll & ~scmp_datum_t{31}, 32},
        {kAll & ~scmp_datum_t{63}, 64},
    };
    for (const auto& length : kLengths) {
      if ((rc = seccomp_rule_add(c, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 1,
                                 SCMP_A2(SCMP_CMP_MASKED_EQ, length.mask, length.value))) < 0)
        return SeccompError("connect notification", rc);
    }
  }
  // Raw and packet sockets: no job needs to forge packets. (SCMP_CMP_EQ ignores the second
  // datum; it is written out because clang warns about the field the macro leaves out.)
  const scmp_datum_t type_mask = 0xf;  // SOCK_CLOEXEC and SOCK_NONBLOCK live above it
  if ((rc = seccomp_rule_add(c, deny, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_PACKET, 0))) < 0)
    return SeccompError("socket(AF_PACKET)", rc);
  for (scmp_datum_t family : {scmp_datum_t{AF_INET}, scmp_datum_t{AF_INET6}}) {
    if ((rc = seccomp_rule_add(c, deny, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, family, 0),
                               SCMP_A1(SCMP_CMP_MASKED_EQ, type_mask, SOCK_RAW))) < 0)
      return SeccompError("socket(SOCK_RAW)", rc);
    if (options.deny_inet_datagrams &&
        (rc = seccomp_rule_add(c, deny, SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, family, 0),
                               SCMP_A1(SCMP_CMP_MASKED_EQ, type_mask, SOCK_DGRAM))) < 0)
      return SeccompError("socket(SOCK_DGRAM)", rc);
  }
  // TIOCSTI and TIOCLINUX push input into a terminal the job may share with the user.
  for (unsigned long request :
       {static_cast<unsigned long>(TIOCSTI), static_cast<unsigned long>(TIOCLINUX)}) {
    if ((rc = seccomp_rule_add(c, deny, SCMP_SYS(ioctl), 1,
                               SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request))) < 0)
      return SeccompError("ioctl", rc);
  }

  Result<sys::UniqueFd> memfd = sys::OpenMemFd("berth-seccomp");
  if (!memfd) return std::move(memfd).error();
  if ((rc = seccomp_export_bpf(c, memfd->get())) < 0) return SeccompError("export", rc);
  Result<std::string> bytes = sys::ReadFile("/proc/self/fd/" + std::to_string(memfd->get()));
  if (!bytes) return std::move(bytes).error();
  if (bytes->empty() || bytes->size() % sizeof(struct sock_filter) != 0)
    return Error(Cause::kInternal, "seccomp: exported program has a bad size");
  std::vector<struct sock_filter> program(bytes->size() / sizeof(struct sock_filter));
  std::memcpy(program.data(), bytes->data(), bytes->size());
  return program;
}

}  // namespace berth::sandbox
