// End-to-end tests of `berth sandbox`: every promise of the sandbox is proven from the inside
// by sandbox_probe, which attempts one operation and reports its errno. Wherever it is cheap,
// a control run of the same probe outside the sandbox proves the operation would succeed
// there, so that a test fails when the sandbox stops denying it.
//
// The suite passes both as root and as an unprivileged user; host features it needs but
// cannot find are loud skips, or failures when CI is set (see RequireFeature).

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/strings.h"
#include "sys/fs.h"
#include "sys/net.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {
namespace {

using ::testing::AssertionFailure;
using ::testing::AssertionResult;
using ::testing::AssertionSuccess;

constexpr std::chrono::seconds kLeftoverWait{2};
const std::vector<std::string> kLandlockTier = {"--tier", "landlock", "--allow-weaker"};

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// The value of " KEY=VALUE" on the probe's report line, or "" when absent.
std::string Field(const RunResult& result, const std::string& key) {
  std::string line = " " + FirstLine(result.out) + " ";
  size_t start = line.find(" " + key + "=");
  if (start == std::string::npos) return "";
  start += key.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

// Whether the probe reported success ("OP ok ...", exit 0).
bool IsOk(const RunResult& result) {
  std::string line = FirstLine(result.out);
  size_t space = line.find(' ');
  return result.exit_code == 0 && space != std::string::npos &&
         (line.compare(space, 3, " ok") == 0);
}

// The probe's report line is one of `expected` (whole lines such as "write errno=30 EROFS"),
// with the exit code that goes with it (0 for "OP ok...", 1 otherwise).
AssertionResult ReportsOneOf(const RunResult& result, std::initializer_list<std::string> expected) {
  std::string line = FirstLine(result.out);
  for (const std::string& candidate : expected) {
    int exit_code = Contains(candidate, " ok") ? 0 : 1;
    if (line == candidate && result.exit_code == exit_code) return AssertionSuccess();
  }
  AssertionResult failure = AssertionFailure() << "expected the probe to report one of:";
  for (const std::string& candidate : expected) failure << " \"" << candidate << "\"";
  return failure << "\n" << result.Describe();
}

AssertionResult Reports(const RunResult& result, const std::string& expected) {
  return ReportsOneOf(result, {expected});
}

// Any success report ("OP ok key=value...").
AssertionResult ReportsOk(const RunResult& result) {
  if (IsOk(result)) return AssertionSuccess();
  return AssertionFailure() << "expected the probe to succeed\n" << result.Describe();
}

// The lines the probe's `env` op printed.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool HasLine(const RunResult& result, const std::string& line) {
  for (const std::string& l : Lines(result.out))
    if (l == line) return true;
  return false;
}

bool HasLineStartingWith(const RunResult& result, const std::string& prefix) {
  for (const std::string& l : Lines(result.out))
    if (StartsWith(l, prefix)) return true;
  return false;
}

// Runs `cat /proc/self/cgroup` under --memory and --pids as root and expects the command in
// the job's own cgroup ("berth-...") for each of those controllers: in its v1 hierarchy, where
// the init joins itself through the `tasks` files berth opened (ResourceLimits::SelfJoins), or
// else in the v2 one, where the init is cloned into it. A command left in berth's cgroup would
// run under no limit at all.
void ExpectCommandInTheJobsCgroups(const SandboxTest& test, std::vector<std::string> berth_args) {
  if (!IsRoot())
    GTEST_SKIP() << "SKIPPED LOUDLY: an unprivileged user gets rlimits where no cgroup is "
                    "delegated to it; the root run of this test covers the cgroups";
  std::vector<std::string> args = {"sandbox"};
  args.insert(args.end(), berth_args.begin(), berth_args.end());
  args.insert(args.end(), {"--memory", "256MiB", "--pids", "64", "--", "cat", "/proc/self/cgroup"});
  RunResult result = test.Run(args);
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  std::string v2;
  for (const std::string& line : Lines(result.out))
    if (StartsWith(line, "0::")) v2 = line.substr(3);
  for (const std::string controller : {"memory", "pids"}) {
    std::string path = v2;
    for (const std::string& line : Lines(result.out)) {
      std::vector<std::string> fields = Split(line, ':');
      if (fields.size() >= 3 && fields[1] == controller) path = fields[2];
    }
    EXPECT_TRUE(Contains(path, "/berth-")) << controller << ": " << result.Describe();
  }
}

enum class LinkStyle { kRelative, kAbsolute };

// Moves HOME's .aws directory and .netrc file to ROOT/dotfiles and leaves symlinks in their
// place, as dotfile managers do.
void MoveCredentialsBehindSymlinks(const std::string& root, const std::string& home,
                                   LinkStyle style) {
  const std::string dotfiles = root + "/dotfiles";
  ASSERT_TRUE(sys::MakeDirs(dotfiles + "/aws", 0755));
  ASSERT_TRUE(WriteText(dotfiles + "/aws/credentials", "SECRET-KEY\n", 0600));
  ASSERT_TRUE(WriteText(dotfiles + "/netrc", "SECRET-KEY\n", 0600));
  const std::string prefix = style == LinkStyle::kAbsolute ? dotfiles : "../dotfiles";
  for (const char* name : {"aws", "netrc"}) {
    const std::string link = home + "/." + name;
    ASSERT_TRUE(sys::RemoveTree(link));
    ASSERT_EQ(symlink((prefix + "/" + name).c_str(), link.c_str()), 0) << std::strerror(errno);
  }
}

// The probe could not read what it tried to: hidden (EACCES), or gone (ENOENT).
AssertionResult ReadIsHidden(const RunResult& result) {
  if (Contains(result.out + result.err, "SECRET-KEY"))
    return AssertionFailure() << "the secret leaked\n" << result.Describe();
  return ReportsOneOf(result, {"read errno=13 EACCES", "read errno=2 ENOENT"});
}

// Runs `berth sandbox BERTH_ARGS --timeout 1s -- env --ignore-signal=TERM sandbox_probe daemon
// TOKEN`: a daemonizing tree that only the SIGKILL after the grace period can end. Expects
// exit 124 and no process of the tree left afterwards.
void ExpectTimeoutEndsATreeIgnoringSigterm(const SandboxTest& test, const std::string& token,
                                           std::vector<std::string> berth_args) {
  std::optional<std::string> env = FindInPath("env");
  ASSERT_TRUE(env.has_value()) << "no env(1) in PATH";
  std::vector<std::string> args = {"sandbox"};
  args.insert(args.end(), berth_args.begin(), berth_args.end());
  args.insert(args.end(), {"--timeout", "1s", "--", *env, "--ignore-signal=TERM", SANDBOX_PROBE,
                           "daemon", token});
  RunResult result = test.Run(args);
  EXPECT_EQ(result.exit_code, 124) << result.Describe();
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait))
      << "processes outlived berth: " << testing::PrintToString(ProcessesWithArgument(token))
      << "\n"
      << result.Describe();
  for (pid_t pid : ProcessesWithArgument(token)) kill(pid, SIGKILL);
}

// Tests of the default tier where the host offers it: user, mount, pid and network
// namespaces plus Landlock and seccomp.
class NamespacesTierTest : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    RunResult probe = Probe({"exit", "0"}, {"--tier", "namespaces"});
    if (probe.exit_code == 69) {
      RequireFeature(false, "the namespaces tier is unavailable (user namespaces?): " + probe.err);
      return;
    }
    ASSERT_EQ(probe.exit_code, 0) << probe.Describe();
  }

  // Binds a UDP socket on `address` (an address of this machine) and checks that a datagram
  // the probe sends to it from inside never arrives, while one sent from outside does.
  void ExpectUdpNotDelivered(const std::string& address) {
    Result<BoundSocket> socket = BindUdp(address);
    ASSERT_TRUE(socket) << socket.error().ToString();
    std::string port = std::to_string(socket->port);
    ASSERT_TRUE(Reports(ProbeOutside({"udp-send", address, port}), "udp-send ok"));
    ASSERT_EQ(ReceiveDatagram(socket->fd.get(), kLeftoverWait), "probe") << "control";

    // Inside, 127.0.0.1 is the sandbox's own loopback, so the send itself may succeed.
    EXPECT_TRUE(ReportsOneOf(Probe({"udp-send", address, port}),
                             {"udp-send ok", "udp-send errno=101 ENETUNREACH"}));
    // The sender has exited and loopback delivery is synchronous: nothing more can arrive.
    EXPECT_EQ(ReceiveDatagram(socket->fd.get(), std::chrono::milliseconds(0)), std::nullopt)
        << "a datagram from inside the sandbox reached " << address << ":" << port;
  }
};

