// AppServerTurn: a job's agent turn through `codex app-server` (docs/app-server.md). It owns
// the pipes that are the server's stdin and stdout and the thread that speaks the protocol
// (appserver::Session), copies every line the server writes to the job's stdout capture,
// reports the protocol and every approval as job events, and keeps the approvals for the
// receipt.
//
// Threading: Start() runs the session on its own thread, which calls `on_event` until
// Finish() has joined it. The runner makes no other use of its store in between (it is
// inside the launch), so the store still has one thread at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "appserver/session.h"
#include "base/result.h"
#include "job/receipt.h"
#include "policy/approval_decision.h"
#include "sys/unique_fd.h"

namespace berth::job {

class AppServerTurn {
 public:
  using EventSink = std::function<void(const std::string& step, const std::string& detail)>;

  // `transcript` is where each line the server writes is copied (the stdout capture's pipe);
  // not owned, and written only by the session's thread.
  static Result<std::unique_ptr<AppServerTurn>> Start(appserver::TurnSpec turn,
                                                      policy::ApprovalRules rules,
                                                      policy::ApprovalContext context,
                                                      int transcript, EventSink on_event);
  ~AppServerTurn();

  // The ends the server's process gets as its stdin and stdout.
  int server_stdin() const { return to_server_.read.get(); }
  int server_stdout() const { return from_server_.write.get(); }
  // Readable when the turn is over but the server has not exited kExitGraceMs after the end of
  // its stdin: the launcher's end_fd, which ends its tree.
  int end_fd() const { return end_.get(); }
  static constexpr int kExitGraceMs = 5000;

  // The launcher's stop (cancel, deadline, lost lease): turn/interrupt. Any thread.
  void Interrupt();

  // After the server's process has ended: lets the session read what is left, joins it, and
  // returns how the turn ended.
  appserver::SessionEnd Finish();

  const std::vector<ApprovalRecord>& approvals() const { return approvals_; }

 private:
  class Observer;
  AppServerTurn() = default;

  sys::Pipe to_server_, from_server_;
  sys::UniqueFd gone_;  // eventfd: the server's process has ended
  sys::UniqueFd end_;   // eventfd: the server outlived its turn
  std::unique_ptr<Observer> observer_;
  std::unique_ptr<appserver::Session> session_;
  appserver::TurnSpec turn_;
  appserver::SessionEnd session_end_;
  std::vector<ApprovalRecord> approvals_;  // written by the session's thread until joined
  std::thread thread_;
};

// The approval rule `context` for a job: the workspace as the agent sees it, and commands
// resolved through the job's PATH in the host's view (the job's root is the host's, read-only).
policy::ApprovalContext JobApprovalContext(const std::string& workspace, const std::string& path);

}  // namespace berth::job
