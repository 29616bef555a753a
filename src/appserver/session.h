// Session: berth's side of one `codex app-server` conversation over the server's stdin and
// stdout (docs/app-server.md). It starts one ephemeral thread, runs one turn in it, answers
// every request the server makes from the policy alone (policy::DecideApproval), and ends
// the turn with turn/interrupt when asked to stop.
//
// Owned by the job's supervisor; Run() runs on one thread, Interrupt() may be called from any
// other (the launcher's, when the job is cancelled or its deadline passes).
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "appserver/protocol.h"
#include "base/result.h"
#include "policy/approval_decision.h"
#include "sys/unique_fd.h"

namespace berth::appserver {

// One request the server made and berth's answer.
struct Exchange {
  policy::ApprovalRequest request;
  policy::ApprovalDecision decision;
  std::string asked;  // Asked(request)
};

// Where the session reports; called on Run()'s thread.
class SessionObserver {
 public:
  virtual ~SessionObserver() = default;
  virtual void OnLine(std::string_view line) = 0;  // every line the server wrote
  // A job event: step "appserver" (the protocol) or "approval" (a decision).
  virtual void OnEvent(const std::string& step, const std::string& detail) = 0;
  virtual void OnExchange(const Exchange& exchange) = 0;
};

struct SessionEnd {
  enum class Kind {
    kCompleted,    // turn/completed with status completed
    kFailed,       // the turn failed, or the server answered one of berth's requests with an error
    kInterrupted,  // the turn ended interrupted (berth asked, or an approval said cancel)
    kServerGone,   // the server's output ended, or its process exited, before the turn ended
  };
  Kind kind = Kind::kServerGone;
  std::string detail;  // the server's words for a failure
  std::string thread_id;
  std::string turn_id;
};
const char* SessionEndName(SessionEnd::Kind kind);

class Session {
 public:
  // `to_server` is the write end of the server's stdin (closed when the turn ends, so that the
  // server exits); `from_server` the read end of its stdout, not owned.
  static Result<Session> Create(sys::UniqueFd to_server, int from_server,
                                policy::ApprovalRules rules, policy::ApprovalContext context,
                                SessionObserver& observer);

  // Runs the conversation: initialize, initialized, thread/start, turn/start, then every
  // message until the turn ends. Returns early when `gone_fd` becomes readable (the server's
  // process has exited) or the server's output ends.
  SessionEnd Run(const TurnSpec& turn, const std::string& berth_version, int gone_fd);

  // Asks the turn to stop: turn/interrupt as soon as the turn exists (at once when it does).
  // Thread-safe, idempotent.
  void Interrupt();

  Session(Session&&) = default;

 private:
  Session(sys::UniqueFd to_server, int from_server, sys::UniqueFd interrupt,
          policy::ApprovalRules rules, policy::ApprovalContext context, SessionObserver& observer)
      : to_server_(std::move(to_server)),
        from_server_(from_server),
        interrupt_(std::move(interrupt)),
        rules_(std::move(rules)),
        context_(std::move(context)),
        observer_(&observer) {}

  class Conversation;

  sys::UniqueFd to_server_;
  int from_server_;
  sys::UniqueFd interrupt_;  // eventfd: Interrupt() was called
  policy::ApprovalRules rules_;
  policy::ApprovalContext context_;
  SessionObserver* observer_;
};

}  // namespace berth::appserver
