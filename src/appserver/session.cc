#include "appserver/session.h"

#include <map>
#include <set>

#include "base/check.h"
#include "rpc/jsonrpc.h"
#include "sys/file_io.h"
#include "sys/line_reader.h"
#include "sys/net.h"
#include "sys/process.h"

namespace berth::appserver {

namespace {

constexpr rpc::Dialect kDialect = rpc::Dialect::kCodexAppServer;
// A line of the server's is a JSON message; an item's aggregated output can be large.
constexpr size_t kMaxLine = 32u << 20;
// Unknown notifications are common (the protocol grows every release): each method is named
// in the events once.
constexpr size_t kMaxUnknownMethods = 20;

std::string ErrorText(const nlohmann::json& error) {
  std::string message = StringField(error, "message");
  return message.empty() ? error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                         : message;
}

}  // namespace

const char* SessionEndName(SessionEnd::Kind kind) {
  switch (kind) {
    case SessionEnd::Kind::kCompleted:
      return "completed";
    case SessionEnd::Kind::kFailed:
      return "failed";
    case SessionEnd::Kind::kInterrupted:
      return "interrupted";
    case SessionEnd::Kind::kServerGone:
      return "server-gone";
  }
  return "server-gone";
}

// One Run(): the state of the conversation, on Run()'s thread only.
class Session::Conversation {
 public:
  Conversation(Session& session, const TurnSpec& turn) : s_(session), turn_(turn) {}

  SessionEnd Run(const std::string& berth_version, int gone_fd) {
    Request("initialize", InitializeParams(berth_version));
    sys::LineReader reader(s_.from_server_, kMaxLine);
    while (!ended_) {
      // The wish to stop comes first: lines read after it must already see it (a thread/start
      // answer read together with it must not start a turn).
      Result<int> ready =
          sys::PollReadable({s_.interrupt_.get(), s_.from_server_, gone_fd}, /*timeout_ms=*/-1);
      if (!ready) return Gone("waiting for the server failed: " + ready.error().ToString());
      if (*ready == 0) {
        uint64_t count = 0;
        IgnoreError(sys::ReadSome(s_.interrupt_.get(), &count, sizeof count),
                    "an eventfd that was readable reads");
        interrupt_wanted_ = true;
        MaybeInterrupt();
        continue;
      }
      // Lines already written are read before a gone server is believed.
      if (!Drain(reader)) break;
      if (*ready == 2 && !ended_)
        return Gone("the app-server process exited before its turn ended");
    }
    if (!ended_) return Gone("the app-server closed its output before its turn ended");
    return Finish();
  }

 private:
  // Reads every complete line that is there; false at the end of the server's output.
  bool Drain(sys::LineReader& reader) {
    while (!ended_) {
      Result<sys::LineReader::Item> item = reader.Next(0);
      if (!item) {
        end_.kind = SessionEnd::Kind::kServerGone;
        end_.detail = "reading the app-server failed: " + item.error().ToString();
        return false;
      }
      switch (item->kind) {
        case sys::LineReader::Kind::kTimeout:
          return true;
        case sys::LineReader::Kind::kEnd:
          return false;
        case sys::LineReader::Kind::kTooLong:
          s_.observer_->OnEvent("appserver", "skipped a message longer than " +
                                                 std::to_string(kMaxLine >> 20) + " MiB");
          continue;
        case sys::LineReader::Kind::kLine:
          s_.observer_->OnLine(item->text);
          Handle(item->text);
          continue;
      }
    }
    return true;
  }

  void Handle(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    std::variant<rpc::Message, rpc::ParseFailure> parsed = rpc::ParseMessage(line, kDialect);
    if (auto* failure = std::get_if<rpc::ParseFailure>(&parsed)) {
      // Answered only when it carried an id: a broken notification has nobody to answer.
      if (!failure->id.is_null())
        Send(rpc::MakeError(failure->id, failure->code, failure->message, nullptr, kDialect));
      if (++malformed_ <= 3)
        s_.observer_->OnEvent("appserver", "ignored a malformed message: " + failure->message);
      return;
    }
    const rpc::Message& m = std::get<rpc::Message>(parsed);
    switch (m.kind) {
      case rpc::Message::Kind::kResponse:
        return OnResponse(m);
      case rpc::Message::Kind::kRequest:
        return OnServerRequest(m);
      case rpc::Message::Kind::kNotification:
        return OnNotification(m);
    }
  }

