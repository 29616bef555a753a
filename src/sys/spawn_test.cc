#include "sys/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "sys/fs.h"
#include "sys/process.h"
#include "sys/terminate.h"

namespace berth::sys {
namespace {

std::string ReadAllOf(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

// Whether `pid` exists and is not a zombie, without reaping it.
bool Running(pid_t pid, uint64_t start_time) { return ProcessAlive(pid, start_time); }

TEST(Spawn, RunsWithExactlyTheGivenEnvironmentDirectoryAndDescriptors) {
  Result<Pipe> out = MakePipe();
  ASSERT_TRUE(out.has_value());
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "echo \"$X $(pwd)\"; echo err >&2; read line; echo \"[$line]\""};
  options.env = {"X=value"};
  options.cwd = "/usr";
  options.stdio[0] = kDevNull;
  options.stdio[1] = out->write.get();
  options.stdio[2] = out->write.get();
  Result<Process> process = Spawn(options);
  ASSERT_TRUE(process.has_value()) << process.error().ToString();
  out->write.Reset();
  EXPECT_GT(process->start_time(), 0u);
  EXPECT_EQ(ReadAllOf(out->read.get()), "value /usr\nerr\n[]\n");
  Result<ExitStatus> status = process->Wait();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->ShellCode(), 0);
  EXPECT_FALSE(process->valid());
}

TEST(Spawn, AFailedChdirIsTheCallersErrorNotAnExitCodeRegression) {
  SpawnOptions options;
  options.argv = {"/bin/true"};
  options.cwd = "/nonexistent-berth-dir";
  Result<Process> process = Spawn(options);
  ASSERT_FALSE(process.has_value());
  EXPECT_EQ(process.error().sys_errno(), ENOENT);
  EXPECT_NE(process.error().message().find("/bin/true"), std::string::npos);
}

TEST(Spawn, AMissingProgramIsNotFound) {
  SpawnOptions options;
  options.argv = {"/nonexistent-berth-program"};
  Result<Process> process = Spawn(options);
  ASSERT_FALSE(process.has_value());
  EXPECT_EQ(process.error().cause(), Cause::kNotFound);
}

TEST(Spawn, NeedsAnAbsoluteProgram) {
  SpawnOptions options;
  options.argv = {"true"};
  EXPECT_FALSE(Spawn(options).has_value());
}

TEST(Spawn, TheChildDoesNotInheritBlockedSignals) {
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &set, &old), 0);
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  Result<Process> process = Spawn(options);
  ASSERT_EQ(::pthread_sigmask(SIG_SETMASK, &old, nullptr), 0);
  ASSERT_TRUE(process.has_value());
  ASSERT_TRUE(process->Signal(SIGTERM).has_value());
  Result<ExitStatus> status = process->Wait();
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(status->signaled);
  EXPECT_EQ(status->signal, SIGTERM);
}

TEST(Spawn, NewSessionLeadsItsOwnSessionAndGroup) {
  Result<Pipe> out = MakePipe();
  ASSERT_TRUE(out.has_value());
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "exec cat /proc/self/stat"};
  options.inherit_env = true;
  options.stdio[1] = out->write.get();
  options.group = ProcessGroup::kNewSession;
  Result<Process> process = Spawn(options);
  ASSERT_TRUE(process.has_value()) << process.error().ToString();
  out->write.Reset();
  std::string stat = ReadAllOf(out->read.get());
  const std::string pid = std::to_string(process->pid());
  EXPECT_TRUE(process->Wait().has_value());
  // "PID (COMM) STATE PPID PGRP SESSION ...": the exec'd cat is the spawned process itself.
  size_t close = stat.rfind(')');
  ASSERT_NE(close, std::string::npos) << stat;
  std::vector<std::string> fields;
  size_t at = close + 2;
  while (at < stat.size() && fields.size() < 4) {
    size_t space = stat.find(' ', at);
    fields.push_back(stat.substr(at, space - at));
    at = space == std::string::npos ? stat.size() : space + 1;
  }
  ASSERT_EQ(fields.size(), 4u) << stat;
  EXPECT_EQ(fields[2], pid) << stat;  // process group
  EXPECT_EQ(fields[3], pid) << stat;  // session
}

TEST(Process, DestructorKillsAndReapsAChildStillRunning) {
  pid_t pid = -1;
  uint64_t start = 0;
  {
    SpawnOptions options;
    options.argv = {"/bin/sleep", "30"};
    Result<Process> process = Spawn(options);
    ASSERT_TRUE(process.has_value());
    pid = process->pid();
    start = process->start_time();
    EXPECT_TRUE(Running(pid, start));
  }
  // Reaped too: the pid is no longer our child (no zombie left behind).
  EXPECT_FALSE(Running(pid, start));
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(Process, ReleaseLeavesTheChildRunning) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  Result<Process> process = Spawn(options);
  ASSERT_TRUE(process.has_value());
  const uint64_t start = process->start_time();
  pid_t pid = -1;
  {
    Process moved = std::move(*process);
    pid = moved.Release();
  }
  EXPECT_TRUE(Running(pid, start));
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

TEST(Process, TryWaitSeesARunningThenAnEndedChild) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  Result<Process> process = Spawn(options);
  ASSERT_TRUE(process.has_value());
  Result<std::optional<ExitStatus>> running = process->TryWait();
  ASSERT_TRUE(running.has_value());
  EXPECT_FALSE(running->has_value());
  ASSERT_TRUE(process->Signal(SIGKILL).has_value());
  // The pidfd turns readable once the child has ended: no sleep needed.
  ASSERT_EQ(PollReadable({process->pidfd()}, 10000).value_or(-1), 0);
  Result<std::optional<ExitStatus>> ended = process->TryWait();
  ASSERT_TRUE(ended.has_value());
  ASSERT_TRUE(ended->has_value());
  EXPECT_EQ((*ended)->signal, SIGKILL);
}

TEST(SignalProcess, APidWhoseStartTimeDoesNotMatchIsNeverSignalledRegression) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  Result<Process> process = Spawn(options);
  ASSERT_TRUE(process.has_value());
  const uint64_t start = process->start_time();
  ASSERT_GT(start, 0u);
  // The record names this pid but another start time: the pid was reused.
  Result<bool> sent = SignalProcess(process->pid(), start + 1, SIGTERM);
  ASSERT_TRUE(sent.has_value()) << sent.error().ToString();
  EXPECT_FALSE(*sent);
  Result<Termination> ended = TerminateProcess(process->pid(), start + 1, 100);
  ASSERT_TRUE(ended.has_value());
  EXPECT_EQ(*ended, Termination::kNotRunning);
  EXPECT_TRUE(Running(process->pid(), start));
  // With the right start time it is signalled.
  sent = SignalProcess(process->pid(), start, SIGTERM);
  ASSERT_TRUE(sent.has_value());
  EXPECT_TRUE(*sent);
  Result<ExitStatus> status = process->Wait();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->signal, SIGTERM);
}

TEST(SignalProcess, NoSuchProcess) {
  Result<bool> sent = SignalProcess(0, 1, SIGTERM);
  ASSERT_TRUE(sent.has_value());
  EXPECT_FALSE(*sent);
}

}  // namespace
}  // namespace berth::sys
