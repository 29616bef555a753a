#include "sandbox/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "sys/fs.h"

namespace berth::sandbox {
namespace {

// Plans for the namespaces tier. Paths that must exist on the host are system directories
// (the plan only looks at the host, it mounts nothing), never under /tmp or /var/tmp, which
// every plan makes private.
class PlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_.workspace = "/usr";
    spec_.argv = {"true"};
    spec_.paths.push_back({PathGrant::Access::kReadWrite, "/usr", "workspace"});
  }

  Plan Build(const std::vector<std::string>& sockets = {}) {
    PlanInputs inputs{Tier::kNamespaces, 0, "", {}, {-1, -1, -1}, -1};
    inputs.host_sockets = sockets;
    return BuildPlan(spec_, inputs).value();
  }
  static const Step* Find(const Plan& plan, const std::string& description) {
    auto it = std::find_if(plan.setup.begin(), plan.setup.end(),
                           [&](const Step& s) { return s.description == description; });
    return it == plan.setup.end() ? nullptr : &*it;
  }
  static bool Mentions(const Plan& plan, const std::string& part) {
    return std::any_of(plan.setup.begin(), plan.setup.end(), [&](const Step& s) {
      return s.description.find(part) != std::string::npos;
    });
  }
  // A directory that exists under `dir`.
  static std::string SubDir(const std::string& dir) {
    for (const std::string& name : sys::ListDir(dir).value_or(std::vector<std::string>{}))
      if (sys::TypeOf(dir + "/" + name) == sys::FileType::kDirectory) return dir + "/" + name;
    return "";
  }

  SandboxSpec spec_;
};

TEST_F(PlanTest, CacheInsideAHiddenStateDirIsReachableRegression) {
  // The state directory is hidden in jobs and the caches live inside it: the job, without
  // capabilities, must be able to pass the hidden directory to reach the cache.
  spec_.hidden_paths = {"/etc"};
  PathGrant cache{PathGrant::Access::kReadWrite, "/etc/berth/caches/npm", "cache:npm"};
  cache.create_if_missing = true;
  spec_.paths.push_back(cache);
  Plan with_cache = Build();
  const Step* hidden = Find(with_cache, "mount tmpfs on hidden /etc");
  ASSERT_NE(hidden, nullptr);
  EXPECT_STREQ(hidden->b, "mode=0111,size=4k");

  spec_.paths.pop_back();
  Plan without = Build();
  hidden = Find(without, "mount tmpfs on hidden /etc");
  ASSERT_NE(hidden, nullptr);
  EXPECT_STREQ(hidden->b, "mode=000,size=4k") << "nothing inside: not even passable";
}

TEST_F(PlanTest, AHiddenHomeIsMaskedAndWhatLiesInsideShowsThrough) {
  // Another account's home (here /etc, which exists on every host) holds the job's grant, a
  // hidden file and a hidden state directory with a cache: the home is masked but passable,
  // the grant is bound on top, the file is gone with the home, and the state directory is
  // masked again on its own mount point so that it stays unlistable.
  const std::string state = SubDir("/etc");
  ASSERT_FALSE(state.empty());
  spec_.hidden_homes = {"/etc"};
  spec_.hidden_paths = {"/etc/passwd", state};
  spec_.paths.push_back({PathGrant::Access::kReadWrite, "/etc/berth-ws", "write:/etc/berth-ws"});
  PathGrant cache{PathGrant::Access::kReadWrite, state + "/caches/npm", "cache:npm"};
  cache.create_if_missing = true;
  spec_.paths.push_back(cache);
  Plan plan = Build();
  const Step* home = Find(plan, "mount tmpfs on hidden /etc");
  ASSERT_NE(home, nullptr);
  EXPECT_STREQ(home->b, "mode=0111,size=4k");
  EXPECT_TRUE(Mentions(plan, "bind-mount write:/etc/berth-ws /etc/berth-ws"));
  EXPECT_FALSE(Mentions(plan, "hidden /etc/passwd")) << "gone with the home: nothing to mask";
  EXPECT_NE(Find(plan, "create mount point " + state), nullptr);
  const Step* hidden_state = Find(plan, "mount tmpfs on hidden " + state);
  ASSERT_NE(hidden_state, nullptr);
  EXPECT_STREQ(hidden_state->b, "mode=0111,size=4k");

  spec_.paths.resize(1);
  spec_.hidden_paths.clear();
  Plan empty = Build();
  home = Find(empty, "mount tmpfs on hidden /etc");
  ASSERT_NE(home, nullptr);
  EXPECT_STREQ(home->b, "mode=000,size=4k") << "nothing inside: not even passable";
}

