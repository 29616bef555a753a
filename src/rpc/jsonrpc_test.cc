#include "rpc/jsonrpc.h"

#include <gtest/gtest.h>

namespace berth::rpc {
namespace {

ParseFailure FailureOf(const std::string& line) {
  auto parsed = ParseMessage(line);
  EXPECT_TRUE(std::holds_alternative<ParseFailure>(parsed)) << line;
  if (auto* f = std::get_if<ParseFailure>(&parsed)) return *f;
  return {};
}

Message MessageOf(const std::string& line) {
  auto parsed = ParseMessage(line);
  EXPECT_TRUE(std::holds_alternative<Message>(parsed)) << line;
  if (auto* m = std::get_if<Message>(&parsed)) return *m;
  return {};
}

TEST(JsonRpcTest, Request) {
  Message m = MessageOf(R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})");
  EXPECT_EQ(m.kind, Message::Kind::kRequest);
  EXPECT_EQ(m.id, 7);
  EXPECT_EQ(m.method, "tools/list");
  EXPECT_TRUE(m.params.is_object());
}

TEST(JsonRpcTest, StringIdAndParams) {
  Message m = MessageOf(R"({"jsonrpc":"2.0","id":"a","method":"x","params":{"k":1}})");
  EXPECT_EQ(m.id, "a");
  EXPECT_EQ(m.params["k"], 1);
}

TEST(JsonRpcTest, Notification) {
  Message m = MessageOf(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(m.kind, Message::Kind::kNotification);
  EXPECT_TRUE(m.id.is_null());
}

TEST(JsonRpcTest, Responses) {
  Message ok = MessageOf(R"({"jsonrpc":"2.0","id":"s1","result":{"action":"accept"}})");
  EXPECT_EQ(ok.kind, Message::Kind::kResponse);
  EXPECT_EQ(ok.result["action"], "accept");
  Message err = MessageOf(R"({"jsonrpc":"2.0","id":"s1","error":{"code":1,"message":"m"}})");
  EXPECT_EQ(err.error["code"], 1);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1})").code, kInvalidRequest);
}

TEST(JsonRpcTest, ParseErrors) {
  EXPECT_EQ(FailureOf("{").code, kParseError);
  EXPECT_EQ(FailureOf("garbage").code, kParseError);
  EXPECT_EQ(FailureOf("").code, kParseError);
  EXPECT_EQ(FailureOf(std::string(100, '[')).code, kParseError);
}

TEST(JsonRpcTest, InvalidRequests) {
  EXPECT_EQ(FailureOf("[]").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])").code, kInvalidRequest);
  EXPECT_EQ(FailureOf("42").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"id":1,"method":"ping"})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"1.0","id":1,"method":"ping"})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":2.0,"id":1,"method":"ping"})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1,"method":7})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1,"method":""})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1,"method":"x","params":3})").code, kInvalidRequest);
  EXPECT_EQ(FailureOf(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})").code,
            kInvalidParams);
}

TEST(JsonRpcTest, BadIdTypes) {
  for (const char* id : {"null", "1.5", "true", "{}", "[1]"}) {
    ParseFailure f = FailureOf(std::string(R"({"jsonrpc":"2.0","method":"ping","id":)") + id + "}");
    EXPECT_EQ(f.code, kInvalidRequest) << id;
    EXPECT_TRUE(f.id.is_null()) << id;
  }
}

TEST(JsonRpcTest, FailureKeepsAValidId) {
  ParseFailure f = FailureOf(R"({"jsonrpc":"1.0","id":"x","method":"ping"})");
  EXPECT_EQ(f.id, "x");
}

TEST(JsonRpcTest, DepthBoundIgnoresBracketsInStrings) {
  std::string deep_string = "\"" + std::string(200, '[') + "\"";
  Message m =
      MessageOf(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"s":)" + deep_string + "}}");
  EXPECT_EQ(m.params["s"].get<std::string>().size(), 200u);
}

TEST(JsonRpcTest, SerializeReplacesInvalidUtf8) {
  std::string line = Serialize(MakeResult(1, {{"text", std::string("a\xff"
                                                                   "b")}}));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("a\xef\xbf\xbd"
                      "b"),
            std::string::npos);
}

TEST(JsonRpcTest, CodexAppServerDialectOmitsTheVersion) {
  auto parsed = ParseMessage(R"({"id":3,"method":"item/fileChange/requestApproval","params":{}})",
                             Dialect::kCodexAppServer);
  ASSERT_TRUE(std::holds_alternative<Message>(parsed));
  EXPECT_EQ(std::get<Message>(parsed).kind, Message::Kind::kRequest);
  // A version that is present must still be right; MCP's dialect requires it.
  EXPECT_TRUE(std::holds_alternative<ParseFailure>(
      ParseMessage(R"({"jsonrpc":"1.0","id":3,"method":"m"})", Dialect::kCodexAppServer)));
  EXPECT_EQ(FailureOf(R"({"id":3,"method":"m"})").code, kInvalidRequest);
  EXPECT_FALSE(MakeRequest(1, "turn/start", {}, Dialect::kCodexAppServer).contains("jsonrpc"));
  EXPECT_EQ(MakeResult(1, {}).at("jsonrpc"), "2.0");
  EXPECT_FALSE(
      MakeError(1, kInvalidRequest, "no", nullptr, Dialect::kCodexAppServer).contains("jsonrpc"));
}

}  // namespace
}  // namespace berth::rpc
