#include "mcp/session.h"

#include <gtest/gtest.h>

#include <deque>

namespace berth::mcp {
namespace {

// Lines the session reads, and what it sends.
class FakeChannel : public Channel {
 public:
  std::deque<std::string> in;
  std::vector<nlohmann::json> out;
  void Send(const std::string& line) override {
    EXPECT_EQ(line.find('\n'), std::string::npos);
    out.push_back(nlohmann::json::parse(line));
  }
  Result<sys::LineReader::Item> Next(int) override {
    if (in.empty()) return sys::LineReader::Item{sys::LineReader::Kind::kEnd, {}};
    std::string line = std::move(in.front());
    in.pop_front();
    return sys::LineReader::Item{sys::LineReader::Kind::kLine, std::move(line)};
  }
};

constexpr char kInit[] =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
    R"("capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"t","version":"1"}}})";

class SessionTest : public testing::Test {
 protected:
  SessionTest() {
    Tool echo;
    echo.name = "echo";
    echo.params = {{"text", Param::Type::kString, true}};
    echo.run = [this](const nlohmann::json& args, CallContext& call) {
      call.Progress("working");
      if (args["text"] == "pump") pumped = call.Pump(10);
      if (args["text"] == "ask") {
        std::optional<nlohmann::json> answer = call.Elicit("sure?", {{"type", "object"}}, 1000);
        return ToolResult{answer ? answer->dump() : "none", nullptr, !answer};
      }
      if (args["text"] == "fail") return ToolError("it failed");
      return ToolResult{args["text"], {{"echo", args["text"]}}, false};
    };
    tools.push_back(echo);
  }

  // Serves `lines` and returns what was sent.
  std::vector<nlohmann::json> Serve(std::vector<std::string> lines) {
    for (std::string& l : lines) channel.in.push_back(std::move(l));
    Session session(channel, tools, nullptr, ServerInfo{"berth", "1.0", ""});
    session.Serve();
    return channel.out;
  }

  FakeChannel channel;
  std::vector<Tool> tools;
  bool pumped = false;
};

TEST_F(SessionTest, InitializeNegotiatesTheClientsRevision) {
  auto out = Serve({kInit});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["id"], 0);
  EXPECT_EQ(out[0]["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(out[0]["result"]["serverInfo"]["name"], "berth");
  EXPECT_TRUE(out[0]["result"]["capabilities"].contains("tools"));
}

TEST_F(SessionTest, OlderAndUnknownRevisions) {
  std::string init = kInit;
  std::string older = init.replace(init.find("2025-11-25"), 10, "2025-06-18");
  EXPECT_EQ(Serve({older})[0]["result"]["protocolVersion"], "2025-06-18");
  channel.out.clear();
  init = kInit;
  std::string unknown = init.replace(init.find("2025-11-25"), 10, "1999-01-01");
  EXPECT_EQ(Serve({unknown})[0]["result"]["protocolVersion"], "2025-11-25");
}

TEST_F(SessionTest, InitializeWithWrongParams) {
  auto out = Serve(
      {R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
       R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{}}})"});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]["error"]["code"], rpc::kInvalidParams);
  EXPECT_EQ(out[1]["error"]["code"], rpc::kInvalidParams);
}

TEST_F(SessionTest, RequestsBeforeInitializeAndTwice) {
  auto out = Serve({R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", kInit, kInit,
                    R"({"jsonrpc":"2.0","id":2,"method":"ping"})"});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["error"]["code"], rpc::kInvalidRequest);
  EXPECT_EQ(out[2]["error"]["code"], rpc::kInvalidRequest);
  EXPECT_EQ(out[3]["result"], nlohmann::json::object());
}

TEST_F(SessionTest, GarbageGetsErrorsAndTheSessionKeepsServing) {
  auto out = Serve({"garbage", "[1,2]", R"({"jsonrpc":"2.0","id":true,"method":"ping"})",
                    R"({"jsonrpc":"2.0","id":1,"method":"nope"})", "",
                    R"({"jsonrpc":"2.0","id":3,"method":"ping"})"});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0]["error"]["code"], rpc::kParseError);
  EXPECT_TRUE(out[0]["id"].is_null());
  EXPECT_EQ(out[1]["error"]["code"], rpc::kInvalidRequest);
  EXPECT_EQ(out[2]["error"]["code"], rpc::kInvalidRequest);
  EXPECT_EQ(out[3]["error"]["code"], rpc::kMethodNotFound);
  EXPECT_EQ(out[3]["id"], 1);
  EXPECT_EQ(out[4]["id"], 3);
}