TEST_F(PlanTest, AHiddenHomeThatAMountShowsIsNotMasked) {
  spec_.hidden_homes = {"/usr"};  // the workspace itself
  EXPECT_FALSE(Mentions(Build(), "hidden /usr"));
}

TEST_F(PlanTest, HiddenPathsUnderAPrivateDirAreNotMountedRegression) {
  // HOME=/tmp/...: /tmp is the job's own tmpfs, the credentials are not there to hide.
  std::string dir = sys::MakeTempDir("/tmp", "berth-plan-hidden-").value();
  ASSERT_TRUE(sys::MakeDirs(dir + "/.ssh", 0700).has_value());
  const std::string in_workspace = SubDir("/usr");
  ASSERT_FALSE(in_workspace.empty());
  spec_.hidden_paths = {dir + "/.ssh", in_workspace};
  Plan plan = Build();
  EXPECT_FALSE(Mentions(plan, "hidden " + dir + "/.ssh"));
  EXPECT_TRUE(Mentions(plan, "hidden " + in_workspace)) << "the workspace shows the host";
  (void)sys::RemoveTree(dir);
}

TEST_F(PlanTest, HiddenPathsUnderThePrivateHomeAreNotMounted) {
  // The home is /etc here; /usr (the workspace) stands for an allowlist bind inside it.
  spec_.private_home = "/etc";
  const std::string in_home = SubDir("/etc");
  const std::string in_bind = SubDir("/usr");
  ASSERT_FALSE(in_home.empty());
  spec_.hidden_paths = {in_home, in_bind};
  Plan plan = Build();
  EXPECT_TRUE(Mentions(plan, "mount tmpfs on private home /etc"));
  EXPECT_EQ(Find(plan, "mount tmpfs on hidden " + in_home), nullptr);
  EXPECT_EQ(Find(plan, "bind-mount empty file over hidden " + in_home), nullptr);
  EXPECT_TRUE(Mentions(plan, "hidden " + in_bind)) << "inside a bind the second wall stands";
}

TEST_F(PlanTest, HostSocketsTheViewShowsAreMaskedExceptGrantedOnes) {
  const std::string in_view = "/srv/berth-test/a.sock";
  const std::string in_ws = "/usr/b.sock";
  const std::string granted = "/srv/berth-test/granted.sock";
  const std::string in_tmp = "/tmp/berth-plan-test.sock";
  spec_.paths.push_back({PathGrant::Access::kSocket, granted, "socket:" + granted});
  Plan plan = Build({in_view, in_ws, granted, in_tmp});
  EXPECT_TRUE(Mentions(plan, "empty file over the host socket " + in_view));
  EXPECT_TRUE(Mentions(plan, "empty file over the host socket " + in_ws));
  EXPECT_FALSE(Mentions(plan, "host socket " + granted));
  EXPECT_FALSE(Mentions(plan, "host socket " + in_tmp)) << "/tmp is private";
}

TEST_F(PlanTest, HostSocketsAGrantShowsInAHiddenHomeAreMaskedRegression) {
  // A read: grant in another (hidden) home shows a directory with a host socket in it: the
  // home's mask does not cover what the grant shows again, so the socket needs its own.
  const std::string shown = SubDir("/etc");
  ASSERT_FALSE(shown.empty());
  spec_.hidden_homes = {"/etc"};
  spec_.paths.push_back({PathGrant::Access::kReadOnly, shown, "read:" + shown});
  Plan plan = Build({shown + "/app.sock", "/etc/berth-plan-test/hidden.sock"});
  EXPECT_TRUE(Mentions(plan, "empty file over the host socket " + shown + "/app.sock"));
  EXPECT_FALSE(Mentions(plan, "host socket /etc/berth-plan-test/hidden.sock"))
      << "gone with the home";
}

