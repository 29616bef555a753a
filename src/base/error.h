// Error: what failed, why (a closed cause code plus errno), and what to do next.
//
// Errors are values. Functions that can fail expectedly return Result<T> (result.h);
// callers that branch on a failure switch on Cause, never on message text.
#pragma once

#include <string>

namespace berth {

// Closed set of failure causes. Callers branch on these; messages are for humans.
enum class Cause {
  kInvalidArgument,   // the caller asked for something malformed (usage errors)
  kNotFound,          // a named file, command or object does not exist
  kUnavailable,       // the host cannot give what was asked (kernel feature, tier)
  kPermissionDenied,  // the OS refused
  kSystem,            // an OS call failed for another reason; errno says which
  kTimedOut,
  kPolicyDenied,     // the repository's policy is missing, invalid, or forbids the request
  kBusy,             // no free slot, or the store is busy
  kUnauthenticated,  // credentials are missing or were refused
  kInternal,         // a library or invariant surprise; always a bug report
  kFenced,           // a worker wrote about a job after its claim on the job ended
};

const char* CauseName(Cause cause);

class Error {
 public:
  Error(Cause cause, std::string message, int sys_errno = 0, std::string hint = {})
      : cause_(cause), errno_(sys_errno), message_(std::move(message)), hint_(std::move(hint)) {}

  // An OS failure: `what` names the operation and its object, e.g. "open /etc/x".
  static Error FromErrno(std::string what, int sys_errno);

  Cause cause() const { return cause_; }
  int sys_errno() const { return errno_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

  // Prepends context: "reading policy: open /x: No such file or directory".
  Error& AddContext(const std::string& context);
  Error& WithHint(std::string hint) {
    hint_ = std::move(hint);
    return *this;
  }
  // A finer cause than Cause, as an enum of the module that made the error (e.g.
  // sandbox::LaunchFailure, read through that module's accessor); 0 when there is none. It
  // lets a caller switch on what failed where the message would otherwise be its only clue.
  int detail() const { return detail_; }
  Error& WithDetail(int detail) {
    detail_ = detail;
    return *this;
  }

  // message plus ": strerror" when errno is set.
  std::string ToString() const;

 private:
  Cause cause_;
  int errno_;
  std::string message_;
  std::string hint_;
  int detail_ = 0;
};

}  // namespace berth
