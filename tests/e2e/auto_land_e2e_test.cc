// End-to-end test of auto-land ([landing] auto = true, docs/landing.md): the runner lands a job
// that completed and passed its required check by itself, through the lander the CLI gives it
// (land/ sits above job/ in the module graph, so the runner cannot call it directly).
//
// Passes as root and as an unprivileged user; a host without the sandbox is a loud skip.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sys/fs.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {
namespace {

using nlohmann::json;

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

constexpr char kPath[] = "/usr/local/bin:/usr/bin:/bin";

constexpr char kPolicy[] = R"(version = 1
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**"]

[landing]
auto = true

[[verify]]
name = "unit"
argv = ["sh", "-c", "exit 0"]
)";

class AutoLandTest : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::optional<std::string> git = FindInPath("git");
    REQUIRE_FEATURE(git.has_value(), "no git in /usr/local/bin, /usr/bin or /bin");
    git_ = *git;
    std::optional<std::string> true_path = FindInPath("true");
    ASSERT_TRUE(true_path.has_value());
    RunResult probe = Berth({"sandbox", "--", *true_path});
    if (probe.exit_code == 69) {
      RequireFeature(false, "the sandbox is unavailable on this host: " + probe.err);
      return;
    }
    ASSERT_EQ(probe.exit_code, 0) << probe.Describe();
    ASSERT_EQ(Git({"init", "-q", "-b", "main"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "user.name", "berth e2e"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "user.email", "e2e@berth.invalid"}).exit_code, 0);
    ASSERT_EQ(Git({"config", "commit.gpgsign", "false"}).exit_code, 0);
    ASSERT_TRUE(sys::MakeDirs(ws() + "/src", 0755));
    ASSERT_TRUE(sys::MakeDirs(ws() + "/.berth", 0755));
    ASSERT_TRUE(WriteText(ws() + "/src/main.c", "int main(void) { return 0; }\n"));
    ASSERT_TRUE(WriteText(ws() + "/src/old.c", "old\n"));
    ASSERT_TRUE(WriteText(ws() + "/src/tool.sh", "#!/bin/sh\necho tool\n", 0644));
    ASSERT_TRUE(WriteText(ws() + "/.berth/policy.toml", kPolicy));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "base"}).exit_code, 0);
    base_ = GitOut({"rev-parse", "HEAD"});
  }

  void TearDown() override {
    if (!state().empty()) KillProcessesWithArgument(state());
    if (!root().empty()) IgnoreError(MakeTreeRemovable(root()), "a temp tree left fails no test");
    SandboxTest::TearDown();
  }

  RunResult Berth(const std::vector<std::string>& args) const {
    return Run(args, {{"GIT_CONFIG_NOSYSTEM", "1"}});
  }
  RunResult Git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {git_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {{"PATH", kPath}, {"HOME", home()}, {"GIT_CONFIG_NOSYSTEM", "1"}},
                      ws());
  }
  std::string GitOut(const std::vector<std::string>& args) const {
    RunResult result = Git(args);
    EXPECT_EQ(result.exit_code, 0) << result.Describe();
    std::string out = result.out;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

  std::string git_;
  std::string base_;
};

// The runner's auto-land reached Land through JobContext::auto_land after the split of land/
// out of job/; nothing tested it, so a runner given no lander would have gone unnoticed.
TEST_F(AutoLandTest, AutoLandThroughTheLanderTheCliGivesRegression) {
  RunResult run =
      Berth({"run", "--json", "implement", "--", "sh", std::string(AGENTS_DIR) + "/edit.sh"});
  json job = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << run.Describe();
  ASSERT_EQ(job.value("state", ""), "completed") << run.Describe();
  const std::string id = job.value("id", "");

  const std::string head = GitOut({"rev-parse", "HEAD"});
  EXPECT_NE(head, base_);
  EXPECT_EQ(GitOut({"rev-parse", "HEAD^"}), base_);
  EXPECT_NE(GitOut({"log", "-1", "--format=%B"}).find("Berth-Job: " + id), std::string::npos);

  RunResult show = Berth({"show", id, "--json"});
  json shown = json::parse(show.out, nullptr, false);
  ASSERT_TRUE(shown.is_object()) << show.Describe();
  EXPECT_EQ(shown.value("landed_commit", ""), head) << shown.dump(2);
  // The runner recorded the lander's answer as the job's "land" event.
  RunResult logs = Berth({"logs", id, "--json"});
  bool event = false;
  for (const std::string& line : SplitLines(logs.out)) {
    json e = json::parse(line, nullptr, false);
    if (e.is_object() && e.value("step", "") == "land" &&
        e.value("detail", "") == "auto-landed on main as " + head.substr(0, 12))
      event = true;
  }
  EXPECT_TRUE(event) << logs.Describe();
}

}  // namespace
}  // namespace berth::e2e
