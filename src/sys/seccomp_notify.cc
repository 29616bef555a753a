#include "sys/seccomp_notify.h"

#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
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
  n.syscall_nr = notif->data.nr;
  for (int i = 0; i < 6; ++i) n.args[i] = notif->data.args[i];
  return std::optional<Notification>(n);
}

Status DenyNotification(int listener, uint64_t id, int error) {
  static const struct seccomp_notif_sizes sizes = NotifSizes();
  std::vector<char> buffer(sizes.seccomp_notif_resp, 0);
  auto* resp = reinterpret_cast<struct seccomp_notif_resp*>(buffer.data());
  resp->id = id;
  resp->error = -error;
  resp->val = 0;
  resp->flags = 0;
  // ENOENT: the notifying thread died or its syscall was interrupted; nothing to answer.
  if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) != 0 && errno != ENOENT)
    return Error::FromErrno("answer a seccomp notification", errno);
  return {};
}

}  // namespace berth::sys
