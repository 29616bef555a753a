#include "host/permission_mode.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sys/fs.h"

namespace berth::host {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

std::string Hook(const std::string& session, const std::string& mode) {
  return nlohmann::json{{"session_id", session},
                        {"cwd", "/repo"},
                        {"hook_event_name", "PreToolUse"},
                        {"tool_name", "mcp__berth__land"},
                        {"permission_mode", mode}}
      .dump();
}

std::string Record(const std::string& session, const std::string& mode, int64_t at) {
  std::string s;
  Result<std::string> r = RecordFromHookInput(Hook(session, mode), at, &s);
  EXPECT_TRUE(r) << r.error().ToString();
  return r ? *r : "";
}

TEST(PermissionModeTest, Names) {
  for (const char* n : {"plan", "default", "acceptEdits", "auto", "dontAsk", "bypassPermissions"})
    EXPECT_EQ(ModeName(*ParseMode(n)), std::string(n));
  EXPECT_FALSE(ParseMode("Plan"));
  EXPECT_FALSE(IsAutoMode(Mode::kPlan));
  EXPECT_FALSE(IsAutoMode(Mode::kDefault));
  EXPECT_TRUE(IsAutoMode(Mode::kAcceptEdits));
  EXPECT_TRUE(IsAutoMode(Mode::kBypassPermissions));
}

TEST(PermissionModeTest, FreshRecordOfTheSession) {
  HostMode m = ModeFromRecordText(Record("s1", "acceptEdits", kNow), "s1", kNow + 1000);
  EXPECT_TRUE(m.hosted);
  EXPECT_EQ(m.mode, Mode::kAcceptEdits);
  EXPECT_EQ(m.source, "record");
}

TEST(PermissionModeTest, MissingMalformedStaleFutureOrOtherSessionIsDefault) {
  const std::string fresh = Record("s1", "bypassPermissions", kNow);
  EXPECT_EQ(ModeFromRecordText(std::nullopt, "s1", kNow).mode, Mode::kDefault);
  EXPECT_EQ(ModeFromRecordText(std::string("{"), "s1", kNow).mode, Mode::kDefault);
  EXPECT_EQ(ModeFromRecordText(std::string("[]"), "s1", kNow).mode, Mode::kDefault);
  EXPECT_EQ(ModeFromRecordText(fresh, "s2", kNow).mode, Mode::kDefault);
  EXPECT_EQ(ModeFromRecordText(fresh, "s1", kNow + kRecordMaxAgeMs + 1).mode, Mode::kDefault);
  EXPECT_EQ(ModeFromRecordText(fresh, "s1", kNow - kRecordMaxSkewMs - 1).mode, Mode::kDefault);
  EXPECT_EQ(ModeFromRecordText(Record("s1", "yolo", kNow), "s1", kNow).mode, Mode::kDefault);
  nlohmann::json wrong = nlohmann::json::parse(fresh);
  wrong["written_at_ms"] = "now";
  EXPECT_EQ(ModeFromRecordText(wrong.dump(), "s1", kNow).mode, Mode::kDefault);
  wrong = nlohmann::json::parse(fresh);
  wrong["version"] = 2;
  EXPECT_EQ(ModeFromRecordText(wrong.dump(), "s1", kNow).mode, Mode::kDefault);
}

TEST(PermissionModeTest, HookInputIsChecked) {
  std::string s;
  EXPECT_FALSE(RecordFromHookInput("not json", kNow, &s));
  EXPECT_FALSE(RecordFromHookInput("[]", kNow, &s));
  EXPECT_FALSE(RecordFromHookInput(Hook("../etc", "auto"), kNow, &s));
  EXPECT_FALSE(RecordFromHookInput(Hook("", "auto"), kNow, &s));
  EXPECT_FALSE(RecordFromHookInput(Hook("a/b", "auto"), kNow, &s));
  EXPECT_FALSE(RecordPath("/state", ".."));
  EXPECT_EQ(*RecordPath("/state", "abc-1"), "/state/host/claude-code/abc-1.json");
}

TEST(PermissionModeTest, WriteAndResolveThroughTheEnvironment) {
  Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-host-test-");
  ASSERT_TRUE(dir);
  ASSERT_TRUE(WriteRecord(*dir, Hook("sess", "auto"), kNow));
  Environ env = {{"CLAUDE_CODE_SESSION_ID", "sess"}};
  EXPECT_EQ(ResolveHostMode(env, *dir, kNow + 10).mode, Mode::kAuto);
  // Another session does not read it.
  EXPECT_EQ(ResolveHostMode({{"CLAUDE_CODE_SESSION_ID", "other"}}, *dir, kNow).mode,
            Mode::kDefault);
  EXPECT_EQ(ResolveHostMode({{"CLAUDECODE", "1"}}, *dir, kNow).mode, Mode::kDefault);
  EXPECT_TRUE(ResolveHostMode({{"CLAUDECODE", "1"}}, *dir, kNow).hosted);
  EXPECT_FALSE(ResolveHostMode({{"HOME", "/h"}}, *dir, kNow).hosted);
  EXPECT_TRUE(ResolveHostMode({{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}}, *dir, kNow).hosted);
  EXPECT_EQ(
      ResolveHostMode({{"BERTH_HOST", "codex"}, {"BERTH_HOST_MODE", "plan"}}, *dir, kNow).mode,
      Mode::kPlan);
  EXPECT_EQ(ResolveHostMode({{"BERTH_HOST", "codex"}, {"BERTH_HOST_MODE", "?"}}, *dir, kNow).mode,
            Mode::kDefault);
  ASSERT_TRUE(sys::RemoveTree(*dir));
}

TEST(PermissionModeTest, DecisionTable) {
  HostMode none;
  EXPECT_TRUE(*DecideAtSubmit(none, true, true));
  EXPECT_FALSE(*DecideAtSubmit(none, true, false));
  auto hosted = [](Mode m) { return HostMode{true, "claude-code", m, "record"}; };
  Result<bool> plan = DecideAtSubmit(hosted(Mode::kPlan), true, true);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().cause(), Cause::kPolicyDenied);
  EXPECT_NE(plan.error().message().find("plan mode"), std::string::npos);
  EXPECT_FALSE(*DecideAtSubmit(hosted(Mode::kPlan), false, true));  // read agents run
  EXPECT_FALSE(*DecideAtSubmit(hosted(Mode::kDefault), true, true));
  for (Mode m : {Mode::kAcceptEdits, Mode::kAuto, Mode::kDontAsk, Mode::kBypassPermissions}) {
    EXPECT_TRUE(*DecideAtSubmit(hosted(m), true, true));
    EXPECT_FALSE(*DecideAtSubmit(hosted(m), true, false));
  }
}