TEST_F(SessionTest, TooLongMessageIsRefused) {
  Session session(channel, tools, nullptr, ServerInfo{});
  channel.in.clear();
  // As the line reader reports it.
  class TooLong : public FakeChannel {
   public:
    int calls = 0;
    Result<sys::LineReader::Item> Next(int) override {
      if (calls++ == 0) return sys::LineReader::Item{sys::LineReader::Kind::kTooLong, {}};
      return sys::LineReader::Item{sys::LineReader::Kind::kEnd, {}};
    }
  } too_long;
  Session s(too_long, tools, nullptr, ServerInfo{});
  s.Serve();
  ASSERT_EQ(too_long.out.size(), 1u);
  EXPECT_EQ(too_long.out[0]["error"]["code"], rpc::kInvalidRequest);
}

TEST_F(SessionTest, ToolsListAndCall) {
  auto out = Serve(
      {kInit, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
       R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}})"});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1]["result"]["tools"][0]["name"], "echo");
  EXPECT_EQ(out[1]["result"]["tools"][0]["inputSchema"]["additionalProperties"], false);
  EXPECT_EQ(out[2]["method"], "notifications/progress");
  EXPECT_EQ(out[2]["params"]["progressToken"], "p");
  EXPECT_EQ(out[3]["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(out[3]["result"]["structuredContent"]["echo"], "hi");
  EXPECT_EQ(out[3]["result"]["isError"], false);
}

TEST_F(SessionTest, WrongToolParamsAreInvalidParams) {
  auto out = Serve(
      {kInit, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}})",
       R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":1}}})",
       R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","x":1}}})",
       R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}})"});
  ASSERT_EQ(out.size(), 5u);
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(out[i]["error"]["code"], rpc::kInvalidParams) << i;
}

TEST_F(SessionTest, ToolFailureIsAResult) {
  auto out = Serve(
      {kInit,
       R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fail"}}})"});
  EXPECT_EQ(out[1]["result"]["isError"], true);
  EXPECT_EQ(out[1]["result"]["content"][0]["text"], "it failed");
}

TEST_F(SessionTest, CancellationStopsAPump) {
  auto out = Serve(
      {kInit,
       R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"pump"}}})",
       R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})"});
  EXPECT_FALSE(pumped);
}

TEST_F(SessionTest, RequestsDuringACallWaitForIt) {
  auto out = Serve(
      {kInit,
       R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"pump"}}})",
       R"({"jsonrpc":"2.0","id":6,"method":"tools/list"})",
       R"({"jsonrpc":"2.0","id":7,"method":"ping"})"});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[1]["id"], 7);  // a ping is answered at once
  EXPECT_EQ(out[2]["id"], 5);
  EXPECT_EQ(out[3]["id"], 6);
}

TEST_F(SessionTest, ElicitationRoundTrip) {
  auto out = Serve(
      {kInit,
       R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ask"}}})",
       R"({"jsonrpc":"2.0","id":"berth-1","result":{"action":"accept","content":{"confirm":true}}})"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1]["method"], "elicitation/create");
  EXPECT_EQ(out[1]["id"], "berth-1");
  EXPECT_EQ(out[2]["result"]["isError"], false);
  EXPECT_NE(out[2]["result"]["content"][0]["text"].get<std::string>().find("accept"),
            std::string::npos);
}

TEST_F(SessionTest, StatelessRevision) {
  auto out = Serve(
      {R"({"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})",
       R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})",
       R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2030-01-01"}}})",
       R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ask"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})"});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0]["result"]["supportedVersions"][0], "2026-07-28");
  EXPECT_EQ(out[0]["result"]["resultType"], "complete");
  EXPECT_EQ(out[1]["result"]["resultType"], "complete");
  EXPECT_EQ(out[1]["result"]["tools"][0]["name"], "echo");
  EXPECT_EQ(out[2]["error"]["code"], rpc::kInvalidParams);
  // No server-to-client request in the stateless revision: the tool cannot ask.
  EXPECT_EQ(out[3]["result"]["isError"], true);
}

}  // namespace
}  // namespace berth::mcp