// Tests of `--tier landlock --allow-weaker`: Landlock and seccomp without namespaces.
class LandlockTierTest : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    int abi = LandlockAbi();
    RequireFeature(abi >= 6, "Landlock ABI " + std::to_string(abi) +
                                 " < 6: TCP rules need ABI 4, signal and abstract socket "
                                 "scoping ABI 6 (Linux 6.12)");
  }
};

// --- Files ----------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, WritesOutsideTheWorkspaceFailWithReadOnlyFilesystem) {
  // Control: outside the sandbox the caller may write in HOME and in the test root.
  ASSERT_TRUE(ReportsOk(ProbeOutside({"write", home() + "/control"})));
  ASSERT_TRUE(ReportsOk(ProbeOutside({"write", root() + "/control"})));

  std::string etc_file = "/etc/" + UniqueName("x");
  RemoveAfterTest(etc_file);
  // The home and the test root (under /var/tmp) are private tmpfs inside: writable there,
  // never reaching the host (home_e2e_test.cc has the home's allowlist).
  EXPECT_TRUE(ReportsOneOf(Probe({"write", home() + "/x"}), {"write ok", "write errno=30 EROFS"}));
  EXPECT_TRUE(ReportsOneOf(Probe({"write", root() + "/x"}), {"write ok", "write errno=30 EROFS"}));
  EXPECT_TRUE(Reports(Probe({"write", etc_file}), "write errno=30 EROFS"));
  EXPECT_FALSE(PathExists(home() + "/x"));
  EXPECT_FALSE(PathExists(root() + "/x"));
  EXPECT_FALSE(PathExists(etc_file));
}

TEST_F(NamespacesTierTest, TmpIsPrivateSoWritesNeverReachTheHostTmp) {
  std::string tmp_file = "/tmp/" + UniqueName("tmpfile");
  RemoveAfterTest(tmp_file);
  EXPECT_TRUE(Reports(Probe({"write", tmp_file}), "write ok"));
  EXPECT_FALSE(PathExists(tmp_file)) << tmp_file << " leaked from the sandbox's /tmp to the host";
}

TEST_F(NamespacesTierTest, WritesInTheWorkspaceReachTheHost) {
  EXPECT_TRUE(Reports(Probe({"write", ws() + "/made-inside"}), "write ok"));
  EXPECT_EQ(ReadText(ws() + "/made-inside"), "probe\n");
}

TEST_F(NamespacesTierTest, SymlinkInTheWorkspaceCannotWriteOutsideIt) {
  std::string control_target = root() + "/control-target";
  ASSERT_TRUE(WriteText(control_target, "original\n"));
  ASSERT_TRUE(Reports(ProbeOutside({"symlink-write", control_target, ws() + "/control-link"}),
                      "symlink-write ok"));
  ASSERT_EQ(ReadText(control_target), "probe\n");

  std::string target = root() + "/outside";
  ASSERT_TRUE(WriteText(target, "original\n"));
  // Read-only, or (a test root under /var/tmp or /tmp) a private tmpfs: never the host's file.
  EXPECT_TRUE(ReportsOneOf(Probe({"symlink-write", target, ws() + "/link"}),
                           {"symlink-write errno=30 EROFS", "symlink-write ok"}));
  EXPECT_EQ(ReadText(target), "original\n");
}

TEST_F(NamespacesTierTest, HardlinkInTheWorkspaceCannotWriteOutsideIt) {
  std::string control_target = root() + "/control-target";
  ASSERT_TRUE(WriteText(control_target, "original\n"));
  ASSERT_TRUE(Reports(ProbeOutside({"hardlink-write", control_target, ws() + "/control-link"}),
                      "hardlink-write ok"));
  ASSERT_EQ(ReadText(control_target), "original\nprobe\n");

  std::string target = root() + "/outside";
  ASSERT_TRUE(WriteText(target, "original\n"));
  EXPECT_TRUE(ReportsOneOf(Probe({"hardlink-write", target, ws() + "/link"}),
                           {"hardlink-write errno=18 EXDEV", "hardlink-write errno=30 EROFS",
                            "hardlink-write errno=1 EPERM", "hardlink-write errno=2 ENOENT"}));
  EXPECT_EQ(ReadText(target), "original\n");
}

// --- Hidden credentials ---------------------------------------------------------------------

TEST_F(NamespacesTierTest, CredentialFilesAreHiddenByDefault) {
  ASSERT_TRUE(Reports(ProbeOutside({"read", home() + "/.ssh/id_rsa"}), "read ok bytes=11"));

  for (const char* path : {"/.ssh/id_rsa", "/.ssh", "/.aws/credentials", "/.netrc"}) {
    RunResult result = Probe({"read", home() + path});
    EXPECT_TRUE(ReadIsHidden(result)) << path;
    EXPECT_FALSE(Contains(result.out + result.err, "SECRET-KEY")) << result.Describe();
  }
}

TEST_F(NamespacesTierTest, CredentialsBehindRelativeSymlinksStayHidden) {
  ASSERT_NO_FATAL_FAILURE(MoveCredentialsBehindSymlinks(root(), home(), LinkStyle::kRelative));
  ASSERT_TRUE(Reports(ProbeOutside({"read", home() + "/.aws/credentials"}), "read ok bytes=11"));
  ASSERT_TRUE(Reports(ProbeOutside({"read", home() + "/.netrc"}), "read ok bytes=11"));

  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.aws/credentials"})));
  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.netrc"})));
}

TEST_F(NamespacesTierTest, CredentialsBehindAbsoluteSymlinksStayHidden) {
  ASSERT_NO_FATAL_FAILURE(MoveCredentialsBehindSymlinks(root(), home(), LinkStyle::kAbsolute));
  ASSERT_TRUE(Reports(ProbeOutside({"read", home() + "/.aws/credentials"}), "read ok bytes=11"));
  ASSERT_TRUE(Reports(ProbeOutside({"read", home() + "/.netrc"}), "read ok bytes=11"));

  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.aws/credentials"})));
  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.netrc"})));
  EXPECT_TRUE(Reports(Probe({"write", ws() + "/x"}), "write ok"))
      << "a symlinked credential must not stop the sandbox from starting";
}

TEST_F(NamespacesTierTest, CredentialsInsideTheWorkspaceStayHidden) {
  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.ssh/id_rsa"}, {"--workspace", home()})));
  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.netrc"}, {"--workspace", home()})));
}

TEST_F(NamespacesTierTest, ReadGrantUnhidesACredentialDirectory) {
  EXPECT_TRUE(Reports(Probe({"read", home() + "/.ssh/id_rsa"}, {"--read", home() + "/.ssh"}),
                      "read ok bytes=11"));
  EXPECT_TRUE(Reports(Probe({"read", home() + "/.ssh/id_rsa"}, {"--grant", "read:~/.ssh"}),
                      "read ok bytes=11"));
  // Un-hiding one directory leaves the others hidden.
  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.netrc"}, {"--read", home() + "/.ssh"})));
}

TEST_F(NamespacesTierTest, UserConfigHidesMorePaths) {
  // In the workspace, which shows the host (the home is private inside anyway).
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
  ASSERT_TRUE(sys::MakeDirs(ws() + "/private", 0755));
  ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                        "[sandbox]\nhide = [\"" + ws() + "/private\"]\n"));
  ASSERT_TRUE(WriteText(ws() + "/private/f", "private\n"));
  ASSERT_TRUE(Reports(ProbeOutside({"read", ws() + "/private/f"}), "read ok bytes=8"));

  EXPECT_TRUE(Reports(Probe({"read", ws() + "/private/f"}), "read errno=13 EACCES"));
}

// --- Network --------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, TcpToAHostLoopbackListenerIsRefused) {
  Result<BoundSocket> listener = ListenTcp("127.0.0.1");
  ASSERT_TRUE(listener) << listener.error().ToString();
  std::string port = std::to_string(listener->port);
  ASSERT_TRUE(Reports(ProbeOutside({"tcp-connect", "127.0.0.1", port}), "tcp-connect ok"));

  EXPECT_TRUE(
      ReportsOneOf(Probe({"tcp-connect", "127.0.0.1", port}),
                   {"tcp-connect errno=111 ECONNREFUSED", "tcp-connect errno=101 ENETUNREACH"}));
}

