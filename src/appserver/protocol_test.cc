#include "appserver/protocol.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "rpc/jsonrpc.h"

namespace berth::appserver {
namespace {

using policy::Answer;
using policy::ApprovalKind;

nlohmann::json J(const char* text) { return nlohmann::json::parse(text); }

TEST(ProtocolTest, TurnStartTellsCodexItRunsInAnExternalSandboxAndMustAsk) {
  TurnSpec turn{"/src/app", "fix it", false};
  nlohmann::json p = TurnStartParams("thr_1", turn);
  EXPECT_EQ(p["threadId"], "thr_1");
  EXPECT_EQ(p["input"][0]["type"], "text");
  EXPECT_EQ(p["input"][0]["text"], "fix it");
  EXPECT_EQ(p["cwd"], "/src/app");
  EXPECT_EQ(p["approvalPolicy"], "untrusted");
  EXPECT_EQ(p["sandboxPolicy"]["type"], "externalSandbox");
  EXPECT_EQ(p["sandboxPolicy"]["networkAccess"], "restricted");
  // The model and the effort are on the command line, never in the protocol.
  EXPECT_FALSE(p.contains("model"));
  EXPECT_FALSE(p.contains("effort"));
  nlohmann::json t = ThreadStartParams(turn);
  EXPECT_EQ(t["cwd"], "/src/app");
  EXPECT_EQ(t["ephemeral"], true);
  EXPECT_EQ(t["approvalPolicy"], "untrusted");
  EXPECT_FALSE(t.contains("model"));
  EXPECT_EQ(TurnInterruptParams("thr", "turn"), J(R"({"threadId":"thr","turnId":"turn"})"));
}

TEST(ProtocolTest, NewerCommandApprovalCarriesTheLineAndCwd) {
  ItemTracker items;
  policy::ApprovalRequest r = ReadApprovalRequest(
      "item/commandExecution/requestApproval",
      J(R"({"threadId":"t","turnId":"u","itemId":"c1","command":"npm test","cwd":"/src/app",
            "startedAtMs":1})"),
      items);
  EXPECT_EQ(r.kind, ApprovalKind::kCommand);
  ASSERT_TRUE(r.command_line);
  EXPECT_EQ(*r.command_line, "npm test");
  EXPECT_EQ(r.cwd, "/src/app");
  EXPECT_EQ(Asked(r), "npm test (in /src/app)");
}

TEST(ProtocolTest, CommandApprovalWithoutItsLineTakesTheItemsCommand) {
  ItemTracker items;
  items.Observe(J(R"({"type":"commandExecution","id":"c1","command":"make check",
                       "cwd":"/w","commandActions":[],"status":"inProgress"})"));
  policy::ApprovalRequest r = ReadApprovalRequest("item/commandExecution/requestApproval",
                                                  J(R"({"itemId":"c1","command":null})"), items);
  ASSERT_TRUE(r.command_line);
  EXPECT_EQ(*r.command_line, "make check");
  EXPECT_EQ(r.cwd, "/w");
}

TEST(ProtocolTest, NewerFileChangeApprovalTakesThePathsFromItsItem) {
  ItemTracker items;
  items.Observe(J(R"({"type":"fileChange","id":"f1","status":"inProgress","changes":[
      {"path":"/w/a.txt","kind":{"type":"add"},"diff":"+x"},
      {"path":"/w/b.txt","kind":{"type":"update","move_path":"/etc/b.txt"},"diff":""}]})"));
  policy::ApprovalRequest r = ReadApprovalRequest("item/fileChange/requestApproval",
                                                  J(R"({"itemId":"f1","grantRoot":"/"})"), items);
  EXPECT_EQ(r.kind, ApprovalKind::kFileChange);
  EXPECT_EQ(r.paths, (std::vector<std::string>{"/w/a.txt", "/w/b.txt", "/etc/b.txt"}));
  EXPECT_EQ(r.grant_root, "/");
  // An item berth never saw leaves the paths unknown (which the decision declines).
  EXPECT_TRUE(ReadApprovalRequest("item/fileChange/requestApproval", J(R"({"itemId":"zz"})"), items)
                  .paths.empty());
}

