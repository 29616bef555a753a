#include "sys/overlay.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/fs.h"
#include "sys/kernel.h"
#include "sys/process.h"
#include "sys/retry.h"

namespace berth::sys {

namespace kernel {

namespace {

int WriteSelfFile(const char* path, const char* content) {
  int fd = RetryEintr([&] { return ::open(path, O_WRONLY | O_CLOEXEC); });
  if (fd < 0) return errno;
  int error = WriteAll(fd, content, std::strlen(content));
  ::close(fd);
  return error;
}

}  // namespace

int EnterUserAndMountNamespace(const SelfIdMaps& maps) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
  // An unprivileged process may map only its own ids, and its gid only after giving up
  // setgroups (Linux 3.19).
  if (int error = WriteSelfFile("/proc/self/setgroups", "deny"); error != 0) return error;
  if (int error = WriteSelfFile("/proc/self/uid_map", maps.uid_map.c_str()); error != 0)
    return error;
  if (int error = WriteSelfFile("/proc/self/gid_map", maps.gid_map.c_str()); error != 0)
    return error;
  return MakeMountsPrivate();
}

}  // namespace kernel

Result<std::string> OverlayOptions(const std::vector<std::string>& lower, const std::string& upper,
                                   const std::string& work) {
  std::vector<const std::string*> paths = {&upper, &work};
  std::string lowers;
  for (const std::string& layer : lower) {
    paths.push_back(&layer);
    lowers += (lowers.empty() ? "" : ":") + layer;
  }
  if (lower.empty()) return Error(Cause::kInvalidArgument, "an overlay needs a lower layer");
  for (const std::string* path : paths) {
    if (path->find_first_of(",:\\\n") != std::string::npos)
      return Error(Cause::kInvalidArgument, "overlayfs cannot use the path " + *path +
                                                " (it holds ',', ':', '\\' or a newline)");
  }
  return "lowerdir=" + lowers + ",upperdir=" + upper + ",workdir=" + work + ",userxattr";
}

SelfIdMaps SelfIdMapsForCaller() {
  std::string uid = std::to_string(::geteuid());
  std::string gid = std::to_string(::getegid());
  return SelfIdMaps{uid + " " + uid + " 1\n", gid + " " + gid + " 1\n"};
}

namespace {

// What the probe child reports on its pipe when a step fails.
struct ProbeReport {
  int step;
  int error;
};

const char* ProbeStepName(int step) {
  switch (step) {
    case 1:
      return "enter a user and mount namespace";
    case 2:
      return "mount overlayfs (userxattr)";
    case 3:
      return "create a file through the overlay";
    case 4:
      return "remove a lower file through the overlay (whiteout)";
  }
  return "unknown step";
}

struct ProbePaths {
  std::string merged;
  std::string options;
  std::string created;  // merged/created
  std::string removed;  // merged/lower-file
};

[[noreturn]] void RunProbeChild(const ProbePaths& paths, const SelfIdMaps& maps, int report_fd) {
  auto fail = [&](int step, int error) {
    ProbeReport report{step, error};
    // After fork: nothing is left to tell if the report pipe fails; the parent sees the exit.
    (void)kernel::WriteAll(report_fd, &report, sizeof report);
    kernel::ExitNow(1);
  };
  if (int error = kernel::EnterUserAndMountNamespace(maps); error != 0) fail(1, error);
  if (int error = kernel::MountOverlay(paths.merged.c_str(), paths.options.c_str()); error != 0)
    fail(2, error);
  if (int error = kernel::MakeEmptyFile(paths.created.c_str(), 0600); error != 0) fail(3, error);
  if (::unlink(paths.removed.c_str()) != 0) fail(4, errno);
  kernel::ExitNow(0);
}

Capability RunProbe(const std::string& dir) {
  for (const char* name : {"lower", "upper", "work", "merged"}) {
    if (Status made = MakeDirs(dir + "/" + name, 0700); !made)
      return Capability{false, made.error().ToString()};
  }
  if (int error = kernel::MakeEmptyFile((dir + "/lower/lower-file").c_str(), 0600); error != 0)
    return Capability{false, "create the probe's lower file: " + std::string(strerror(error))};
  Result<std::string> options = OverlayOptions({dir + "/lower"}, dir + "/upper", dir + "/work");
  if (!options) return Capability{false, options.error().ToString()};
  ProbePaths paths{dir + "/merged", *options, dir + "/merged/created", dir + "/merged/lower-file"};
  SelfIdMaps maps = SelfIdMapsForCaller();
  Result<Pipe> pipe = MakePipe();
  if (!pipe) return Capability{false, pipe.error().ToString()};
  Result<Cloned> child = Clone(0);
  if (!child) return Capability{false, child.error().ToString()};
  if (child->pid == 0) RunProbeChild(paths, maps, pipe->write.get());
  pipe->write.Reset();
  Result<ExitStatus> status = Reap(child->pid);
  ProbeReport report{0, 0};
  if (kernel::ReadAll(pipe->read.get(), &report, sizeof report) == 0)
    return Capability{false,
                      std::string(ProbeStepName(report.step)) + ": " + std::strerror(report.error)};
  if (!status) return Capability{false, status.error().ToString()};
  if (status->ShellCode() != 0)
    return Capability{false,
                      "the probe process ended with status " + std::to_string(status->ShellCode())};
  struct stat st;
  if (::lstat((dir + "/upper/lower-file").c_str(), &st) != 0 || !S_ISCHR(st.st_mode) ||
      st.st_rdev != makedev(0, 0))
    return Capability{false, "overlayfs did not leave a 0/0 whiteout in the upper directory"};
  if (TypeOf(dir + "/upper/created") != FileType::kRegular)
    return Capability{false, "overlayfs did not put a new file in the upper directory"};
  return Capability{true, ""};
}

}  // namespace