TEST_F(NamespacesTierTest, TcpToTheHostsInterfaceAddressIsUnreachable) {
  std::optional<std::string> address = HostIpv4Address();
  if (!address) GTEST_SKIP() << "SKIPPED LOUDLY: this host has no non-loopback IPv4 address";
  Result<BoundSocket> listener = ListenTcp(*address);
  ASSERT_TRUE(listener) << listener.error().ToString();
  std::string port = std::to_string(listener->port);
  ASSERT_TRUE(Reports(ProbeOutside({"tcp-connect", *address, port}), "tcp-connect ok"));

  EXPECT_TRUE(
      ReportsOneOf(Probe({"tcp-connect", *address, port}),
                   {"tcp-connect errno=111 ECONNREFUSED", "tcp-connect errno=101 ENETUNREACH"}));
}

TEST_F(NamespacesTierTest, UdpToAHostLoopbackSocketIsNotDelivered) {
  ASSERT_NO_FATAL_FAILURE(ExpectUdpNotDelivered("127.0.0.1"));
}

TEST_F(NamespacesTierTest, UdpToTheHostsInterfaceAddressIsNotDelivered) {
  std::optional<std::string> address = HostIpv4Address();
  if (!address) GTEST_SKIP() << "SKIPPED LOUDLY: this host has no non-loopback IPv4 address";
  ASSERT_NO_FATAL_FAILURE(ExpectUdpNotDelivered(*address));
}

TEST_F(NamespacesTierTest, DnsLookupFails) {
  RunResult result = Probe({"dns", "example.com"});
  EXPECT_TRUE(StartsWith(result.out, "dns eai=") && result.exit_code == 1) << result.Describe();
}

TEST_F(NamespacesTierTest, RawAndPacketSocketsAreDenied) {
  EXPECT_TRUE(Reports(Probe({"raw-socket"}), "raw-socket errno=1 EPERM"));
  EXPECT_TRUE(Reports(Probe({"packet-socket"}), "packet-socket errno=1 EPERM"));
}

TEST_F(NamespacesTierTest, CommandRunsInTheJobsCgroups) {
  ExpectCommandInTheJobsCgroups(*this, {});
}

// --- Unix sockets ---------------------------------------------------------------------------

class UnixSocketTest : public NamespacesTierTest {
 protected:
  // A listening socket at a path in the host's /tmp, which the sandbox replaces.
  void ListenInHostTmp() {
    Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-e2e-sock-");
    ASSERT_TRUE(dir) << dir.error().ToString();
    RemoveAfterTest(*dir);
    socket_path_ = *dir + "/socket";
    Result<BoundSocket> listener = ListenUnix(socket_path_);
    ASSERT_TRUE(listener) << listener.error().ToString();
    listener_ = std::move(*listener);
    ASSERT_TRUE(Reports(ProbeOutside({"unix-connect", socket_path_}), "unix-connect ok"));
  }

  std::string socket_path_;
  BoundSocket listener_;
};

TEST_F(UnixSocketTest, HostUnixSocketInTmpIsInvisible) {
  ASSERT_NO_FATAL_FAILURE(ListenInHostTmp());
  EXPECT_TRUE(Reports(Probe({"unix-connect", socket_path_}), "unix-connect errno=2 ENOENT"));
}

TEST_F(UnixSocketTest, SocketGrantReachesAHostUnixSocket) {
  ASSERT_NO_FATAL_FAILURE(ListenInHostTmp());
  EXPECT_TRUE(Reports(Probe({"unix-connect", socket_path_}, {"--grant", "socket:" + socket_path_}),
                      "unix-connect ok"));
}

TEST_F(NamespacesTierTest, HostAbstractSocketIsUnreachable) {
  std::string name = "berth-e2e-" + std::to_string(getpid());
  Result<BoundSocket> listener = ListenAbstract(name);
  ASSERT_TRUE(listener) << listener.error().ToString();
  ASSERT_TRUE(Reports(ProbeOutside({"abstract-connect", name}), "abstract-connect ok"));

  EXPECT_TRUE(
      Reports(Probe({"abstract-connect", name}), "abstract-connect errno=111 ECONNREFUSED"));
}

// --- Processes ------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, HostProcessesAreInvisible) {
  pid_t pid = StartPausedProcess();
  ASSERT_GT(pid, 0);
  std::string target = std::to_string(pid);
  ASSERT_TRUE(Reports(ProbeOutside({"kill", target, "0"}), "kill ok"));
  ASSERT_TRUE(ReportsOk(ProbeOutside({"proc-read", target})));

  EXPECT_TRUE(
      ReportsOneOf(Probe({"kill", target, "0"}), {"kill errno=3 ESRCH", "kill errno=1 EPERM"}));
  EXPECT_TRUE(
      ReportsOneOf(Probe({"ptrace", target}), {"ptrace errno=3 ESRCH", "ptrace errno=1 EPERM"}));
  EXPECT_TRUE(Reports(Probe({"proc-read", target}), "proc-read errno=2 ENOENT"));
}

TEST_F(NamespacesTierTest, CommandRunsUnderBerthsInitInAFreshPidNamespace) {
  EXPECT_TRUE(Reports(Probe({"pid"}), "pid ok pid=2 ppid=1"));
}

// --- Kernel surface -------------------------------------------------------------------------

TEST_F(NamespacesTierTest, MountIsDenied) {
  EXPECT_TRUE(Reports(Probe({"mount", ws()}), "mount errno=1 EPERM"));
}

TEST_F(NamespacesTierTest, NestedUserNamespacesNeedTheBrowserGrant) {
  EXPECT_TRUE(Reports(Probe({"userns"}), "userns errno=1 EPERM"));
  EXPECT_TRUE(Reports(Probe({"userns-clone"}), "userns-clone errno=1 EPERM"));
  EXPECT_TRUE(Reports(Probe({"userns"}, {"--grant", "browser"}), "userns ok"));
}

TEST_F(NamespacesTierTest, DangerousKernelInterfacesAreDenied) {
  for (const char* op : {"io-uring", "bpf", "perf", "keyctl", "open-by-handle"}) {
    EXPECT_TRUE(Reports(Probe({op}), std::string(op) + " errno=1 EPERM"));
  }
}

TEST_F(NamespacesTierTest, CommandHasNoCapabilitiesAndNoNewPrivileges) {
  RunResult caps = Probe({"caps"});
  ASSERT_TRUE(ReportsOk(caps));
  EXPECT_EQ(Field(caps, "eff"), "0000000000000000") << caps.Describe();
  EXPECT_EQ(Field(caps, "bnd"), "0000000000000000") << caps.Describe();

  RunResult ids = Probe({"ids"});
  ASSERT_TRUE(ReportsOk(ids));
  EXPECT_EQ(Field(ids, "nnp"), "1") << ids.Describe();
  EXPECT_EQ(Field(ids, "uid"), std::to_string(getuid())) << ids.Describe();
}

TEST_F(NamespacesTierTest, SetuidRootBinaryDoesNotEscalateInside) {
  struct stat st {};
  bool setuid_root =
      stat(SANDBOX_PROBE_SUID, &st) == 0 && st.st_uid == 0 && (st.st_mode & S_ISUID) != 0;
  REQUIRE_FEATURE(setuid_root, std::string(SANDBOX_PROBE_SUID) +
                                   " is not a setuid-root binary: build the tree as root");
  // Control: outside the sandbox the binary really runs with euid 0.
  RunResult control = RunOutside({SANDBOX_PROBE_SUID, "ids"});
  REQUIRE_FEATURE(Field(control, "euid") == "0",
                  "setuid does not take effect here (nosuid mount?):\n" + control.Describe());

  RunResult ids = Probe({"exec", SANDBOX_PROBE_SUID, "ids"});
  ASSERT_TRUE(ReportsOk(ids));
  EXPECT_EQ(Field(ids, "euid"), std::to_string(getuid())) << ids.Describe();
  RunResult caps = Probe({"exec", SANDBOX_PROBE_SUID, "caps"});
  ASSERT_TRUE(ReportsOk(caps));
  EXPECT_EQ(Field(caps, "eff"), "0000000000000000") << caps.Describe();
}

// --- Limits ---------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, PidsLimitStopsAForkBomb) {
  // The bomb stops by itself at 200 so that a broken limit cannot harm the host.
  RunResult result = Probe({"forkbomb", "200"}, {"--pids", "40"});
  ASSERT_TRUE(StartsWith(result.out, "forkbomb errno=11 EAGAIN ") && result.exit_code == 1)
      << result.Describe();
  EXPECT_LT(std::stoi(Field(result, "count")), 40) << result.Describe();
}