  void OnResponse(const rpc::Message& m) {
    auto pending = pending_.find(m.id.is_number_integer() ? m.id.get<int64_t>() : -1);
    if (pending == pending_.end()) {
      s_.observer_->OnEvent("appserver", "ignored a response to no request of berth's");
      return;
    }
    const std::string method = pending->second;
    pending_.erase(pending);
    if (!m.error.is_null()) {
      if (method == "turn/interrupt") {
        s_.observer_->OnEvent("appserver", "turn/interrupt failed: " + ErrorText(m.error));
        return;
      }
      return End(SessionEnd::Kind::kFailed, method + " failed: " + ErrorText(m.error));
    }
    if (method == "initialize") {
      Send(rpc::MakeNotification("initialized", nlohmann::json::object(), kDialect));
      Request("thread/start", ThreadStartParams(turn_));
    } else if (method == "thread/start") {
      thread_id_ =
          m.result.is_object() ? StringField(m.result.value("thread", nlohmann::json()), "id") : "";
      if (thread_id_.empty())
        return End(SessionEnd::Kind::kFailed, "thread/start answered without a thread id");
      s_.observer_->OnEvent("appserver", "thread " + thread_id_ + " started in " + turn_.cwd);
      if (interrupt_wanted_)
        return End(SessionEnd::Kind::kInterrupted, "stopped before the turn started");
      Request("turn/start", TurnStartParams(thread_id_, turn_));
    } else if (method == "turn/start") {
      std::string id =
          m.result.is_object() ? StringField(m.result.value("turn", nlohmann::json()), "id") : "";
      if (turn_id_.empty()) turn_id_ = id;
      if (turn_id_.empty())
        return End(SessionEnd::Kind::kFailed, "turn/start answered without a turn id");
      MaybeInterrupt();
    }
  }

  void OnServerRequest(const rpc::Message& m) {
    policy::ApprovalRequest request = ReadApprovalRequest(m.method, m.params, items_);
    Exchange exchange;
    exchange.decision = policy::DecideApproval(s_.rules_, request, s_.context_);
    exchange.asked = Asked(request);
    exchange.request = std::move(request);
    nlohmann::json answer = AnswerFor(m.method, exchange.decision);
    if (answer.is_null()) {
      // Not an approval berth knows: logged, declined, and answered with an error.
      Send(rpc::MakeError(m.id, rpc::kMethodNotFound,
                          "berth answers no " + m.method + " request: " + exchange.decision.reason,
                          nullptr, kDialect));
    } else {
      Send(rpc::MakeResult(m.id, std::move(answer), kDialect));
    }
    const bool accepted = exchange.decision.answer == policy::Answer::kAccept;
    s_.observer_->OnEvent("approval", std::string(accepted ? "accepted" : "declined") + " (" +
                                          exchange.decision.rule + "): " + exchange.asked);
    s_.observer_->OnExchange(exchange);
  }

  void OnNotification(const rpc::Message& m) {
    const nlohmann::json& p = m.params;
    if (m.method == "item/started" || m.method == "item/completed") {
      if (!p.contains("item")) return;
      const nlohmann::json& item = p["item"];
      items_.Observe(item);
      if (m.method == "item/started") DescribeStart(item);
      return;
    }
    if (m.method == "turn/started") {
      if (turn_id_.empty()) turn_id_ = StringField(p.value("turn", nlohmann::json()), "id");
      MaybeInterrupt();
      return;
    }
    if (m.method == "turn/completed") {
      const nlohmann::json turn = p.value("turn", nlohmann::json());
      const std::string status = StringField(turn, "status");
      const std::string error =
          turn.is_object() && turn.contains("error") ? ErrorText(turn["error"]) : "";
      if (status == "completed") return End(SessionEnd::Kind::kCompleted, "");
      if (status == "interrupted") return End(SessionEnd::Kind::kInterrupted, error);
      return End(SessionEnd::Kind::kFailed, error.empty() ? "the turn " + status : error);
    }
    if (m.method == "error") {
      auto will_retry = p.find("willRetry");
      const bool retry =
          will_retry != p.end() && will_retry->is_boolean() && will_retry->get<bool>();
      s_.observer_->OnEvent("appserver", std::string(retry ? "retrying after: " : "error: ") +
                                             ErrorText(p.value("error", nlohmann::json())));
      return;
    }
    static const std::set<std::string> kQuiet = {"thread/started",
                                                 "thread/status/changed",
                                                 "thread/tokenUsage/updated",
                                                 "item/agentMessage/delta",
                                                 "item/commandExecution/outputDelta",
                                                 "item/fileChange/outputDelta",
                                                 "item/reasoning/summaryTextDelta",
                                                 "item/reasoning/textDelta",
                                                 "item/reasoning/summaryPartAdded",
                                                 "turn/diff/updated",
                                                 "turn/plan/updated",
                                                 "serverRequest/resolved",
                                                 "account/rateLimits/updated",
                                                 "mcpServer/startupStatus/updated",
                                                 "thread/settings/updated",
                                                 "warning",
                                                 "configWarning",
                                                 "deprecationNotice",
                                                 "skills/changed",
                                                 "item/fileChange/patchUpdated"};
    if (kQuiet.count(m.method) == 0 && unknown_.size() < kMaxUnknownMethods &&
        unknown_.insert(m.method).second)
      s_.observer_->OnEvent("appserver", "ignored notifications " + m.method);
  }

