#include "provider/classify.h"

#include <gtest/gtest.h>

namespace berth::provider {
namespace {

Provider Json() {
  Provider p;
  p.name = "codex";
  p.output = OutputFormat::kCodex;
  p.login_hint = "set OPENAI_API_KEY";
  return p;
}

RunFacts Ok() {
  RunFacts f;
  f.output.has_final = true;
  f.output.final_text = "done";
  return f;
}

TEST(Classify, CompletedNeedsAFinalResult) {
  EXPECT_EQ(Classify(Json(), Ok()).kind, OutcomeKind::kCompleted);
  RunFacts f = Ok();
  f.output.has_final = false;
  f.output.lines = 3;
  Outcome o = Classify(Json(), f);
  EXPECT_EQ(o.kind, OutcomeKind::kMalformedOutput);
  EXPECT_NE(o.reason.find("exited 0 without a valid final result"), std::string::npos);
}

TEST(Classify, CommandProviderGoesByExitStatus) {
  Provider command;
  command.name = "command";
  command.output = OutputFormat::kNone;
  RunFacts f;
  EXPECT_EQ(Classify(command, f).kind, OutcomeKind::kCompleted);
  f.exit_code = 2;
  Outcome o = Classify(command, f);
  EXPECT_EQ(o.kind, OutcomeKind::kChildFailed);
  EXPECT_EQ(o.reason, "the agent exited with status 2");
}

TEST(Classify, ProviderReasonComesFirst) {
  RunFacts f;
  f.exit_code = 1;
  f.output.failure = "unexpected status 400 Bad Request: berth scripted failure";
  f.stderr_tail = "some other noise\n";
  Outcome o = Classify(Json(), f);
  EXPECT_EQ(o.kind, OutcomeKind::kChildFailed);
  EXPECT_EQ(o.reason.find("codex failed: unexpected status 400"), 0u) << o.reason;
  EXPECT_EQ(o.evidence, f.output.failure);
}

TEST(Classify, AuthenticationAndModelFailures) {
  RunFacts f;
  f.exit_code = 1;
  f.output.failure = "401 Unauthorized: Incorrect API key provided";
  Outcome o = Classify(Json(), f);
  EXPECT_EQ(o.kind, OutcomeKind::kUnauthenticated);
  EXPECT_EQ(o.hint, "set OPENAI_API_KEY");
  f.output.failure = "The model `gpt-9` does not exist or you do not have access to it.";
  EXPECT_EQ(Classify(Json(), f).kind, OutcomeKind::kUnavailable);
  f.output.failure.clear();
  f.stderr_tail = "Error: Not logged in. Please run /login\n";
  EXPECT_EQ(Classify(Json(), f).kind, OutcomeKind::kUnauthenticated);
  f.stderr_tail.clear();
  f.output.failure = "API Error (status 401): bad credentials";
  EXPECT_EQ(Classify(Json(), f).kind, OutcomeKind::kUnauthenticated);
}

// A port or a count that happens to hold 401 or 404 is no status code: CI's lived-in run
// once took "connect to 127.0.0.1:42401: Connection refused" for a refused login.
TEST(Classify, DigitsInAPortAreNoStatusCode) {
  RunFacts f;
  f.exit_code = 1;
  f.output.failure =
      "API Error: 502 berth: egress to dead.test:42401 failed: connect to 127.0.0.1:42401: "
      "Connection refused";
  EXPECT_EQ(Classify(Json(), f).kind, OutcomeKind::kChildFailed);
  f.output.failure = "model gpt-5 at 10.0.0.1:14040 failed: connection reset";
  EXPECT_EQ(Classify(Json(), f).kind, OutcomeKind::kChildFailed);
  f.output.failure = "model gpt-9: HTTP 404";
  EXPECT_EQ(Classify(Json(), f).kind, OutcomeKind::kUnavailable);
}

TEST(Classify, ParentSandboxHint) {
  RunFacts f;
  f.exit_code = 1;
  f.output.failure = "stream disconnected before completion: error sending request";
  f.parent_network_disabled = true;
  Outcome o = Classify(Json(), f);
  EXPECT_EQ(o.kind, OutcomeKind::kChildFailed);
  EXPECT_NE(o.hint.find("CODEX_SANDBOX_NETWORK_DISABLED=1"), std::string::npos);
  f.parent_network_disabled = false;
  f.endpoint_problems = {"api.openai.com:443: DNS lookup failed"};
  o = Classify(Json(), f);
  EXPECT_NE(o.hint.find("api.openai.com:443: DNS lookup failed"), std::string::npos);
}

// A CLI that cannot reach its API may call it a temporary server-side issue; when the proxy
// saw the name not resolve, the hint names that cause (and keeps the parent sandbox's marker).
TEST(Classify, AnEndpointThatDidNotResolveIsNamedNotServerSide) {
  RunFacts f;
  f.exit_code = 1;
  f.output.failure =
      "API Error: Connection error. This is a server-side issue, usually "
      "temporary — try again";
  f.endpoint_problems = {"api.anthropic.com:443: DNS lookup of api.anthropic.com failed"};
  Outcome o = Classify(Json(), f);
  EXPECT_EQ(o.kind, OutcomeKind::kChildFailed);
  EXPECT_EQ(o.reason.find("codex failed: API Error"), 0u) << o.reason;  // its words first
  EXPECT_NE(o.hint.find("did not resolve"), std::string::npos) << o.hint;
  EXPECT_NE(o.hint.find("not a server-side issue"), std::string::npos) << o.hint;
  f.parent_network_disabled = true;
  o = Classify(Json(), f);
  EXPECT_EQ(o.hint.find("berth itself runs inside another tool's sandbox"), 0u) << o.hint;
  EXPECT_NE(o.hint.find("did not resolve"), std::string::npos) << o.hint;
}

TEST(Classify, ModelMismatchIsUnavailable) {
  RunFacts f = Ok();
  f.model.ok = false;
  f.model.reason = "the job asked for model opus but claude reported claude-sonnet-4-5";
  Outcome o = Classify(Json(), f);
  EXPECT_EQ(o.kind, OutcomeKind::kUnavailable);
  EXPECT_EQ(o.reason, f.model.reason);
}

}  // namespace
}  // namespace berth::provider