TEST_F(NamespacesTierTest, MemoryLimitStopsAMemoryHog) {
  RunResult result = Probe({"memhog", "1024"}, {"--memory", "64MiB"});
  bool out_of_memory = result.exit_code == 1 && StartsWith(result.out, "memhog errno=12 ENOMEM");
  bool killed = result.exit_code == 137 && !StartsWith(result.out, "memhog ok");
  EXPECT_TRUE(out_of_memory || killed) << result.Describe();
}

TEST_F(NamespacesTierTest, TimeoutEndsADaemonizedProcessTree) {
  std::string token = UniqueName("daemon-token");
  RunResult result = Probe({"daemon", token}, {"--timeout", "1s"});
  EXPECT_EQ(result.exit_code, 124) << result.Describe();
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait))
      << "processes outlived berth: " << testing::PrintToString(ProcessesWithArgument(token));
  for (pid_t pid : ProcessesWithArgument(token)) kill(pid, SIGKILL);
}

TEST_F(NamespacesTierTest, TimeoutEndsATreeThatIgnoresSigterm) {
  ExpectTimeoutEndsATreeIgnoringSigterm(*this, UniqueName("stubborn-token"), {});
}

// --- Exit status ----------------------------------------------------------------------------

TEST_F(NamespacesTierTest, ExitCodeOfTheCommandIsBerthsExitCode) {
  EXPECT_EQ(Probe({"exit", "7"}).exit_code, 7);
}

TEST_F(NamespacesTierTest, CommandKilledBySignalExits128PlusSignal) {
  RunResult sigkill = Probe({"raise", "9"});
  EXPECT_EQ(sigkill.exit_code, 137) << sigkill.Describe();
  RunResult sigterm = Probe({"raise", "15"});
  EXPECT_EQ(sigterm.exit_code, 143) << sigterm.Describe();
}

TEST_F(NamespacesTierTest, MissingCommandExits127) {
  RunResult result = Run({"sandbox", "--", ws() + "/no-such-command"});
  EXPECT_EQ(result.exit_code, 127) << result.Describe();
  EXPECT_TRUE(Contains(result.err, "cannot run")) << result.Describe();
}

TEST_F(NamespacesTierTest, CommandRunsInTheWorkspace) {
  EXPECT_TRUE(Reports(Probe({"pwd"}), "pwd ok path=" + ws()));
}

// --- Environment ----------------------------------------------------------------------------

TEST_F(NamespacesTierTest, EnvironmentIsAnAllowlist) {
  EnvVars caller = {{"GITHUB_TOKEN", "ghp_x"}, {"MY_VAR", "1"}};
  RunResult plain = Probe({"env"}, {}, caller);
  ASSERT_EQ(plain.exit_code, 0) << plain.Describe();
  EXPECT_FALSE(HasLineStartingWith(plain, "GITHUB_TOKEN=")) << plain.Describe();
  EXPECT_FALSE(HasLineStartingWith(plain, "MY_VAR=")) << plain.Describe();
  EXPECT_TRUE(HasLine(plain, "TMPDIR=/tmp")) << plain.Describe();
  EXPECT_TRUE(HasLine(plain, "PATH=/usr/local/bin:/usr/bin:/bin")) << plain.Describe();

  RunResult passed = Probe({"env"}, {"--env", "MY_VAR", "--setenv", "A=B"}, caller);
  ASSERT_EQ(passed.exit_code, 0) << passed.Describe();
  EXPECT_TRUE(HasLine(passed, "MY_VAR=1")) << passed.Describe();
  EXPECT_TRUE(HasLine(passed, "A=B")) << passed.Describe();
  EXPECT_FALSE(HasLineStartingWith(passed, "GITHUB_TOKEN=")) << passed.Describe();
}

// --- Profiles -------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, ReadOnlyProfileMakesTheWorkspaceReadOnly) {
  EXPECT_TRUE(
      Reports(Probe({"write", ws() + "/x"}, {"--profile", "read-only"}), "write errno=30 EROFS"));
  EXPECT_FALSE(PathExists(ws() + "/x"));
}

TEST_F(NamespacesTierTest, FullProfileNeedsFullAccess) {
  RunResult result = Probe({"write", root() + "/x"}, {"--profile", "full"});
  EXPECT_EQ(result.exit_code, 64) << result.Describe();
  EXPECT_FALSE(PathExists(root() + "/x"));
}

TEST_F(NamespacesTierTest, FullProfileWithFullAccessWritesOutsideTheWorkspace) {
  EXPECT_TRUE(
      Reports(Probe({"write", root() + "/x"}, {"--profile", "full", "--full-access"}), "write ok"));
  EXPECT_TRUE(PathExists(root() + "/x"));
}

TEST_F(NamespacesTierTest, OpenNetworkNeedsTheFullProfile) {
  RunResult result = Probe({"pwd"}, {"--network", "open"});
  EXPECT_EQ(result.exit_code, 64) << result.Describe();
}

// --- Grants ---------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, WriteGrantMakesADirectoryOutsideTheWorkspaceWritable) {
  std::string dir = root() + "/extra";
  ASSERT_TRUE(sys::MakeDirs(dir, 0755));
  EXPECT_TRUE(Reports(Probe({"write", dir + "/f"}, {"--write", dir}), "write ok"));
  EXPECT_EQ(ReadText(dir + "/f"), "probe\n");
  // Only that directory: its parent stays read-only, or (under /var/tmp, /tmp) private.
  EXPECT_TRUE(ReportsOneOf(Probe({"write", root() + "/f"}, {"--write", dir}),
                           {"write errno=30 EROFS", "write ok"}));
  EXPECT_FALSE(PathExists(root() + "/f"));
}

TEST_F(NamespacesTierTest, CacheGrantProvidesAWritableCacheAndItsVariable) {
  std::string cache = state() + "/caches/npm";
  RunResult env = Probe({"env"}, {"--grant", "cache:npm"});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  EXPECT_TRUE(HasLine(env, "npm_config_cache=" + cache)) << env.Describe();

  EXPECT_TRUE(Reports(Probe({"write", cache + "/f"}, {"--grant", "cache:npm"}), "write ok"));
  EXPECT_EQ(ReadText(cache + "/f"), "probe\n");
}

TEST_F(NamespacesTierTest, UnknownGrantIsAUsageError) {
  RunResult result = Probe({"pwd"}, {"--grant", "no-such-grant"});
  EXPECT_EQ(result.exit_code, 64) << result.Describe();
  EXPECT_EQ(result.out, "") << result.Describe();
}

// --- Print spec -----------------------------------------------------------------------------

TEST_F(NamespacesTierTest, PrintSpecPrintsJsonAndRunsNothing) {
  std::string socket_path = root() + "/socket";
  Result<BoundSocket> listener = ListenUnix(socket_path);
  ASSERT_TRUE(listener) << listener.error().ToString();
  std::string marker = ws() + "/marker";

  RunResult result = Probe({"write", marker}, {"--print-spec", "--grant", "socket:" + socket_path});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_FALSE(PathExists(marker)) << "--print-spec ran the command";
  nlohmann::json spec = nlohmann::json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(spec.is_object()) << "not a JSON object\n" << result.Describe();

  EXPECT_TRUE(spec.contains("profile") && spec.at("profile") == "isolated-write") << spec.dump(2);
  ASSERT_TRUE(spec.contains("hidden_paths") && spec.at("hidden_paths").is_array()) << spec.dump(2);
  bool hides_ssh = false;
  for (const nlohmann::json& path : spec.at("hidden_paths")) hides_ssh |= path == home() + "/.ssh";
  EXPECT_TRUE(hides_ssh) << spec.dump(2);
  ASSERT_TRUE(spec.contains("grants") && spec.at("grants").is_array() &&
              spec.at("grants").size() == 1)
      << spec.dump(2);
  const nlohmann::json& grant = spec.at("grants").at(0);
  EXPECT_TRUE(grant.is_object() && grant.contains("kind") && grant.at("kind") == "socket")
      << spec.dump(2);
}

// --- Browser --------------------------------------------------------------------------------

