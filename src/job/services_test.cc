#include "job/services.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "git/testing.h"
#include "sys/fs.h"

namespace berth::job {
namespace {

std::string EnvOf(const sandbox::SandboxSpec& spec, const std::string& name) {
  auto it = std::find_if(spec.env.begin(), spec.env.end(),
                         [&](const sandbox::EnvVar& v) { return v.name == name; });
  return it == spec.env.end() ? "(unset)" : it->value;
}

TEST(Services, EachGetsItsDataCopyOnWriteItsServerItsPortAndItsVariable) {
  if (!sys::Exists("/usr/lib/postgresql")) GTEST_SKIP() << "no PostgreSQL server here";
  git::testing::TempDir temp("services");
  policy::Environment environment;
  policy::Service db;
  db.name = "db";
  db.kind = "postgresql";
  policy::Service events = db;
  events.name = "events";
  events.url = "EVENTS_URL";
  environment.services = {db, events};
  sandbox::SandboxSpec spec;
  spec.env = {{"DATABASE_URL", "postgresql://elsewhere", "--setenv"}};
  const std::string scratch = temp.path() + "/services";
  ASSERT_TRUE(AddServices(environment, "/layer", scratch, &spec));

  ASSERT_EQ(spec.dir_overlays.size(), 2u);
  const sandbox::OverlayWorkspace& data = spec.dir_overlays[0];
  EXPECT_EQ(data.lower, std::vector<std::string>{"/layer/services/db/data"});
  EXPECT_EQ(data.upper, scratch + "/db/upper");
  EXPECT_EQ(data.target, "/run/berth-services/db/data");
  EXPECT_TRUE(sys::Exists(scratch + "/db/upper"));
  EXPECT_TRUE(sys::Exists(scratch + "/events/work"));

  ASSERT_EQ(spec.services.size(), 2u);
  const sandbox::SandboxService& server = spec.services[0];
  EXPECT_EQ(server.name, "postgresql db");
  EXPECT_EQ(server.ready_file, "/run/berth-services/db/data/postmaster.pid");
  EXPECT_NE(std::find(server.argv.begin(), server.argv.end(), "5432"), server.argv.end());
  EXPECT_NE(std::find(spec.services[1].argv.begin(), spec.services[1].argv.end(), "5433"),
            spec.services[1].argv.end());

  // The policy's service wins over a variable of the same name; the first service also sets
  // what a bare psql reads, the second only its own variable.
  EXPECT_EQ(EnvOf(spec, "DATABASE_URL"), "postgresql://postgres@127.0.0.1:5432/postgres");
  EXPECT_EQ(std::count_if(spec.env.begin(), spec.env.end(),
                          [](const sandbox::EnvVar& v) { return v.name == "DATABASE_URL"; }),
            1);
  EXPECT_EQ(EnvOf(spec, "PGPORT"), "5432");
  EXPECT_EQ(EnvOf(spec, "EVENTS_URL"), "postgresql://postgres@127.0.0.1:5433/postgres");

  ASSERT_TRUE(RemoveServiceScratch(scratch));
  EXPECT_FALSE(sys::Exists(scratch));
  // Nothing there: nothing to remove.
  EXPECT_TRUE(RemoveServiceScratch(scratch));
}

}  // namespace
}  // namespace berth::job
