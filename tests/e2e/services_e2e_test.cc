// Services (docs/environments.md, "Services"): a PostgreSQL data directory built once per key
// (initdb and the schema), and every job and every check run with its own server on its own
// loopback, from the host's binaries, ready before the command, gone after it.
#include <chrono>
#include <thread>

#include "tests/e2e/jobs_fixture.h"

namespace berth::e2e {
namespace {

constexpr char kServicePolicy[] = R"policy(version = 1
[defaults]
max_concurrent_jobs = 4
[agents.implement]
capability = "write"
provider = "command"
writable = ["src/**", "db/**"]
[environment]
key = ["deps.lock"]
setup = [["sh", "-c", "mkdir -p node_modules && echo dep > node_modules/dep.txt"]]
paths = ["node_modules"]
[environment.services.db]
kind = "postgresql"
key = ["db/schema.sql"]
setup = [["psql", "-q", "-v", "ON_ERROR_STOP=1", "-f", "db/schema.sql"]]
[[verify]]
name = "writes"
argv = ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-c", "insert into items values ('check')"]
[[verify]]
name = "schema"
argv = ["sh", "-c", "test \"$(psql -tAc 'select count(*) from items')\" = 1 && test \"$DATABASE_URL\" = postgresql://postgres@127.0.0.1:5432/postgres"]
)policy";

constexpr char kSchema[] =
    "create table items (name text primary key);\n"
    "insert into items values ('seed');\n";

// The processes of the host running PostgreSQL's server on a service's data directory.
int ServerProcesses() {
  int count = 0;
  for (const std::string& pid : sys::ListDir("/proc").value_or(std::vector<std::string>{})) {
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = sys::ReadFile("/proc/" + pid + "/cmdline").value_or("");
    if (cmdline.find("/run/berth-services/") != std::string::npos) ++count;
  }
  return count;
}

class ServicesTest : public JobsTest {
 protected:
  std::string InitialPolicy() const override { return kServicePolicy; }
  void SetUp() override {
    JobsTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    if (!sys::Exists("/usr/lib/postgresql")) GTEST_SKIP() << "PostgreSQL's server is not installed";
    ASSERT_TRUE(WriteText(ws() + "/deps.lock", "v1\n"));
    ASSERT_TRUE(sys::MakeDirs(ws() + "/db", 0755));
    ASSERT_TRUE(WriteText(ws() + "/db/schema.sql", kSchema));
    ASSERT_EQ(Git({"add", "-A"}).exit_code, 0);
    ASSERT_EQ(Git({"commit", "-q", "-m", "schema"}).exit_code, 0);
  }
};

TEST_F(ServicesTest, TwoConcurrentJobsEachGetTheirOwnDatabaseAndTheCheckItsOwn) {
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    // Each agent inserts its own row, pauses (so both servers run at once on port 5432 of
    // their own loopbacks), then records every row its database holds.
    const std::string name = "job" + std::to_string(i);
    const std::string script = "psql -q -v ON_ERROR_STOP=1 -c \"insert into items values ('" +
                               name + "')\" && sleep 1 && psql -tAc " +
                               "'select name from items order by name' > src/" + name + ".txt";
    RunResult r = Berth({"run", "--detach", "--json", "implement", "--", "sh", "-c", script});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    ids.push_back(GetStr(ParseJson(r.out), "id"));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    json job = WaitForEnd(ids[i]);
    // The checks passed: the second one's server had the schema and the seed row only, not
    // the agent's row nor the first check's.
    EXPECT_EQ(GetStr(job, "state"), "completed") << job.dump(2) << Logs(ids[i]);
    const std::string name = "job" + std::to_string(i);
    EXPECT_EQ(GitOut({"show", "berth/" + ids[i] + ":src/" + name + ".txt"}), name + "\nseed")
        << Logs(ids[i]);
    EXPECT_TRUE(Contains(Logs(ids[i]),
                         "service db: postgresql of its own for the agent, "
                         "$DATABASE_URL=postgresql://postgres@127.0.0.1:5432/"))
        << Logs(ids[i]);
    // The receipt and `berth show` name the service.
    json services = Get(ReadReceiptFile(ids[i]), "environment.services");
    ASSERT_TRUE(services.is_array() && services.size() == 1u) << services.dump(2);
    EXPECT_EQ(GetStr(services[0], "name"), "db") << services.dump(2);
    EXPECT_EQ(GetStr(services[0], "variable"), "DATABASE_URL");
    EXPECT_TRUE(Contains(Berth({"show", ids[i]}).out, "service  db (postgresql)"));
    // The server's start and stop are not the agent's output.
    EXPECT_FALSE(Contains(ReadText(JobDir(ids[i]) + "/stderr"), "database system"))
        << ReadText(JobDir(ids[i]) + "/stderr");
  }
  ASSERT_EQ(Layers().size(), 1u);
  const std::string layer = state() + "/envs/" + Layers()[0];
  EXPECT_TRUE(sys::Exists(layer + "/services/db/data/PG_VERSION"));
  // A clean shutdown: no server's pid file left in the layer.
  EXPECT_FALSE(sys::Exists(layer + "/services/db/data/postmaster.pid"));
  // `berth env ls` names the layer's service and its data's size, in both formats.
  RunResult ls = Berth({"env", "ls"});
  EXPECT_TRUE(Contains(ls.out, "  service db (postgresql): ")) << ls.Describe();
  json listed = ParseJson(Berth({"env", "ls", "--json"}).out);
  ASSERT_TRUE(listed.is_array() && listed.size() == 1u) << listed.dump(2);
  json listed_services = Get(listed[0], "services");
  ASSERT_TRUE(listed_services.is_array() && listed_services.size() == 1u) << listed.dump(2);
  EXPECT_EQ(GetStr(listed_services[0], "name"), "db");
  EXPECT_EQ(GetStr(listed_services[0], "kind"), "postgresql");
  EXPECT_GT(listed_services[0].value("size_bytes", 0), 1000000) << listed.dump(2);
  // Nothing of the servers is left: no process, no copy of the data.
  EXPECT_EQ(ServerProcesses(), 0);
  for (const std::string& id : ids) {
    EXPECT_FALSE(sys::Exists(JobDir(id) + "/services")) << id;
    for (const std::string& entry : sys::ListDir(JobDir(id)).value_or({}))
      EXPECT_NE(entry.rfind("verify-", 0), 0u) << entry;
  }
}

