// The set-up the suites with the real agent CLIs share: the CLIs that
// scripts/install-test-clis put into $BERTH_TEST_CLIS, and the test model server
// (tests/fixtures/model_server) on the host's loopback, reached from inside the sandbox only
// through berth's egress proxy: the user's [net.hosts] maps model.test and reach.test to
// 127.0.0.1, and each CLI's base-URL variable points at model.test.
//
// Without $BERTH_TEST_CLIS a suite is a loud skip, and a failure when CI is set.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {

inline constexpr char kModelServer[] = MODEL_SERVER_DIR "/model_server.py";

// The installed CLIs' executables; "" when $BERTH_TEST_CLIS is unset.
inline std::string TestCliDir() {
  const char* dir = std::getenv("BERTH_TEST_CLIS");
  return dir != nullptr ? std::string(dir) + "/node_modules/.bin" : "";
}

class ModelServerTest : public JobsTest {
 protected:
  // Requires each of `clis` (a loud skip, or a failure in CI), starts the model server and
  // writes the user's [net.hosts]. Callers check HasFatalFailure() and IsSkipped() after it.
  void StartModelServer(const std::vector<std::string>& clis) {
    const std::string bin = TestCliDir();
    for (const std::string& cli : clis)
      REQUIRE_FEATURE(!bin.empty() && PathExists(bin + "/" + cli),
                      "the real " + cli +
                          " CLI is not installed: run scripts/install-test-clis DIR and set "
                          "BERTH_TEST_CLIS=DIR");
    std::optional<std::string> python = FindInPath("python3");
    REQUIRE_FEATURE(python.has_value(), "python3 is needed for the test model server");
    const std::string port_file = root() + "/model-server.port";
    server_ = StartProgram(
        {*python, kModelServer, "--port", "0", "--port-file", port_file, "--log", ModelServerLog()},
        {{"PATH", kPath}}, root());
    ASSERT_TRUE(WaitUntil([&] { return PathExists(port_file); }, std::chrono::seconds(20)))
        << "the model server did not start";
    port_ = TrimRight(ReadText(port_file));
    ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
    ASSERT_TRUE(
        WriteText(home() + "/.config/berth/config.toml",
                  "[net.hosts]\n\"model.test\" = \"127.0.0.1\"\n\"reach.test\" = \"127.0.0.1\"\n"));
  }
  void TearDown() override {
    if (server_.pid() > 0) ::kill(server_.pid(), SIGTERM);
    if (server_.pid() > 0) server_.Wait();
    JobsTest::TearDown();
  }

  std::string ModelServerLog() const { return root() + "/model-server.log"; }
  // The CLIs first in PATH, then `vars` with "{port}" replaced by the model server's port.
  EnvVars CliEnv(std::vector<std::pair<std::string, std::string>> vars,
                 bool with_cli_in_path = true) const {
    EnvVars env = {{"GIT_CONFIG_NOSYSTEM", "1"},
                   {"PATH", (with_cli_in_path ? TestCliDir() + ":" : std::string()) + kPath}};
    for (auto& [name, value] : vars) {
      if (size_t at = value.find("{port}"); at != std::string::npos) value.replace(at, 6, port_);
      env.emplace_back(name, value);
    }
    return env;
  }

  RunningProgram server_;
  std::string port_;
};

}  // namespace berth::e2e