TEST_F(NamespacesTierTest, BrowserGrantRunsHeadlessChromiumWithItsOwnSandbox) {
  std::optional<std::string> chromium = FindInPath("chromium");
  if (!chromium) chromium = FindInPath("chromium-browser");
  REQUIRE_FEATURE(chromium.has_value(), "chromium is not installed");
  if (IsRoot()) {
    GTEST_SKIP() << "SKIPPED LOUDLY: chromium refuses to start its sandbox as root; the "
                    "unprivileged run of this suite covers this test";
  }
  ASSERT_TRUE(WriteText(ws() + "/index.html", "<p id=x>hello-berth</p>\n"));
  // No --no-sandbox: chromium must build its own namespace sandbox inside berth's.
  RunResult result = Run({"sandbox", "--grant", "browser", "--", *chromium, "--headless",
                          "--disable-gpu", "--dump-dom", "file://" + ws() + "/index.html"});
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_TRUE(Contains(result.out, "hello-berth")) << result.Describe();
}

TEST_F(NamespacesTierTest, ChromiumWithoutTheBrowserGrantIsRefused) {
  std::optional<std::string> chromium = FindInPath("chromium");
  if (!chromium) chromium = FindInPath("chromium-browser");
  REQUIRE_FEATURE(chromium.has_value(), "chromium is not installed");
  if (IsRoot()) {
    GTEST_SKIP() << "SKIPPED LOUDLY: chromium refuses to start its sandbox as root; the "
                    "unprivileged run of this suite covers this test";
  }
  ASSERT_TRUE(WriteText(ws() + "/index.html", "<p id=x>hello-berth</p>\n"));
  // A writable profile, so that the missing grant is the only thing that stops chromium.
  RunResult result =
      Run({"sandbox", "--", *chromium, "--headless", "--disable-gpu",
           "--user-data-dir=" + ws() + "/profile", "--dump-dom", "file://" + ws() + "/index.html"});
  EXPECT_NE(result.exit_code, 0) << result.Describe();
  EXPECT_FALSE(Contains(result.out, "hello-berth")) << result.Describe();
  // berth names the cause and the grant that would allow it.
  EXPECT_TRUE(Contains(result.err, "tried to create a user namespace")) << result.Describe();
  EXPECT_TRUE(Contains(result.err, "--grant browser")) << result.Describe();
}

// --- Egress proxy ---------------------------------------------------------------------------

// A tiny HTTP server on the host's 127.0.0.1, on its own thread: every request gets
// "hello-from-the-host" and the connection is closed. It stands for a provider's API.
class HostHttpServer {
 public:
  HostHttpServer() {
    Result<sys::UniqueFd> listener = sys::ListenTcp({*sys::IpAddress::Parse("127.0.0.1"), 0});
    if (!listener) {
      ADD_FAILURE() << listener.error().ToString();
      return;
    }
    listener_ = std::move(*listener);
    port_ = sys::LocalAddress(listener_.get()).value().port;
    stop_ = sys::MakeEventFd().value();
    thread_ = std::thread([this] { Serve(); });
  }
  ~HostHttpServer() {
    if (!thread_.joinable()) return;
    sys::SignalEventFd(stop_.get());
    thread_.join();
  }
  std::string port() const { return std::to_string(port_); }
  int requests() const { return requests_.load(); }

 private:
  // One connection at a time: the tests make one request each.
  void Serve() {
    while (Wait(listener_.get())) {
      Result<sys::UniqueFd> client = sys::Accept(listener_.get());
      if (!client || !client->valid()) continue;
      std::string head;
      char buffer[4096];
      while (head.find("\r\n\r\n") == std::string::npos && Wait(client->get())) {
        Result<size_t> n = sys::ReadSome(client->get(), buffer, sizeof buffer);
        if (!n || *n == 0) break;
        if (*n != sys::kWouldBlock) head.append(buffer, *n);
      }
      ++requests_;
      (void)sys::WriteAllWithin(client->get(),
                                "HTTP/1.1 200 OK\r\nContent-Length: 20\r\nConnection: close\r\n\r\n"
                                "hello-from-the-host\n",
                                5000, stop_.get());
    }
  }
  // Until `fd` is readable; false once the server is stopping.
  bool Wait(int fd) {
    sys::PollEntry entries[2] = {{fd, true}, {stop_.get(), true}};
    Result<int> ready = sys::Poll(entries, -1);
    return ready && !entries[1].readable;
  }

  sys::UniqueFd listener_;
  sys::UniqueFd stop_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<int> requests_{0};
};

// `berth sandbox --grant net:...` against HostHttpServer, with a test HOME whose config maps
// allowed.test and other.test to 127.0.0.1 (the [net.hosts] table), and curl as the client.
class EgressProxyTest : public NamespacesTierTest {
 protected:
  void SetUp() override {
    NamespacesTierTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    std::optional<std::string> curl = FindInPath("curl");
    REQUIRE_FEATURE(curl.has_value(), "curl is not installed (scripts/install-deps installs it)");
    curl_ = *curl;
    ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
    ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                          "[net.hosts]\n\"allowed.test\" = \"127.0.0.1\"\n"
                          "\"other.test\" = \"127.0.0.1\"\n"));
  }

  // berth sandbox BERTH_ARGS --grant net:allowed.test:PORT -- curl -sS CURL_ARGS
  RunResult Curl(const std::vector<std::string>& curl_args,
                 const std::vector<std::string>& berth_args = {}) {
    std::vector<std::string> args = {"sandbox"};
    args.insert(args.end(), berth_args.begin(), berth_args.end());
    args.insert(args.end(), {"--grant", "net:allowed.test:" + server_.port(), "--", curl_, "-sS",
                             "--max-time", "20"});
    args.insert(args.end(), curl_args.begin(), curl_args.end());
    return Run(args);
  }
  std::string Url(const std::string& host) { return "http://" + host + ":" + server_.port() + "/"; }

  HostHttpServer server_;
  std::string curl_;
};

TEST_F(EgressProxyTest, GrantedHostIsReachedThroughTheProxy) {
  RunResult plain = Curl({Url("allowed.test")});
  EXPECT_EQ(plain.exit_code, 0) << plain.Describe();
  EXPECT_EQ(plain.out, "hello-from-the-host\n") << plain.Describe();
  // -p makes curl tunnel with CONNECT, as it does for https://.
  RunResult tunnel = Curl({"-p", Url("allowed.test")});
  EXPECT_EQ(tunnel.exit_code, 0) << tunnel.Describe();
  EXPECT_EQ(tunnel.out, "hello-from-the-host\n") << tunnel.Describe();
  EXPECT_EQ(server_.requests(), 2);
}

TEST_F(EgressProxyTest, OtherHostIsDeniedAndTheSummaryShowsIt) {
  RunResult plain = Curl({"-i", Url("other.test")}, {"-v"});
  EXPECT_EQ(plain.exit_code, 0) << plain.Describe();
  EXPECT_TRUE(StartsWith(plain.out, "HTTP/1.1 403 Forbidden")) << plain.Describe();
  const std::string reason =
      "berth: egress to other.test:" + server_.port() +
      " denied: not in this job's allowlist; grant it with net:other.test:" + server_.port();
  EXPECT_TRUE(Contains(plain.out, "X-Berth-Denied: " + reason)) << plain.Describe();
  EXPECT_TRUE(
      Contains(plain.err, "berth: egress other.test:" + server_.port() + ": allowed 0, denied 1"))
      << plain.Describe();

  RunResult tunnel = Curl({"-p", Url("other.test")});
  EXPECT_NE(tunnel.exit_code, 0) << tunnel.Describe();
  EXPECT_TRUE(Contains(tunnel.err, "403")) << tunnel.Describe();
  EXPECT_TRUE(Contains(tunnel.err, "the egress proxy denied 1 connection(s)")) << tunnel.Describe();
  EXPECT_EQ(server_.requests(), 0) << "a denied request reached the server";
}

TEST_F(EgressProxyTest, DirectConnectToTheHostServerIsRefused) {
  ASSERT_TRUE(
      Reports(ProbeOutside({"tcp-connect", "127.0.0.1", server_.port()}), "tcp-connect ok"));
  // The job's 127.0.0.1 is its own loopback, where only the proxy listens.
  EXPECT_TRUE(Reports(Probe({"tcp-connect", "127.0.0.1", server_.port()},
                            {"--grant", "net:allowed.test:" + server_.port()}),
                      "tcp-connect errno=111 ECONNREFUSED"));
  EXPECT_TRUE(ReportsOk(Probe({"tcp-connect", "127.0.0.1", "3128"},
                              {"--grant", "net:allowed.test:" + server_.port()})))
      << "the proxy's socket is missing from the job's loopback";
}

TEST_F(EgressProxyTest, DnsFailsInside) {
  RunResult result =
      Probe({"dns", "allowed.test"}, {"--grant", "net:allowed.test:" + server_.port()});
  EXPECT_TRUE(StartsWith(result.out, "dns eai=") && result.exit_code == 1) << result.Describe();
  RunResult example = Probe({"dns", "example.com"}, {"--grant", "net:example.com"});
  EXPECT_TRUE(StartsWith(example.out, "dns eai=") && example.exit_code == 1) << example.Describe();
}

