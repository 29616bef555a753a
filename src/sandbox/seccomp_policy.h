// The seccomp filter of a sandbox, compiled with libseccomp into a BPF program.
//
// Compiled at build time for every option set (seccomp_bpf_gen embeds the programs), so a
// start copies a ready program; libseccomp compiles at run time only an option set that is
// not embedded. The parent prepares the program and the child installs it with one
// syscall. Denied calls fail with EPERM so that programs see an ordinary refusal; clone3
// fails with ENOSYS so that libc falls back to clone, whose flags the filter can inspect.
// Syscalls of other ABIs (i386, x32) kill the process: their socketcall multiplexing
// cannot be filtered by argument.
#pragma once

#include <linux/filter.h>

#include <span>
#include <vector>

#include "base/result.h"

namespace berth::sandbox {

struct SeccompOptions {
  bool allow_user_namespaces = false;  // the `browser` grant
  bool deny_inet_datagrams = false;    // landlock tier: no netns, so no UDP to anywhere
  // Refuse new user namespaces through user notification rather than a plain EPERM, so that
  // the launcher can tell afterwards that the command tried (and name the grant it needed).
  bool notify_user_namespaces = false;
  // Notify connect() calls that may name a Unix socket so that the launcher can count those
  // aimed at a masked host socket; it always lets them go on (the mounts decide). Calls whose
  // address length is that of an IPv4 or IPv6 address are not notified, so TCP costs nothing.
  bool notify_unix_connects = false;
  // A new option takes the next bit of SeccompVariant and doubles kSeccompVariants; until it
  // does, option sets with it are compiled at run time (the round trip through the number
  // loses it).

  bool operator==(const SeccompOptions&) const = default;
};

// Each option set as a number below kSeccompVariants (one bit per option): the index of its
// program among those embedded at build time.
inline constexpr unsigned kSeccompVariants = 16;
unsigned SeccompVariant(const SeccompOptions& options);
SeccompOptions SeccompOptionsOfVariant(unsigned variant);

// The names of the syscalls the filter always denies, for documentation and reports.
const std::vector<const char*>& DeniedSyscalls();

// The program embedded at build time for these options; empty when there is none.
std::span<const struct sock_filter> EmbeddedSeccomp(const SeccompOptions& options);

// Compiles the program with libseccomp now: what the generator embeds, and the fallback.
Result<std::vector<struct sock_filter>> CompileSeccompNow(const SeccompOptions& options);

// The embedded program when there is one, else CompileSeccompNow's.
Result<std::vector<struct sock_filter>> CompileSeccomp(const SeccompOptions& options);

}  // namespace berth::sandbox