// What Codex 0.171 really sends in a tools/call's _meta (captured from `codex exec` calling
// berth's tools, trimmed): its sandbox, never its approval policy.
constexpr char kCodexCallMeta[] = R"({"callId":"call_de61f2a764fa4f3990cb8016",
  "x-codex-turn-metadata":{"session_id":"01a23361-2443-7f43-81b0-0a6d70e80582",
    "model":"gpt-5.5","turn_trigger":"exec","sandbox":"seccomp","sandbox_mode":"read-only",
    "auto_review_enabled":false,"codex_version":"0.171.0"},
  "threadId":"01a23361-2443-7f43-81b0-0a6d70e80582","progressToken":1})";

TEST(PermissionModeTest, CodexHostIsDefaultWhateverItsSandbox) {
  HostMode read_only = CodexHostMode(kCodexCallMeta);
  EXPECT_TRUE(read_only.hosted);
  EXPECT_EQ(read_only.host, "codex");
  EXPECT_EQ(read_only.mode, Mode::kDefault);
  EXPECT_EQ(read_only.source, "codex sends no approval policy (its sandbox: read-only)");
  // `-c approval_policy="on-request" -c sandbox_mode="danger-full-access"` changes only this.
  std::string full = kCodexCallMeta;
  full.replace(full.find("\"seccomp\""), 9, "\"none\"");
  full.replace(full.find("\"read-only\""), 11, "\"danger-full-access\"");
  EXPECT_EQ(CodexHostMode(full).mode, Mode::kDefault);
  for (const char* meta : {"", "{}", "[]", R"({"x-codex-turn-metadata":7})"})
    EXPECT_EQ(CodexHostMode(meta).source, "codex sends no approval policy") << meta;
}

// The guessed shapes the mapping once read (approvalPolicy, codex/sandbox-state) are not what
// Codex sends; a call carrying them changes nothing.
TEST(PermissionModeTest, CodexGuessedMetaShapesChangeNothingRegression) {
  for (const char* meta :
       {R"({"codex/sandbox-state":{"sandboxPolicy":{"type":"read-only"}}})",
        R"({"approvalPolicy":"never"})",
        R"({"approvalPolicy":"never","sandboxPolicy":{"type":"danger-full-access"}})"})
    EXPECT_EQ(CodexHostMode(meta).mode, Mode::kDefault) << meta;
}

}  // namespace
}  // namespace berth::host