Capability ProbeOverlay(const std::string& scratch_dir) {
  Result<std::string> dir = MakeTempDir(scratch_dir, "overlay-probe-");
  if (!dir) return Capability{false, dir.error().ToString()};
  Capability result = RunProbe(*dir);
  IgnoreError(MakeOverlayWorkRemovable(*dir + "/work"), "RemoveTree below reports nothing either");
  IgnoreError(RemoveTree(*dir), "a leftover probe directory only costs space; the answer stands");
  return result;
}

bool IsWhiteout(const struct stat& st) {
  return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0);
}

Status MakeWhiteout(const Dir& upper, std::string_view name) {
  std::string n(name);
  if (::mknodat(upper.fd(), n.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0)
    return Error::FromErrno("create the whiteout " + upper.path() + "/" + n, errno);
  return {};
}

namespace {

constexpr const char* kPrefixes[] = {"user.overlay.", "trusted.overlay."};

}  // namespace

Result<bool> IsOpaqueDir(const Dir& dir) {
  for (const char* prefix : kPrefixes) {
    std::optional<std::string> value = TRY(dir.GetXattr((std::string(prefix) + "opaque").c_str()));
    if (value && *value == "y") return true;
  }
  return false;
}

Status MakeOpaque(const Dir& dir) { return dir.SetXattr("user.overlay.opaque", "y"); }

Result<bool> HasRedirect(const Dir& dir) {
  for (const char* prefix : kPrefixes) {
    if (TRY(dir.GetXattr((std::string(prefix) + "redirect").c_str()))) return true;
  }
  return false;
}

Result<bool> IsMetacopy(const Dir& parent, std::string_view name) {
  for (const char* prefix : kPrefixes) {
    if (TRY(parent.GetXattrOf(name, (std::string(prefix) + "metacopy").c_str()))) return true;
  }
  return false;
}

namespace {

Status OpenToOwner(const std::string& dir, int depth) {
  if (::chmod(dir.c_str(), 0700) != 0) return Error::FromErrno("chmod " + dir, errno);
  if (depth == 0) return {};  // overlayfs nests two levels (incompat/volatile)
  for (const std::string& name : TRY(ListDir(dir))) {
    std::string path = dir + "/" + name;
    if (TypeOf(path) == FileType::kDirectory) TRY(OpenToOwner(path, depth - 1));
  }
  return {};
}

}  // namespace

Status MakeOverlayWorkRemovable(const std::string& work) {
  std::string inner = work + "/work";
  if (TypeOf(inner) != FileType::kDirectory) return {};
  return OpenToOwner(inner, 3);
}

}  // namespace berth::sys
