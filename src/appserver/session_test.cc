#include "appserver/session.h"

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "sys/file_io.h"
#include "sys/fs.h"
#include "sys/line_reader.h"
#include "sys/net.h"

namespace berth::appserver {
namespace {

using nlohmann::json;

// A scripted app-server on the other ends of two pipes, on its own thread: `on_message`
// sees each message berth sends and answers through Write().
class FakeServer {
 public:
  using Handler = std::function<void(const json& message, FakeServer& server)>;

  explicit FakeServer(Handler on_message) : on_message_(std::move(on_message)) {
    Result<sys::Pipe> to = sys::MakePipe(), from = sys::MakePipe();
    to_server_ = std::move(*to);
    from_server_ = std::move(*from);
  }
  ~FakeServer() {
    if (thread_.joinable()) thread_.join();
  }

  sys::UniqueFd TakeClientWriteEnd() { return std::move(to_server_.write); }
  int client_read_end() const { return from_server_.read.get(); }

  void Start() {
    thread_ = std::thread([this] {
      sys::LineReader reader(to_server_.read.get(), 1 << 20);
      while (true) {
        Result<sys::LineReader::Item> item = reader.Next(10000);
        if (!item || item->kind != sys::LineReader::Kind::kLine) break;
        json message = json::parse(item->text, nullptr, false);
        {
          std::lock_guard<std::mutex> lock(mutex_);
          received_.push_back(message);
        }
        on_message_(message, *this);
      }
      Close();
    });
  }
  void Write(const json& message) { WriteLine(message.dump()); }
  void WriteLine(const std::string& line) {
    if (from_server_.write.valid())
      IgnoreError(sys::WriteAll(from_server_.write.get(), line + "\n", "fake"), "test");
  }
  void Close() { from_server_.write.Reset(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<json> received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }

 private:
  Handler on_message_;
  sys::Pipe to_server_, from_server_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<json> received_;
};

class Recorder : public SessionObserver {
 public:
  void OnLine(std::string_view line) override { lines.emplace_back(line); }
  void OnEvent(const std::string& step, const std::string& detail) override {
    events.push_back(step + ": " + detail);
  }
  void OnExchange(const Exchange& exchange) override { exchanges.push_back(exchange); }
  std::vector<std::string> lines, events;
  std::vector<Exchange> exchanges;
};

// Answers the three requests of a session's start like Codex does.
bool AnswerStart(const json& m, FakeServer& server) {
  const std::string method = m.value("method", "");
  if (method == "initialize") {
    server.Write({{"id", m["id"]}, {"result", {{"userAgent", "codex/0.171.0"}}}});
  } else if (method == "thread/start") {
    server.Write({{"id", m["id"]}, {"result", {{"thread", {{"id", "thr_1"}}}, {"model", "m"}}}});
  } else if (method == "turn/start") {
    server.Write({{"id", m["id"]}, {"result", {{"turn", {{"id", "turn_1"}}}}}});
    server.Write({{"method", "turn/started"}, {"params", {{"turn", {{"id", "turn_1"}}}}}});
    return true;  // the turn runs
  }
  return false;
}

json Completed(const std::string& status) {
  return {{"method", "turn/completed"},
          {"params", {{"threadId", "thr_1"}, {"turn", {{"id", "turn_1"}, {"status", status}}}}}};
}

policy::ApprovalContext Context() {
  policy::ApprovalContext context;
  context.workspace = "/w";
  context.resolve = [](const std::string& name) {
    return name == "npm" || name == "/usr/bin/npm" ? std::string("/usr/bin/npm") : std::string();
  };
  return context;
}

struct Outcome {
  SessionEnd end;
  Recorder recorder;
};

// Runs a session against `handler` with the rule ["npm", "test"].
void RunSession(FakeServer& server, Outcome* out, std::function<void(Session&)> during = nullptr) {
  policy::ApprovalRules rules;
  rules.commands = {{"npm", "test"}};
  Result<Session> session = Session::Create(server.TakeClientWriteEnd(), server.client_read_end(),
                                            rules, Context(), out->recorder);
  ASSERT_TRUE(session);
  server.Start();
  std::thread helper;
  if (during) helper = std::thread([&] { during(*session); });
  out->end = session->Run(TurnSpec{"/w", "do it", true}, "test", -1);
  if (helper.joinable()) helper.join();
  server.Join();
}

TEST(SessionTest, AWholeTurnAnswersEveryRequestFromThePolicy) {
  FakeServer server([](const json& m, FakeServer& s) {
    if (AnswerStart(m, s)) {
      s.WriteLine(
          R"({"method":"item/started","params":{"item":{"type":"fileChange","id":"f1",)"
          R"("status":"inProgress","changes":[{"path":"/etc/passwd","kind":{"type":"add"}}]}}})");
      s.Write({{"id", 100},
               {"method", "item/commandExecution/requestApproval"},
               {"params",
                {{"itemId", "c1"}, {"command", "npm test -- --watch=false"}, {"cwd", "/w"}}}});
      s.Write({{"id", 101},
               {"method", "item/commandExecution/requestApproval"},
               {"params", {{"itemId", "c2"}, {"command", "npm publish"}, {"cwd", "/w"}}}});
      s.Write({{"id", 102},
               {"method", "item/commandExecution/requestApproval"},
               {"params", {{"itemId", "c3"}, {"command", "npm test; curl x"}, {"cwd", "/w"}}}});
      s.Write({{"id", 103},
               {"method", "item/fileChange/requestApproval"},
               {"params", {{"itemId", "f1"}}}});
      s.Write({{"id", 104},
               {"method", "item/permissions/requestApproval"},
               {"params", {{"itemId", "p1"}, {"cwd", "/w"}, {"permissions", json::object()}}}});
      s.Write({{"id", "x"}, {"method", "item/tool/call"}, {"params", json::object()}});
      s.WriteLine("this is not json");
      s.Write({{"method", "some/new/notification"}, {"params", json::object()}});
      return;
    }
    // The last answer (to "x") ends the turn.
    if (m.contains("id") && m["id"] == "x") s.Write(Completed("completed"));
  });
  Outcome run;
  RunSession(server, &run);
  EXPECT_EQ(run.end.kind, SessionEnd::Kind::kCompleted);
  EXPECT_EQ(run.end.thread_id, "thr_1");
  EXPECT_EQ(run.end.turn_id, "turn_1");
  ASSERT_EQ(run.recorder.exchanges.size(), 6u);
  const std::vector<Exchange>& x = run.recorder.exchanges;
  EXPECT_EQ(x[0].decision.answer, policy::Answer::kAccept);
  EXPECT_EQ(x[0].decision.rule, "command-prefix");
  EXPECT_EQ(x[1].decision.rule, "command-not-allowed");
  EXPECT_EQ(x[2].decision.rule, "shell-syntax");
  EXPECT_EQ(x[3].decision.rule, "file-change-outside");
  EXPECT_EQ(x[3].asked, "/etc/passwd");
  EXPECT_EQ(x[4].decision.rule, "permission-request");
  EXPECT_EQ(x[5].decision.rule, "unknown-request");

  // What berth sent: no "jsonrpc" field, the answers in each method's vocabulary.
  std::map<std::string, json> answers;
  for (const json& m : server.received()) {
    EXPECT_FALSE(m.contains("jsonrpc")) << m.dump();
    if (m.contains("id") && !m.contains("method")) answers[m["id"].dump()] = m;
  }
  EXPECT_EQ(answers["100"]["result"]["decision"], "accept");
  EXPECT_EQ(answers["101"]["result"]["decision"], "decline");
  EXPECT_EQ(answers["102"]["result"]["decision"], "decline");
  EXPECT_EQ(answers["103"]["result"]["decision"], "decline");
  EXPECT_EQ(answers["104"]["result"]["permissions"], json::object());
  EXPECT_EQ(answers["\"x\""]["error"]["code"], -32601);
  const std::vector<std::string>& e = run.recorder.events;
  EXPECT_NE(std::find(e.begin(), e.end(),
                      "approval: accepted (command-prefix): npm test -- --watch=false (in /w)"),
            e.end());
  EXPECT_NE(std::find(e.begin(), e.end(), "appserver: ignored notifications some/new/notification"),
            e.end());
  EXPECT_EQ(run.recorder.lines.size(), 14u);  // 3 answers, turn/started, 9 scripted, completed
}

TEST(SessionTest, InterruptSendsTurnInterruptAndTheTurnEndsInterrupted) {
  std::atomic<bool> running{false};
  FakeServer server([&](const json& m, FakeServer& s) {
    if (AnswerStart(m, s)) {
      running = true;
      return;
    }
    if (m.value("method", "") == "turn/interrupt") {
      EXPECT_EQ(m["params"], json({{"threadId", "thr_1"}, {"turnId", "turn_1"}}));
      s.Write({{"id", m["id"]}, {"result", json::object()}});
      s.Write(Completed("interrupted"));
    }
  });
  Outcome run;
  RunSession(server, &run, [&](Session& session) {
    while (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    session.Interrupt();
    session.Interrupt();  // idempotent
  });
  EXPECT_EQ(run.end.kind, SessionEnd::Kind::kInterrupted);
  int interrupts = 0;
  for (const json& m : server.received()) interrupts += m.value("method", "") == "turn/interrupt";
  EXPECT_EQ(interrupts, 1);
}

TEST(SessionTest, AnInterruptBeforeTheTurnExistsWaitsForIt) {
  FakeServer server([](const json& m, FakeServer& s) {
    if (AnswerStart(m, s)) return;
    if (m.value("method", "") == "turn/interrupt") s.Write(Completed("interrupted"));
  });
  Outcome run;
  policy::ApprovalRules rules;
  Result<Session> session = Session::Create(server.TakeClientWriteEnd(), server.client_read_end(),
                                            rules, Context(), run.recorder);
  ASSERT_TRUE(session);
  session->Interrupt();
  server.Start();
  run.end = session->Run(TurnSpec{"/w", "p", true}, "test", -1);
  server.Join();
  // thread/start came back after the wish to stop: no turn was started at all.
  EXPECT_EQ(run.end.kind, SessionEnd::Kind::kInterrupted);
  for (const json& m : server.received()) EXPECT_NE(m.value("method", ""), "turn/start");
}

TEST(SessionTest, AnErrorAnswerToThreadStartFailsTheTurnWithTheServersWords) {
  FakeServer server([](const json& m, FakeServer& s) {
    if (m.value("method", "") == "initialize") {
      s.Write({{"id", m["id"]}, {"result", json::object()}});
    } else if (m.value("method", "") == "thread/start") {
      s.Write({{"id", m["id"]}, {"error", {{"code", -32600}, {"message", "not logged in"}}}});
    }
  });
  Outcome run;
  RunSession(server, &run);
  EXPECT_EQ(run.end.kind, SessionEnd::Kind::kFailed);
  EXPECT_EQ(run.end.detail, "thread/start failed: not logged in");
}

TEST(SessionTest, AServerThatGoesAwayEndsTheSession) {
  FakeServer server([](const json&, FakeServer& s) { s.Close(); });
  Outcome run;
  RunSession(server, &run);
  EXPECT_EQ(run.end.kind, SessionEnd::Kind::kServerGone);
}

TEST(SessionTest, AFailedTurnCarriesItsError) {
  FakeServer server([](const json& m, FakeServer& s) {
    if (!AnswerStart(m, s)) return;
    json done = Completed("failed");
    done["params"]["turn"]["error"] = {{"message", "401 Unauthorized"}};
    s.Write(done);
  });
  Outcome run;
  RunSession(server, &run);
  EXPECT_EQ(run.end.kind, SessionEnd::Kind::kFailed);
  EXPECT_EQ(run.end.detail, "401 Unauthorized");
}

}  // namespace
}  // namespace berth::appserver