  void DescribeStart(const nlohmann::json& item) {
    const ItemTracker::Item* tracked = items_.Find(StringField(item, "id"));
    if (tracked == nullptr) return;
    if (tracked->type == "commandExecution") {
      s_.observer_->OnEvent("appserver", "command: " + tracked->command);
    } else if (tracked->type == "fileChange") {
      std::string paths;
      for (const std::string& path : tracked->paths) paths += (paths.empty() ? "" : ", ") + path;
      s_.observer_->OnEvent("appserver", "file change: " + paths);
    }
  }

  // turn/interrupt once both the wish and the turn exist.
  void MaybeInterrupt() {
    if (!interrupt_wanted_ || interrupt_sent_) return;
    if (thread_id_.empty() || turn_id_.empty()) return;
    interrupt_sent_ = true;
    s_.observer_->OnEvent("appserver", "turn/interrupt " + turn_id_);
    Request("turn/interrupt", TurnInterruptParams(thread_id_, turn_id_));
  }

  void Request(const std::string& method, nlohmann::json params) {
    const int64_t id = next_id_++;
    pending_[id] = method;
    Send(rpc::MakeRequest(id, method, std::move(params), kDialect));
  }

  void Send(const nlohmann::json& message) {
    if (!s_.to_server_.valid()) return;
    Status written = sys::WriteAll(s_.to_server_.get(), rpc::Serialize(message) + "\n",
                                   "the app-server's stdin");
    if (!written) {
      // The server is gone; what it wrote still gets read, and the exit ends Run().
      s_.to_server_.Reset();
      if (!write_failed_) s_.observer_->OnEvent("appserver", written.error().ToString());
      write_failed_ = true;
    }
  }

  void End(SessionEnd::Kind kind, std::string detail) {
    if (ended_) return;
    ended_ = true;
    end_.kind = kind;
    end_.detail = std::move(detail);
  }

  SessionEnd Gone(std::string detail) {
    if (end_.detail.empty()) {
      end_.kind = SessionEnd::Kind::kServerGone;
      end_.detail = std::move(detail);
    }
    ended_ = true;
    return Finish();
  }

  SessionEnd Finish() {
    // The turn is over: end of input tells the server to exit.
    s_.to_server_.Reset();
    end_.thread_id = thread_id_;
    end_.turn_id = turn_id_;
    s_.observer_->OnEvent("appserver", std::string("turn ") + SessionEndName(end_.kind) +
                                           (end_.detail.empty() ? "" : ": " + end_.detail));
    return end_;
  }

  Session& s_;
  const TurnSpec& turn_;
  ItemTracker items_;
  std::map<int64_t, std::string> pending_;  // berth's requests by id: their method
  int64_t next_id_ = 1;
  std::string thread_id_, turn_id_;
  bool interrupt_wanted_ = false, interrupt_sent_ = false;
  bool ended_ = false, write_failed_ = false;
  int malformed_ = 0;
  std::set<std::string> unknown_;
  SessionEnd end_;
};

Result<Session> Session::Create(sys::UniqueFd to_server, int from_server,
                                policy::ApprovalRules rules, policy::ApprovalContext context,
                                SessionObserver& observer) {
  CHECK(to_server.valid() && from_server >= 0);
  sys::UniqueFd interrupt = TRY(sys::MakeEventFd());
  return Session(std::move(to_server), from_server, std::move(interrupt), std::move(rules),
                 std::move(context), observer);
}

SessionEnd Session::Run(const TurnSpec& turn, const std::string& berth_version, int gone_fd) {
  // A write to a server that is gone fails with EPIPE on this thread, not a signal.
  sys::BlockBrokenPipeInThisThread();
  Conversation conversation(*this, turn);
  return conversation.Run(berth_version, gone_fd);
}

void Session::Interrupt() { sys::SignalEventFd(interrupt_.get()); }

}  // namespace berth::appserver