TEST_F(PlanTest, OnlyOverlaysMountedOnceSkipTheSyncOfTheirUpperFilesystem) {
  spec_.paths.clear();
  spec_.overlay = OverlayWorkspace{{"/l1", "/l2"},    "/j/upper", "/j/work", "/usr", "workspace",
                                   /*skip_sync=*/true};
  spec_.dir_overlays.push_back({{"/s"}, "/j/git", "/j/git-work", "/usr/lib", "private git", true});
  spec_.dir_overlays.push_back({{"/c"}, "/v/upper", "/v/work", "/usr/share", "provider state"});
  spec_.dir_overlays.push_back({{"/j/git", "/s"}, "", "", "/usr/include", "private git", true});
  Plan plan = Build();
  auto options = [&](const std::string& description) -> std::string {
    const Step* step = Find(plan, description);
    return step == nullptr ? "<no such step>" : step->b;
  };
  EXPECT_EQ(options("mount the workspace overlay on /usr"),
            "lowerdir=/oldroot/l1:/oldroot/l2,upperdir=/oldroot/j/upper,"
            "workdir=/oldroot/j/work,volatile,userxattr");
  EXPECT_EQ(options("mount the private git overlay on /usr/lib"),
            "lowerdir=/oldroot/s,upperdir=/oldroot/j/git,workdir=/oldroot/j/git-work,volatile,"
            "userxattr");
  // Without skip_sync (as for a check's overlay, mounted once per check on one upper): synced.
  EXPECT_EQ(options("mount the provider state overlay on /usr/share"),
            "lowerdir=/oldroot/c,upperdir=/oldroot/v/upper,workdir=/oldroot/v/work,userxattr");
  // Read-only: no upper layer, nothing to sync.
  EXPECT_EQ(options("mount the private git overlay on /usr/include"),
            "lowerdir=/oldroot/j/git:/oldroot/s,userxattr");
}

TEST_F(PlanTest, WorldWritableDirsArePrivate) {
  Plan plan = Build();
  EXPECT_TRUE(Mentions(plan, "mount tmpfs on private /tmp"));
  if (sys::TypeOf("/var/tmp") == sys::FileType::kDirectory) {
    EXPECT_TRUE(Mentions(plan, "mount tmpfs on private /var/tmp"));
  }
  EXPECT_TRUE(Mentions(plan, "mount tmpfs on private /dev/shm"));
}

// The landlock tier mounts nothing: a writable path shown from another source would be the
// host's own path there (a job's copy at the repository's path is the user's checkout).
TEST_F(PlanTest, LandlockTierRefusesRemappedPathsRegression) {
  PathGrant copy{PathGrant::Access::kReadWrite, "/usr/share", "workspace"};
  copy.source = "/usr/lib";
  spec_.paths.push_back(copy);
  PlanInputs inputs{Tier::kLandlock, 0, "/var/tmp", {}, {-1, -1, -1}, -1};
  Result<Plan> plan = BuildPlan(spec_, inputs);
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().cause(), Cause::kUnavailable);
  spec_.paths.back().access = PathGrant::Access::kReadOnly;
  EXPECT_TRUE(BuildPlan(spec_, inputs).has_value()) << "a read-only remap only reads";
  spec_.paths.pop_back();
  spec_.overlay = OverlayWorkspace{{"/usr/lib"}, "/usr/share", "/usr/src", "/usr/share"};
  EXPECT_FALSE(BuildPlan(spec_, inputs).has_value());
  spec_.overlay.reset();
  EXPECT_TRUE(BuildPlan(spec_, inputs).has_value()) << "control: a plain spec plans";
}

TEST_F(PlanTest, ServicesAreCompiledForTheInitAndNestedOnlyWhenAsked) {
  SandboxService server;
  server.name = "postgresql db";
  server.argv = {"/usr/lib/postgresql/15/bin/postgres", "-D", "/run/berth-services/db/data"};
  server.env = {{"LANG", "C", "service"}};
  server.ready_file = "/run/berth-services/db/data/postmaster.pid";
  server.ready_text = "\nready";
  server.nonroot_id = 65534;
  spec_.services = {server};
  Plan plan = Build();
  ASSERT_EQ(plan.services.size(), 1u);
  const PlanService& s = plan.services[0];
  EXPECT_STREQ(s.argv[0], "/usr/lib/postgresql/15/bin/postgres");
  EXPECT_EQ(s.argv.back(), nullptr);
  EXPECT_STREQ(s.envp[0], "LANG=C");
  EXPECT_STREQ(s.ready_file, "/run/berth-services/db/data/postmaster.pid");
  EXPECT_EQ(s.stop_signal, 2);
  // berth's root is nobody in the server's own user namespace.
  EXPECT_TRUE(s.nest);
  EXPECT_EQ(s.maps.uid_map, "65534 0 1\n");
  EXPECT_EQ(s.description, "start the service postgresql db");
  EXPECT_FALSE(plan.command_nest);
  spec_.services[0].nonroot_id = 0;
  spec_.command_nonroot_id = 65534;
  Plan other = Build();
  EXPECT_FALSE(other.services[0].nest);
  EXPECT_TRUE(other.command_nest);
}