TEST_F(ServicesTest, AFailedServiceSetupFailsTheJobWith73AndTheAgentNeverRuns) {
  std::string policy = kServicePolicy;
  const std::string from = "\"-f\", \"db/schema.sql\"";
  policy.replace(policy.find(from), from.size(), "\"-c\", \"select * from missing_table\"");
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "failing service setup"}).exit_code, 0);
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo agent-ran; touch src/ran.c"});
  EXPECT_EQ(r.exit_code, 73) << r.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "failed");
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "service db: `psql")) << job.dump(2);
  json receipt = ReadReceiptFile(id);
  EXPECT_EQ(GetStr(receipt, "error.cause"), "environment") << receipt.dump(2);
  EXPECT_TRUE(Contains(GetStr(receipt, "error.evidence"), "missing_table")) << receipt.dump(2);
  EXPECT_FALSE(Contains(ReadText(JobDir(id) + "/stdout"), "agent-ran"));
  EXPECT_TRUE(Layers().empty());
  EXPECT_EQ(ServerProcesses(), 0);
}

TEST_F(ServicesTest, AServerThatCannotStartFailsTheJobNamingItAndTheAgentNeverRuns) {
  RunResult built = Berth({"run", "implement", "--", "true"});
  ASSERT_EQ(built.exit_code, 0) << built.Describe();
  ASSERT_EQ(Layers().size(), 1u);
  // A damaged data directory: PostgreSQL refuses to start on it.
  const std::string data = state() + "/envs/" + Layers()[0] + "/services/db/data";
  ASSERT_TRUE(sys::RemoveFile(data + "/PG_VERSION"));
  RunResult r = Berth({"run", "implement", "--", "sh", "-c", "echo agent-ran"});
  EXPECT_EQ(r.exit_code, 69) << r.Describe();
  const std::string id = NewestJobId();
  json job = ShowJson(id);
  EXPECT_EQ(GetStr(job, "state"), "unavailable") << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "start the service postgresql db"))
      << job.dump(2);
  EXPECT_TRUE(Contains(GetStr(job, "state_reason"), "ended before it was ready")) << job.dump(2);
  EXPECT_FALSE(Contains(ReadText(JobDir(id) + "/stdout"), "agent-ran"));
  // The server's own words are in the job's output.
  EXPECT_TRUE(Contains(ReadText(JobDir(id) + "/stderr"), "PG_VERSION"))
      << ReadText(JobDir(id) + "/stderr");
  EXPECT_FALSE(sys::Exists(JobDir(id) + "/services"));
  EXPECT_EQ(ServerProcesses(), 0);
}

// A project that needs a database and no dependency tree: [environment] of services only.
TEST_F(ServicesTest, AnEnvironmentOfServicesOnlyGivesTheAgentItsDatabase) {
  std::string policy = kServicePolicy;
  for (const char* line : {"key = [\"deps.lock\"]\n",
                           "setup = [[\"sh\", \"-c\", \"mkdir -p node_modules && echo dep > "
                           "node_modules/dep.txt\"]]\n",
                           "paths = [\"node_modules\"]\n"}) {
    const size_t at = policy.find(line);
    ASSERT_NE(at, std::string::npos) << line;
    policy.erase(at, std::string(line).size());
  }
  ASSERT_TRUE(WriteText(PolicyPath(), policy));
  ASSERT_EQ(Git({"commit", "-q", "-am", "services only"}).exit_code, 0);
  RunResult r = Berth(
      {"run", "implement", "--", "sh", "-c", "psql -tAc 'select name from items' > src/rows.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.Describe();
  EXPECT_EQ(GitOut({"show", "berth/" + NewestJobId() + ":src/rows.txt"}), "seed");
  EXPECT_EQ(ServerProcesses(), 0);
}

}  // namespace
}  // namespace berth::e2e
