#include "sys/seccomp_notify.h"

#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "sys/retry.h"

namespace berth::sys {

Result<UniqueFd> ReceiveFd(int socket) {
  char byte = 0;
  struct iovec iov = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = RetryEintr([&] { return ::recvmsg(socket, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC); });
  if (n < 0) return Error::FromErrno("receive the seccomp listener", errno);
  struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  if (n != 1 || cmsg == nullptr || cmsg->cmsg_type != SCM_RIGHTS)
    return Error(Cause::kInternal, "the sandbox sent no seccomp listener");
  int fd;
  std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
  return UniqueFd(fd);
}

namespace {

// The kernel's structures may be larger than this header's; ask for their sizes once.
struct seccomp_notif_sizes NotifSizes() {
  struct seccomp_notif_sizes sizes;
  std::memset(&sizes, 0, sizeof sizes);
  ::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes);
  if (sizes.seccomp_notif < sizeof(struct seccomp_notif))
    sizes.seccomp_notif = sizeof(struct seccomp_notif);
  if (sizes.seccomp_notif_resp < sizeof(struct seccomp_notif_resp))
    sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
  return sizes;
}

}  // namespace

ListenerState PollListener(int listener) {
  struct pollfd p = {listener, POLLIN, 0};
  if (RetryEintr([&] { return ::poll(&p, 1, 0); }) < 0) return ListenerState::kOrphaned;
  if (p.revents & POLLIN) return ListenerState::kPending;
  return (p.revents & (POLLHUP | POLLERR | POLLNVAL)) ? ListenerState::kOrphaned
                                                      : ListenerState::kIdle;
}

Result<std::optional<Notification>> ReceiveNotification(int listener) {
  static const struct seccomp_notif_sizes sizes = NotifSizes();
  std::vector<char> buffer(sizes.seccomp_notif, 0);
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, buffer.data()) != 0) {
    if (errno == ENOENT || errno == EINTR) return std::optional<Notification>();
    return Error::FromErrno("receive a seccomp notification", errno);
  }
  const auto* notif = reinterpret_cast<const struct seccomp_notif*>(buffer.data());
  Notification n;
  n.id = notif->id;
  n.pid = static_cast<pid_t>(notif->pid);
  n.syscall_nr = notif->data.nr;
  for (int i = 0; i < 6; ++i) n.args[i] = notif->data.args[i];
  return std::optional<Notification>(n);
}

namespace {

Status Respond(int listener, uint64_t id, int error, uint32_t flags) {
  static const struct seccomp_notif_sizes sizes = NotifSizes();
  std::vector<char> buffer(sizes.seccomp_notif_resp, 0);
  auto* resp = reinterpret_cast<struct seccomp_notif_resp*>(buffer.data());
  resp->id = id;
  resp->error = -error;
  resp->val = 0;
  resp->flags = flags;
  // ENOENT: the notifying thread died or its syscall was interrupted; nothing to answer.
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) != 0 && errno != ENOENT)
    return Error::FromErrno("answer a seccomp notification", errno);
  return {};
}

}  // namespace

Status DenyNotification(int listener, uint64_t id, int error) {
  return Respond(listener, id, error, 0);
}

Status ContinueNotification(int listener, uint64_t id) {
  return Respond(listener, id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

bool NotificationPending(int listener, uint64_t id) {
  return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

Result<std::string> ReadProcessMemory(pid_t pid, uint64_t address, size_t size) {
  std::string bytes(size, '\0');
  struct iovec local = {bytes.data(), size};
  struct iovec remote = {reinterpret_cast<void*>(static_cast<uintptr_t>(address)), size};
  ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (n < 0) return Error::FromErrno("read the memory of process " + std::to_string(pid), errno);
  bytes.resize(static_cast<size_t>(n));
  return bytes;
}

Result<std::string> ProcessCwd(pid_t pid) {
  const std::string link = "/proc/" + std::to_string(pid) + "/cwd";
  std::string target(4096, '\0');
  ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
  if (n < 0) return Error::FromErrno("read " + link, errno);
  if (static_cast<size_t>(n) == target.size())
    return Error(Cause::kInternal, link + " is too long");
  target.resize(static_cast<size_t>(n));
  return target;
}

}  // namespace berth::sys
