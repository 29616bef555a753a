#include "job/app_server_turn.h"

#include "sys/command.h"
#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/net.h"
#include "sys/process.h"

namespace berth::job {

namespace {

#ifndef BERTH_VERSION
#define BERTH_VERSION "0.0.0"
#endif
constexpr const char* kBerthVersion = BERTH_VERSION;

}  // namespace

class AppServerTurn::Observer : public appserver::SessionObserver {
 public:
  Observer(int transcript, EventSink on_event, std::vector<ApprovalRecord>* approvals)
      : transcript_(transcript), on_event_(std::move(on_event)), approvals_(approvals) {}

  void OnLine(std::string_view line) override {
    if (transcript_ < 0) return;
    std::string copy(line);
    copy += '\n';
    // The capture drains its pipe on its own thread; a failure only costs the transcript.
    if (!sys::WriteAll(transcript_, copy, "the job's stdout capture")) transcript_ = -1;
  }
  void OnEvent(const std::string& step, const std::string& detail) override {
    on_event_(step, detail);
  }
  void OnExchange(const appserver::Exchange& x) override {
    approvals_->push_back({x.request.method, policy::ApprovalKindName(x.request.kind), x.asked,
                           x.decision.argv, policy::AnswerName(x.decision.answer), x.decision.rule,
                           x.decision.reason});
  }

 private:
  int transcript_;
  EventSink on_event_;
  std::vector<ApprovalRecord>* approvals_;
};

Result<std::unique_ptr<AppServerTurn>> AppServerTurn::Start(appserver::TurnSpec turn,
                                                            policy::ApprovalRules rules,
                                                            policy::ApprovalContext context,
                                                            int transcript, EventSink on_event) {
  std::unique_ptr<AppServerTurn> t(new AppServerTurn());
  t->to_server_ = TRY(sys::MakePipe());
  t->from_server_ = TRY(sys::MakePipe());
  t->gone_ = TRY(sys::MakeEventFd());
  t->end_ = TRY(sys::MakeEventFd());
  t->turn_ = std::move(turn);
  t->observer_ = std::make_unique<Observer>(transcript, std::move(on_event), &t->approvals_);
  t->session_ = std::make_unique<appserver::Session>(
      TRY(appserver::Session::Create(std::move(t->to_server_.write), t->from_server_.read.get(),
                                     std::move(rules), std::move(context), *t->observer_)));
  AppServerTurn* self = t.get();
  t->thread_ = std::thread([self] {
    self->session_end_ = self->session_->Run(self->turn_, kBerthVersion, self->gone_.get());
    // The server's stdin is closed now; a server that does not exit is ended (still on this
    // thread, which has the store until Finish()).
    Result<int> gone = sys::PollReadable({self->gone_.get()}, kExitGraceMs);
    if (gone && *gone == 0) return;
    self->observer_->OnEvent("appserver", "the app-server did not exit within " +
                                              std::to_string(kExitGraceMs / 1000) +
                                              " s of its turn's end: its process tree is ended");
    sys::SignalEventFd(self->end_.get());
  });
  return t;
}

AppServerTurn::~AppServerTurn() {
  if (thread_.joinable()) Finish();
}

void AppServerTurn::Interrupt() { session_->Interrupt(); }

appserver::SessionEnd AppServerTurn::Finish() {
  if (!thread_.joinable()) return session_end_;
  // berth's copies of the server's ends: closed, so that the session sees the end of the
  // server's output and a write to its stdin fails rather than blocks.
  from_server_.write.Reset();
  to_server_.read.Reset();
  sys::SignalEventFd(gone_.get());
  thread_.join();
  return session_end_;
}

policy::ApprovalContext JobApprovalContext(const std::string& workspace, const std::string& path) {
  policy::ApprovalContext context;
  context.workspace = workspace;
  context.resolve = [path](const std::string& name_or_path) -> std::string {
    Result<std::string> found = sys::FindExecutable(name_or_path, path);
    if (!found) return "";
    Result<std::string> real = sys::RealPath(*found);
    return real ? *real : "";
  };
  return context;
}

}  // namespace berth::job