TEST(ProtocolTest, LegacyShapes) {
  ItemTracker items;
  policy::ApprovalRequest exec = ReadApprovalRequest(
      "execCommandApproval",
      J(R"({"conversationId":"c","callId":"k","command":["bash","-lc","npm test"],"cwd":"/w",
            "parsedCmd":[]})"),
      items);
  EXPECT_EQ(exec.kind, ApprovalKind::kCommand);
  ASSERT_TRUE(exec.argv);
  EXPECT_EQ(*exec.argv, (std::vector<std::string>{"bash", "-lc", "npm test"}));
  EXPECT_FALSE(exec.command_line);
  policy::ApprovalRequest patch = ReadApprovalRequest(
      "applyPatchApproval",
      J(R"({"conversationId":"c","callId":"k","fileChanges":{"../x.txt":{"type":"add",
            "content":"x"}},"grantRoot":null})"),
      items);
  EXPECT_EQ(patch.kind, ApprovalKind::kFileChange);
  EXPECT_EQ(patch.paths, (std::vector<std::string>{"../x.txt"}));
  EXPECT_EQ(patch.grant_root, "");
}

TEST(ProtocolTest, WrongShapesAndOtherMethodsAreUnknownOrEmpty) {
  ItemTracker items;
  EXPECT_EQ(ReadApprovalRequest("item/tool/requestUserInput", J("{}"), items).kind,
            ApprovalKind::kUnknown);
  EXPECT_EQ(ReadApprovalRequest("execCommandApproval", J("[1]"), items).kind,
            ApprovalKind::kUnknown);
  policy::ApprovalRequest bad =
      ReadApprovalRequest("execCommandApproval", J(R"({"command":["a",1],"cwd":7})"), items);
  EXPECT_EQ(bad.kind, ApprovalKind::kCommand);
  EXPECT_FALSE(bad.argv);
  EXPECT_EQ(bad.cwd, "");
  EXPECT_EQ(
      ReadApprovalRequest("item/permissions/requestApproval", J(R"({"cwd":"/w"})"), items).kind,
      ApprovalKind::kPermissions);
}

policy::ApprovalDecision Decided(Answer answer) {
  policy::ApprovalDecision d;
  d.answer = answer;
  d.rule = answer == Answer::kAccept ? "command-prefix" : "command-not-allowed";
  d.reason = "npm publish matches no allowed prefix";
  return d;
}

TEST(ProtocolTest, AnswersInEachMethodsVocabulary) {
  const policy::ApprovalDecision yes = Decided(Answer::kAccept), no = Decided(Answer::kDecline);
  EXPECT_EQ(AnswerFor("item/commandExecution/requestApproval", yes), J(R"({"decision":"accept"})"));
  EXPECT_EQ(AnswerFor("item/fileChange/requestApproval", no), J(R"({"decision":"decline"})"));
  EXPECT_EQ(AnswerFor("execCommandApproval", yes), J(R"({"decision":"approved"})"));
  // The legacy denial is an object whose rejection the model reads.
  EXPECT_EQ(AnswerFor("applyPatchApproval", no), J(R"({"decision":{"denied":{"rejection":
                 "berth's policy: npm publish matches no allowed prefix"}}})"));
  EXPECT_EQ(AnswerFor("item/permissions/requestApproval", no),
            J(R"({"permissions":{},"scope":"turn"})"));
  EXPECT_TRUE(AnswerFor("item/tool/call", no).is_null());
}

