#include "base/error.h"

#include <cerrno>
#include <cstring>

namespace berth {

const char* CauseName(Cause cause) {
  switch (cause) {
    case Cause::kInvalidArgument:
      return "invalid-argument";
    case Cause::kNotFound:
      return "not-found";
    case Cause::kUnavailable:
      return "unavailable";
    case Cause::kPermissionDenied:
      return "permission-denied";
    case Cause::kSystem:
      return "system";
    case Cause::kTimedOut:
      return "timed-out";
    case Cause::kPolicyDenied:
      return "policy-denied";
    case Cause::kBusy:
      return "busy";
    case Cause::kUnauthenticated:
      return "unauthenticated";
    case Cause::kInternal:
      return "internal";
    case Cause::kFenced:
      return "fenced";
  }
  return "internal";
}

Error Error::FromErrno(std::string what, int sys_errno) {
  Cause cause = Cause::kSystem;
  if (sys_errno == ENOENT) cause = Cause::kNotFound;
  if (sys_errno == EPERM || sys_errno == EACCES) cause = Cause::kPermissionDenied;
  return Error(cause, std::move(what), sys_errno);
}

Error& Error::AddContext(const std::string& context) {
  message_ = context + ": " + message_;
  return *this;
}

std::string Error::ToString() const {
  if (errno_ == 0) return message_;
  return message_ + ": " + std::strerror(errno_);
}

}  // namespace berth