TEST_F(PlanTest, ABlackholeRouteFollowsTheLoopbackAndNeedsANamespaceWithoutNetwork) {
  spec_.blackhole_route = true;
  Plan plan = Build();
  std::vector<StepKind> kinds;
  for (const Step& step : plan.setup) kinds.push_back(step.kind);
  auto up = std::find(kinds.begin(), kinds.end(), StepKind::kLoopbackUp);
  ASSERT_NE(up, kinds.end());
  ASSERT_NE(up + 1, kinds.end());
  EXPECT_EQ(*(up + 1), StepKind::kBlackholeRoute);
  PlanInputs with_servers{Tier::kNamespaces, 0, "", {}, {-1, -1, -1}, -1};
  with_servers.name_servers = {"10.255.255.53"};
  Plan refusing = BuildPlan(spec_, with_servers).value();
  const Step* reject = Find(refusing, "refuse the name server 10.255.255.53");
  ASSERT_NE(reject, nullptr);
  EXPECT_EQ(reject->kind, StepKind::kRejectRoute);
  EXPECT_STREQ(reject->a, "10.255.255.53");
  spec_.network = Network::kProxy;
  PlanInputs inputs{Tier::kNamespaces, 0, "/var/lib", {}, {-1, -1, -1}, -1};
  Result<Plan> with_proxy = BuildPlan(spec_, inputs);
  ASSERT_FALSE(with_proxy.has_value());
  EXPECT_NE(with_proxy.error().message().find("blackhole"), std::string::npos);
  spec_.network = Network::kNone;
  spec_.paths.clear();
  PlanInputs landlock{Tier::kLandlock, 0, "/var/lib", {}, {-1, -1, -1}, -1};
  EXPECT_FALSE(BuildPlan(spec_, landlock).has_value());
}

// The init joins its v1 cgroups before any other step, in both tiers: whatever it allocates
// afterwards (mounts, the command's fork) counts against the job's limits.
TEST_F(PlanTest, TheInitJoinsItsCgroupsFirst) {
  for (Tier tier : {Tier::kNamespaces, Tier::kLandlock}) {
    PlanInputs inputs{tier, 0, "/var/lib", {}, {-1, -1, -1}, -1};
    inputs.cgroup_joins = {{41, "/sys/fs/cgroup/memory/berth-x"},
                           {42, "/sys/fs/cgroup/pids/berth-x"}};
    if (tier == Tier::kLandlock) spec_.paths.clear();
    Plan plan = BuildPlan(spec_, inputs).value();
    ASSERT_GE(plan.setup.size(), 3u);
    EXPECT_EQ(plan.setup[0].kind, StepKind::kJoinCgroup);
    EXPECT_EQ(plan.setup[0].number, 41);
    EXPECT_EQ(plan.setup[0].description, "join the job's cgroup /sys/fs/cgroup/memory/berth-x");
    EXPECT_EQ(plan.setup[1].kind, StepKind::kJoinCgroup);
    EXPECT_EQ(plan.setup[1].number, 42);
    EXPECT_NE(plan.setup[2].kind, StepKind::kJoinCgroup);
  }
}

TEST(NameServersOf, ListsTheIpv4NameServersButLoopbackOnes) {
  EXPECT_EQ(NameServersOf("# generated\nsearch example.com\nnameserver 10.255.255.53\n"
                          "nameserver\t127.0.0.53\nnameserver  192.0.2.7 \nnameserver ::1\n"
                          "nameserver fe80::1%eth0\nnameserver not-an-address\n"),
            (std::vector<std::string>{"10.255.255.53", "192.0.2.7"}));
  EXPECT_TRUE(NameServersOf("").empty());
}

TEST_F(PlanTest, TheLandlockTierRefusesServices) {
  spec_.paths.clear();
  SandboxService server;
  server.name = "postgresql db";
  server.argv = {"/bin/true"};
  spec_.services = {server};
  PlanInputs inputs{Tier::kLandlock, 0, "/var/lib", {}, {-1, -1, -1}, -1};
  Result<Plan> plan = BuildPlan(spec_, inputs);
  ASSERT_FALSE(plan.has_value());
  EXPECT_NE(plan.error().message().find("namespaces tier"), std::string::npos)
      << plan.error().message();
  // The init keeps its services' pids in a fixed array.
  spec_.services = std::vector<SandboxService>(kMaxServices + 1, server);
  PlanInputs namespaces{Tier::kNamespaces, 0, "", {}, {-1, -1, -1}, -1};
  EXPECT_FALSE(BuildPlan(spec_, namespaces).has_value());
}

}  // namespace
}  // namespace berth::sandbox