// What the real codex app-server 0.171.0 sent in one turn (tests/fixtures/appserver), read the
// way the session reads it, decided by the rule ["touch", "approved.txt"].
TEST(ProtocolTest, ARecordedTranscriptOfTheRealServerIsDecidedAsThePolicySays) {
  std::ifstream in(std::string(BERTH_APPSERVER_FIXTURES) + "/approvals.jsonl");
  ASSERT_TRUE(in) << "the recorded transcript is missing";
  policy::ApprovalRules rules;
  rules.commands = {{"touch", "approved.txt"}};
  policy::ApprovalContext context;
  context.workspace = "/tmp/berth-appserver/approvals/workspace";
  context.resolve = [](const std::string& name) { return name; };
  ItemTracker items;
  std::vector<std::string> decided;
  std::string line;
  while (std::getline(in, line)) {
    auto parsed = rpc::ParseMessage(line, rpc::Dialect::kCodexAppServer);
    ASSERT_TRUE(std::holds_alternative<rpc::Message>(parsed)) << line;
    const rpc::Message& m = std::get<rpc::Message>(parsed);
    if (m.kind == rpc::Message::Kind::kNotification && m.params.contains("item"))
      items.Observe(m.params["item"]);
    if (m.kind != rpc::Message::Kind::kRequest) continue;
    policy::ApprovalDecision d =
        policy::DecideApproval(rules, ReadApprovalRequest(m.method, m.params, items), context);
    decided.push_back(std::string(policy::AnswerName(d.answer)) + " " + d.rule);
  }
  EXPECT_EQ(decided, (std::vector<std::string>{
                         "accept command-prefix",           // /bin/bash -lc 'touch approved.txt'
                         "decline command-not-allowed",     // rm -f approved.txt
                         "decline shell-syntax",            // touch meta1.txt; touch meta2.txt
                         "decline file-change-outside",     // ../outside.txt
                         "accept file-change-inside",       // inside.txt
                         "decline command-not-allowed"}));  // touch root.txt, escalated
}

// Every message berth sends, one per line with the schema definition it must satisfy:
// tests/fixtures/appserver/client-messages.jsonl, which app_server_schema_test checks against
// the JSON Schema the real CLI prints. BERTH_UPDATE_GOLDEN=1 rewrites the file.
TEST(ProtocolTest, WhatBerthSendsIsTheGoldenFileTheSchemaTestChecks) {
  const rpc::Dialect d = rpc::Dialect::kCodexAppServer;
  TurnSpec turn{"/src/app", "fix the test", true};
  TurnSpec offline{"/src/app", "read only", false};
  std::vector<std::pair<std::string, nlohmann::json>> sent = {
      {"ClientRequest", rpc::MakeRequest(1, "initialize", InitializeParams("0.1.0"), d)},
      {"ClientNotification", rpc::MakeNotification("initialized", nlohmann::json::object(), d)},
      {"ClientRequest", rpc::MakeRequest(2, "thread/start", ThreadStartParams(turn), d)},
      {"ClientRequest", rpc::MakeRequest(3, "turn/start", TurnStartParams("thr", turn), d)},
      {"ClientRequest", rpc::MakeRequest(4, "turn/start", TurnStartParams("thr", offline), d)},
      {"ClientRequest", rpc::MakeRequest(5, "turn/interrupt", TurnInterruptParams("thr", "t"), d)},
  };
  const std::pair<const char*, const char*> answers[] = {
      {"item/commandExecution/requestApproval", "CommandExecutionRequestApprovalResponse"},
      {"item/fileChange/requestApproval", "FileChangeRequestApprovalResponse"},
      {"execCommandApproval", "ExecCommandApprovalResponse"},
      {"applyPatchApproval", "ApplyPatchApprovalResponse"},
      {"item/permissions/requestApproval", "PermissionsRequestApprovalResponse"}};
  for (const auto& [method, schema] : answers)
    for (policy::Answer a : {policy::Answer::kAccept, policy::Answer::kDecline}) {
      if (std::string(method) == "item/permissions/requestApproval" && a == policy::Answer::kAccept)
        continue;  // never accepted
      sent.emplace_back(schema, AnswerFor(method, Decided(a)));
    }
  std::string golden;
  for (const auto& [schema, message] : sent)
    golden += nlohmann::json({{"schema", schema}, {"message", message}}).dump() + "\n";
  const std::string path = std::string(BERTH_APPSERVER_FIXTURES) + "/client-messages.jsonl";
  if (const char* update = std::getenv("BERTH_UPDATE_GOLDEN"); update && std::string(update) == "1")
    std::ofstream(path) << golden;
  std::ifstream in(path);
  std::stringstream recorded;
  recorded << in.rdbuf();
  EXPECT_EQ(recorded.str(), golden) << "rerun with BERTH_UPDATE_GOLDEN=1 and check the schema test";
}

TEST(ProtocolTest, TrackerIgnoresItemsWithoutAnId) {
  ItemTracker items;
  items.Observe(J(R"({"type":"fileChange"})"));
  items.Observe(J("[1,2]"));
  items.Observe(J(R"({"id":5})"));
  EXPECT_EQ(items.size(), 0u);
}

}  // namespace
}  // namespace berth::appserver