TEST_F(EgressProxyTest, NameResolvingToLoopbackIsRefusedWithoutAMapping) {
  // localhost is granted by name but not mapped: the proxy resolves it to loopback and refuses.
  // --noproxy '' overrides NO_PROXY, which would otherwise keep curl on the job's own loopback.
  RunResult result = Run({"sandbox", "-v", "--grant", "net:localhost:" + server_.port(), "--",
                          curl_, "-sS", "-i", "--noproxy", "", Url("localhost")});
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_TRUE(StartsWith(result.out, "HTTP/1.1 403 Forbidden")) << result.Describe();
  EXPECT_TRUE(Contains(result.out, "localhost resolves to")) << result.Describe();
  EXPECT_TRUE(Contains(result.out, "a loopback address")) << result.Describe();
  EXPECT_EQ(server_.requests(), 0);
}

TEST_F(EgressProxyTest, ProxyVariablesPointAtTheProxy) {
  RunResult env = Probe({"env"}, {"--grant", "net:allowed.test:" + server_.port()});
  ASSERT_EQ(env.exit_code, 0) << env.Describe();
  for (const char* name :
       {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
    EXPECT_TRUE(HasLine(env, std::string(name) + "=http://127.0.0.1:3128"))
        << name << env.Describe();
  EXPECT_TRUE(HasLine(env, "NO_PROXY=localhost,127.0.0.1,::1")) << env.Describe();
  EXPECT_TRUE(HasLine(env, "no_proxy=localhost,127.0.0.1,::1")) << env.Describe();
}

TEST_F(EgressProxyTest, NetworkModesStayConsistent) {
  RunResult none = Probe({"pwd"}, {"--network", "none", "--grant", "net:allowed.test"});
  EXPECT_EQ(none.exit_code, 64) << none.Describe();
  RunResult bad = Probe({"pwd"}, {"--grant", "net:exa mple.test"});
  EXPECT_EQ(bad.exit_code, 64) << bad.Describe();
  RunResult spec = Probe({"pwd"}, {"--print-spec", "--grant", "net:*.allowed.test:8443"});
  ASSERT_EQ(spec.exit_code, 0) << spec.Describe();
  nlohmann::json json = nlohmann::json::parse(spec.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(json.is_object()) << spec.Describe();
  EXPECT_EQ(json.value("network", ""), "proxy") << spec.out;
  EXPECT_EQ(json.value("net_allow", nlohmann::json()), nlohmann::json({"*.allowed.test:8443"}))
      << spec.out;
}

TEST_F(LandlockTierTest, ProxyReachesGrantedHostsAndNothingElse) {
  std::optional<std::string> curl = FindInPath("curl");
  REQUIRE_FEATURE(curl.has_value(), "curl is not installed (scripts/install-deps installs it)");
  ASSERT_TRUE(sys::MakeDirs(home() + "/.config/berth", 0755));
  ASSERT_TRUE(WriteText(home() + "/.config/berth/config.toml",
                        "[net.hosts]\n\"allowed.test\" = \"127.0.0.1\"\n"));
  HostHttpServer server;
  std::vector<std::string> args = {"sandbox"};
  args.insert(args.end(), kLandlockTier.begin(), kLandlockTier.end());
  args.insert(args.end(), {"--grant", "net:allowed.test:" + server.port(), "--", *curl, "-sS",
                           "--max-time", "20", "http://allowed.test:" + server.port() + "/"});
  RunResult result = Run(args);
  EXPECT_EQ(result.exit_code, 0) << result.Describe();
  EXPECT_EQ(result.out, "hello-from-the-host\n") << result.Describe();

  // Landlock allows TCP connect to the proxy's port only: the host server itself is refused.
  std::vector<std::string> berth_args = kLandlockTier;
  berth_args.insert(berth_args.end(), {"--grant", "net:allowed.test:" + server.port()});
  EXPECT_TRUE(Reports(Probe({"tcp-connect", "127.0.0.1", server.port()}, berth_args),
                      "tcp-connect errno=13 EACCES"));
  EXPECT_TRUE(Reports(Probe({"udp-send", "127.0.0.1", server.port()}, berth_args),
                      "udp-send errno=1 EPERM"));
  EXPECT_EQ(server.requests(), 1);
}

// --- Landlock tier --------------------------------------------------------------------------

TEST_F(LandlockTierTest, WritesOutsideTheWorkspaceFailWithAccessDenied) {
  ASSERT_TRUE(ReportsOk(ProbeOutside({"write", root() + "/control"})));
  EXPECT_TRUE(Reports(Probe({"write", root() + "/x"}, kLandlockTier), "write errno=13 EACCES"));
  EXPECT_FALSE(PathExists(root() + "/x"));
  EXPECT_TRUE(Reports(Probe({"write", ws() + "/x"}, kLandlockTier), "write ok"));
  EXPECT_EQ(ReadText(ws() + "/x"), "probe\n");
}

// The bug: without namespaces the init did not wait to be moved into the job's cgroups, so
// the command it forked at once stayed in berth's own, under no pids limit (and as root no
// RLIMIT_NPROC binds either).
TEST_F(LandlockTierTest, PidsLimitStopsAForkBomb) {
  std::vector<std::string> args = kLandlockTier;
  args.insert(args.end(), {"--pids", "40"});
  RunResult result = Probe({"forkbomb", "200"}, args);
  ASSERT_TRUE(StartsWith(result.out, "forkbomb errno=11 EAGAIN ") && result.exit_code == 1)
      << result.Describe();
  EXPECT_LT(std::stoi(Field(result, "count")), 40) << result.Describe();
}

TEST_F(LandlockTierTest, CommandRunsInTheJobsCgroups) {
  ExpectCommandInTheJobsCgroups(*this, kLandlockTier);
}

TEST_F(LandlockTierTest, CredentialFilesAreHidden) {
  RunResult result = Probe({"read", home() + "/.ssh/id_rsa"}, kLandlockTier);
  EXPECT_TRUE(Reports(result, "read errno=13 EACCES"));
  EXPECT_FALSE(Contains(result.out + result.err, "SECRET-KEY")) << result.Describe();
}

TEST_F(LandlockTierTest, CredentialsBehindSymlinksStayHidden) {
  ASSERT_NO_FATAL_FAILURE(MoveCredentialsBehindSymlinks(root(), home(), LinkStyle::kRelative));
  ASSERT_TRUE(Reports(ProbeOutside({"read", home() + "/.aws/credentials"}), "read ok bytes=11"));

  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.aws/credentials"}, kLandlockTier)));
  EXPECT_TRUE(ReadIsHidden(Probe({"read", home() + "/.netrc"}, kLandlockTier)));
}

// Landlock can only add access: berth refuses to run rather than expose the credential.
TEST_F(LandlockTierTest, CredentialsInsideTheWorkspaceStayHidden) {
  std::vector<std::string> args = kLandlockTier;
  args.insert(args.end(), {"--workspace", home()});
  RunResult result = Probe({"read", home() + "/.ssh/id_rsa"}, args);
  EXPECT_FALSE(Contains(result.out + result.err, "SECRET-KEY")) << result.Describe();
  EXPECT_EQ(result.exit_code, 69) << result.Describe();
  EXPECT_TRUE(Contains(result.err, "cannot hide")) << result.Describe();
}

TEST_F(LandlockTierTest, TcpConnectIsDenied) {
  Result<BoundSocket> listener = ListenTcp("127.0.0.1");
  ASSERT_TRUE(listener) << listener.error().ToString();
  std::string port = std::to_string(listener->port);
  ASSERT_TRUE(Reports(ProbeOutside({"tcp-connect", "127.0.0.1", port}), "tcp-connect ok"));

  EXPECT_TRUE(Reports(Probe({"tcp-connect", "127.0.0.1", port}, kLandlockTier),
                      "tcp-connect errno=13 EACCES"));
}

TEST_F(LandlockTierTest, UdpIsDenied) {
  Result<BoundSocket> socket = BindUdp("127.0.0.1");
  ASSERT_TRUE(socket) << socket.error().ToString();
  std::string port = std::to_string(socket->port);
  EXPECT_TRUE(
      Reports(Probe({"udp-send", "127.0.0.1", port}, kLandlockTier), "udp-send errno=1 EPERM"));
  EXPECT_EQ(ReceiveDatagram(socket->fd.get(), std::chrono::milliseconds(0)), std::nullopt);
}

TEST_F(LandlockTierTest, AbstractSocketsOutsideTheSandboxAreDenied) {
  std::string name = "berth-e2e-" + std::to_string(getpid());
  Result<BoundSocket> listener = ListenAbstract(name);
  ASSERT_TRUE(listener) << listener.error().ToString();
  ASSERT_TRUE(Reports(ProbeOutside({"abstract-connect", name}), "abstract-connect ok"));

  EXPECT_TRUE(
      Reports(Probe({"abstract-connect", name}, kLandlockTier), "abstract-connect errno=1 EPERM"));
}

TEST_F(LandlockTierTest, SignalsToProcessesOutsideTheSandboxAreDenied) {
  pid_t pid = StartPausedProcess();
  ASSERT_GT(pid, 0);
  std::string target = std::to_string(pid);
  ASSERT_TRUE(Reports(ProbeOutside({"kill", target, "0"}), "kill ok"));

  EXPECT_TRUE(Reports(Probe({"kill", target, "0"}, kLandlockTier), "kill errno=1 EPERM"));
}

TEST_F(LandlockTierTest, TimeoutEndsADaemonizedProcessTree) {
  std::string token = UniqueName("daemon-token");
  std::vector<std::string> args = kLandlockTier;
  args.insert(args.end(), {"--timeout", "1s"});
  RunResult result = Probe({"daemon", token}, args);
  EXPECT_EQ(result.exit_code, 124) << result.Describe();
  EXPECT_TRUE(WaitUntilNoProcessWithArgument(token, kLeftoverWait))
      << "processes outlived berth: " << testing::PrintToString(ProcessesWithArgument(token));
  for (pid_t pid : ProcessesWithArgument(token)) kill(pid, SIGKILL);
}

TEST_F(LandlockTierTest, TimeoutEndsATreeThatIgnoresSigterm) {
  ExpectTimeoutEndsATreeIgnoringSigterm(*this, UniqueName("stubborn-token"), kLandlockTier);
}

TEST_F(LandlockTierTest, LandlockTierNeedsAllowWeaker) {
  RunResult result = Probe({"pwd"}, {"--tier", "landlock"});
  EXPECT_EQ(result.exit_code, 69) << result.Describe();
  EXPECT_TRUE(Contains(result.err, "allow-weaker")) << result.Describe();
  EXPECT_EQ(result.out, "") << result.Describe();
}

// --- Homes other than the one in HOME (issue 27) ---------------------------------------------
//
// The tests' HOME is a temporary home; the account's own home from the password database
// (/root as root, /home/berth-ci in CI's unprivileged pass), the homes of other accounts and
// /home/* must be hidden too, in both tiers, from `berth sandbox`, agents and checks.

constexpr char kMarker[] = "PASSWD-HOME-MARKER\n";  // 19 bytes
constexpr char kNpmrc[] = "//registry.npmjs.org/:_authToken=NPM-SECRET\n";

class OtherHomesTest : public SandboxTest {
 protected:
  void SetUp() override {
    SandboxTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    RunResult probe = Probe({"exit", "0"});
    REQUIRE_FEATURE(probe.exit_code != 69, "the sandbox is unavailable: " + probe.err);
  }

  // The caller's home from the password database, or "" when it is unusable for the test
  // (missing, not writable, HOME itself).
  static std::string PasswdHome() {
    struct passwd* pw = getpwuid(getuid());
    std::string home = pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
    if (home.empty() || home == "/" || access(home.c_str(), W_OK) != 0) return "";
    return sys::RealPath(home).value_or("");
  }

  // A world-readable marker file in the caller's password-database home, removed after the
  // test; "" after a loud skip when that home cannot hold one.
  std::string MarkerInPasswdHome() {
    const std::string home = PasswdHome();
    if (home.empty()) {
      LoudSkip("uid " + std::to_string(getuid()) +
               " has no writable home directory in the password database");
      return "";
    }
    const std::string marker = home + "/.berth-marker-" + UniqueName("passwd");
    RemoveAfterTest(marker);
    EXPECT_TRUE(WriteText(marker, kMarker, 0644));
    return marker;
  }

  // Another account's home with a world-readable token file: as root a fresh directory under
  // /home (removed after the test); otherwise a world-readable file already in another home.
  // "" after a loud skip when there is none.
  std::string OtherUsersReadableFile() {
    if (IsRoot()) {
      const std::string home = "/home/" + UniqueName("berth-test");
      if (!sys::MakeDirs(home, 0755)) {
        LoudSkip("cannot create " + home);
        return "";
      }
      RemoveAfterTest(home);
      chmod(home.c_str(), 0755);
      EXPECT_TRUE(WriteText(home + "/.npmrc", kNpmrc, 0644));
      return home + "/.npmrc";
    }
    const std::string own = PasswdHome();
    for (const std::string& name : sys::ListDir("/home").value_or(std::vector<std::string>{})) {
      const std::string dir = sys::RealPath("/home/" + name).value_or("");
      if (dir.empty() || dir == own || sys::IsWithin(home(), dir)) continue;
      for (const std::string& entry : sys::ListDir(dir).value_or(std::vector<std::string>{})) {
        const std::string file = dir + "/" + entry;
        if (sys::TypeOf(file) == sys::FileType::kRegular && access(file.c_str(), R_OK) == 0)
          return file;
      }
    }
    LoudSkip("no world-readable file in another user's home under /home, and uid " +
             std::to_string(getuid()) + " cannot create one");
    return "";
  }

  // A loud skip: printed, and the test ends as skipped (never a failure, even in CI: the host
  // simply has no such home).
  void LoudSkip(const std::string& why) {
    std::fprintf(stderr, "SKIPPED LOUDLY: %s\n", why.c_str());
    skip_reason_ = why;
  }
  bool Skipped() const { return !skip_reason_.empty(); }

  // The probe's read of `path` inside, in the namespaces tier (ENOENT or EACCES: gone from the
  // view) or the landlock tier (EACCES); the file's content never shows.
  AssertionResult HiddenInBothTiers(const std::string& path, const std::string& content) {
    RunResult ns = Probe({"read", path});
    if (Contains(ns.out + ns.err, content))
      return AssertionFailure() << "leaked in the namespaces tier\n" << ns.Describe();
    AssertionResult gone = ReportsOneOf(ns, {"read errno=2 ENOENT", "read errno=13 EACCES"});
    if (!gone) return gone << " (namespaces tier)";
    if (LandlockAbi() <= 0) return AssertionSuccess();
    RunResult ll = Probe({"read", path}, kLandlockTier);
    if (Contains(ll.out + ll.err, content))
      return AssertionFailure() << "leaked in the landlock tier\n" << ll.Describe();
    AssertionResult denied = Reports(ll, "read errno=13 EACCES");
    if (!denied) return denied << " (landlock tier)";
    return AssertionSuccess();
  }

  // Makes `dir` a repository whose policy lets the `implement` agent write src/** and runs
  // `checks` (TOML [[verify]] tables) after it; committed.
  void MakeRepository(const std::string& dir, const std::string& checks) {
    std::optional<std::string> git = FindInPath("git");
    REQUIRE_FEATURE(git.has_value(), "no git in /usr/local/bin, /usr/bin or /bin");
    ASSERT_TRUE(sys::MakeDirs(dir + "/.berth", 0755));
    chmod(dir.c_str(), 0755);
    ASSERT_TRUE(sys::MakeDirs(dir + "/src", 0755));
    ASSERT_TRUE(WriteText(dir + "/.berth/policy.toml",
                          "version = 1\n[agents.implement]\ncapability = \"write\"\nprovider = "
                          "\"command\"\nwritable = [\"src/**\"]\n" +
                              checks));
    ASSERT_TRUE(WriteText(dir + "/src/main.c", "int main(void) { return 0; }\n"));
    for (std::vector<std::string> args : {std::vector<std::string>{"init", "-q"},
                                          {"config", "user.name", "e2e"},
                                          {"config", "user.email", "e2e@berth.invalid"},
                                          {"config", "commit.gpgsign", "false"},
                                          {"add", "-A"},
                                          {"commit", "-q", "-m", "base"}}) {
      args.insert(args.begin(), {*git, "-C", dir});
      RunResult result = RunProgram(args, BaseEnv(), dir);
      ASSERT_EQ(result.exit_code, 0) << result.Describe();
    }
  }
  // `berth run --json implement -- ARGV` in `repo`; the job's receipt, and its stdout.
  nlohmann::json RunJob(const std::string& repo, const std::vector<std::string>& argv,
                        RunResult* run, std::string* job_stdout) {
    std::vector<std::string> args = {BERTH_BINARY, "run", "implement", "--"};
    args.insert(args.end(), argv.begin(), argv.end());
    EnvVars env = BaseEnv();
    env.push_back({"GIT_CONFIG_NOSYSTEM", "1"});
    *run = RunProgram(args, env, repo);
    nlohmann::json jobs = nlohmann::json::parse(
        RunProgram({BERTH_BINARY, "ls", "--json"}, env, repo).out, nullptr, false);
    if (!jobs.is_array() || jobs.empty() || !jobs[0].is_object()) return nlohmann::json::object();
    const std::string id = jobs[0].value("id", "");
    *job_stdout = ReadText(state() + "/jobs/" + id + "/stdout");
    return nlohmann::json::parse(ReadText(state() + "/jobs/" + id + "/receipt.json"), nullptr,
                                 false);
  }

  std::string skip_reason_;
};

#define SKIP_IF_NO_HOME(path)                         \
  do {                                                \
    if ((path).empty()) GTEST_SKIP() << skip_reason_; \
  } while (0)

TEST_F(OtherHomesTest, PasswdHomeIsHiddenWhenHomePointsElsewhere) {
  const std::string marker = MarkerInPasswdHome();
  SKIP_IF_NO_HOME(marker);
  ASSERT_NE(sys::Dirname(marker), home()) << "the tests' HOME must not be the account's";
  ASSERT_TRUE(Reports(ProbeOutside({"read", marker}), "read ok bytes=19"));
  EXPECT_TRUE(HiddenInBothTiers(marker, "PASSWD-HOME-MARKER"));
  // The whole home, not only the marker: it cannot be listed.
  RunResult listing = Probe({"ls", sys::Dirname(marker)});
  EXPECT_FALSE(Contains(listing.out, ".berth-marker-")) << listing.Describe();
}

TEST_F(OtherHomesTest, OtherUsersWorldReadableFilesAreHidden) {
  const std::string npmrc = OtherUsersReadableFile();
  SKIP_IF_NO_HOME(npmrc);
  ASSERT_TRUE(ReportsOk(ProbeOutside({"read", npmrc})));
  EXPECT_TRUE(HiddenInBothTiers(npmrc, "NPM-SECRET"));
}

TEST_F(OtherHomesTest, HostSecretFilesAreHiddenAsRoot) {
  if (!IsRoot()) GTEST_SKIP() << "SKIPPED LOUDLY: only root can read /etc/shadow at all";
  for (const char* secret : {"/etc/shadow", "/etc/gshadow"}) {
    if (!PathExists(secret)) continue;
    ASSERT_TRUE(ReportsOk(ProbeOutside({"read", secret}))) << secret;
    EXPECT_TRUE(HiddenInBothTiers(secret, "root:")) << secret;
  }
  // The rest of /etc stays readable.
  EXPECT_TRUE(ReportsOk(Probe({"read", "/etc/passwd"})));
  if (LandlockAbi() > 0) {
    EXPECT_TRUE(ReportsOk(Probe({"read", "/etc/passwd"}, kLandlockTier)));
  }
}

TEST_F(OtherHomesTest, ReadGrantUnhidesAnotherHome) {
  const std::string marker = MarkerInPasswdHome();
  SKIP_IF_NO_HOME(marker);
  // By name: the file alone, or its whole home.
  for (const std::string& grant : {"read:" + marker, "read:" + sys::Dirname(marker)}) {
    EXPECT_TRUE(Reports(Probe({"read", marker}, {"--grant", grant}), "read ok bytes=19")) << grant;
    if (LandlockAbi() > 0) {
      std::vector<std::string> args = kLandlockTier;
      args.insert(args.end(), {"--grant", grant});
      EXPECT_TRUE(Reports(Probe({"read", marker}, args), "read ok bytes=19")) << grant;
    }
  }
  if (IsRoot()) {
    const std::string npmrc = OtherUsersReadableFile();
    SKIP_IF_NO_HOME(npmrc);
    EXPECT_TRUE(ReportsOk(Probe({"read", npmrc}, {"--grant", "read:" + npmrc})));
    EXPECT_TRUE(HiddenInBothTiers(marker, "PASSWD-HOME-MARKER")) << "only the granted path";
  }
}

// The job's own paths may lie inside a hidden home: a workspace of `berth sandbox` and a
// repository whose job runs an agent and a check. They work as before; the rest of the home
// stays hidden from the agent and from the check.
TEST_F(OtherHomesTest, AWorkspaceAndAJobRepositoryInsideAHiddenHomeStillWork) {
  const std::string marker = MarkerInPasswdHome();
  SKIP_IF_NO_HOME(marker);
  const std::string tree = sys::Dirname(marker) + "/" + UniqueName("berth-homes-repo");
  RemoveAfterTest(tree);
  ASSERT_TRUE(sys::MakeDirs(tree, 0755));

  EXPECT_TRUE(Reports(Probe({"write", tree + "/made"}, {"--workspace", tree}), "write ok"));
  EXPECT_EQ(ReadText(tree + "/made"), "probe\n");
  EXPECT_TRUE(ReadIsHidden(Probe({"read", marker}, {"--workspace", tree})));
  if (LandlockAbi() > 0) {
    std::vector<std::string> args = kLandlockTier;
    args.insert(args.end(), {"--workspace", tree});
    EXPECT_TRUE(Reports(Probe({"write", tree + "/made-ll"}, args), "write ok"));
    EXPECT_TRUE(Reports(Probe({"read", marker}, args), "read errno=13 EACCES"));
  }

  const std::string repo = tree + "/repo";
  ASSERT_NO_FATAL_FAILURE(
      MakeRepository(repo, "[[verify]]\nname = \"marker\"\nexpect_exit = 1\nargv = [\"" +
                               std::string(SANDBOX_PROBE) + "\", \"read\", \"" + marker + "\"]\n"));
  RunResult run;
  std::string out;
  nlohmann::json receipt =
      RunJob(repo,
             {"sh", "-c",
              std::string(SANDBOX_PROBE) + " read " + marker +
                  "; git status --short >/dev/null && echo 'int x;' > src/x.c"},
             &run, &out);
  ASSERT_TRUE(receipt.is_object()) << run.Describe();
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  EXPECT_TRUE(Contains(out, "read errno=2 ENOENT") || Contains(out, "read errno=13 EACCES")) << out;
  EXPECT_FALSE(Contains(out, "bytes=19")) << out;
  const nlohmann::json& checks = receipt["verification"]["checks"];
  ASSERT_TRUE(checks.is_array() && !checks.empty()) << receipt.dump(2);
  const std::string tail = checks[0].is_object() && checks[0].contains("output_tail") &&
                                   checks[0]["output_tail"].is_string()
                               ? checks[0]["output_tail"].get<std::string>()
                               : "";
  EXPECT_TRUE(Contains(tail, "read errno=2 ENOENT") || Contains(tail, "read errno=13 EACCES"))
      << checks.dump(2);
}

TEST_F(OtherHomesTest, JobAgentsAndChecksDoNotSeeOtherHomes) {
  const std::string npmrc = OtherUsersReadableFile();
  SKIP_IF_NO_HOME(npmrc);
  ASSERT_NO_FATAL_FAILURE(
      MakeRepository(ws(), "[[verify]]\nname = \"npmrc\"\nexpect_exit = 1\nargv = [\"" +
                               std::string(SANDBOX_PROBE) + "\", \"read\", \"" + npmrc + "\"]\n"));
  RunResult run;
  std::string out;
  nlohmann::json receipt = RunJob(
      ws(), {"sh", "-c", std::string(SANDBOX_PROBE) + " read " + npmrc + "; echo x > src/x.c"},
      &run, &out);
  ASSERT_TRUE(receipt.is_object()) << run.Describe();
  EXPECT_EQ(run.exit_code, 0) << run.Describe() << receipt.dump(2);
  EXPECT_TRUE(Contains(out, "read errno=2 ENOENT") || Contains(out, "read errno=13 EACCES")) << out;
  const nlohmann::json& checks = receipt["verification"]["checks"];
  ASSERT_TRUE(checks.is_array() && !checks.empty()) << receipt.dump(2);
  EXPECT_TRUE(checks[0].is_object() && checks[0].contains("passed") && checks[0]["passed"] == true)
      << checks.dump(2);
}

}  // namespace
}  // namespace berth::e2e
