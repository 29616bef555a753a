// CreateWorkspace: a job's directories, its private git dir and its `[include]` files.
#include <fcntl.h>
#include <sys/stat.h>

#include <string>

#include "base/strings.h"
#include "sys/atomic_file.h"
#include "sys/dir.h"
#include "sys/fs.h"
#include "sys/overlay.h"
#include "workspace/ignore_rules.h"
#include "workspace/layer_stack.h"
#include "workspace/lfs.h"
#include "workspace/paths.h"
#include "workspace/private_git.h"
#include "workspace/secrets.h"
#include "workspace/submodules.h"
#include "workspace/workspace.h"

namespace berth::workspace {

namespace {

Status ValidateJobId(const std::string& job_id) {
  bool ok = !job_id.empty() && job_id != "." && job_id != ".." && job_id.size() <= 128 &&
            job_id.find_first_not_of(
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                "0123456789._-") == std::string::npos;
  if (!ok) return Error(Cause::kInvalidArgument, "invalid job id '" + job_id + "'");
  return {};
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Copies the user's ignored files named by `[include]` into the workspace's writable layer.
class IncludeCopier {
 public:
  IncludeCopier(git::Repository& repo, const Snapshot& snapshot, const CreateOptions& options,
                const sys::Dir& source_root, const sys::Dir& target_root, IgnoreRules& ignore,
                std::vector<SkippedInclude>& skipped)
      : repo_(repo),
        snapshot_(snapshot),
        options_(options),
        source_root_(source_root),
        target_root_(target_root),
        ignore_(ignore),
        skipped_(skipped) {}

  Status Include(const std::string& requested) {
    std::optional<std::string> path = NormalizeRelative(requested);
    if (!path) return Skip(requested, "not a path inside the repository");
    if (std::string reason = ProtectedReason(*path); !reason.empty()) return Skip(*path, reason);
    if (TRY(repo_.FindEntry(snapshot_.commit, *path)))
      return Skip(*path, "tracked by the base commit: the workspace already has it");
    // RESOLVE_BENEATH: neither ".." nor a symlink may lead out of the user's repository.
    Result<sys::UniqueFd> opened =
        sys::OpenBeneath(source_root_, *path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!opened) {
      int error = opened.error().sys_errno();
      if (error == ENOENT) return Skip(*path, "not in the working tree");
      if (error == EXDEV || error == ELOOP)
        return Skip(*path, "leads out of the repository through a symlink");
      return std::move(opened).error();
    }
    struct stat st = TRY(sys::StatFd(opened->get()));
    bool is_dir = S_ISDIR(st.st_mode);
    if (!is_dir && !S_ISREG(st.st_mode)) return Skip(*path, "not a regular file or a directory");
    bool ignored = TRY(ignore_.IsIgnored(
        *path, is_dir ? IgnoreRules::Kind::kDirectory : IgnoreRules::Kind::kFile));
    if (!ignored) return Skip(*path, "not ignored by the base's .gitignore: it would be committed");
    for (const std::string& part : Split(*path, '/')) {
      if (!options_.include_secrets && LooksLikeSecret(part))
        return Skip(*path, "looks like a secret (the policy's include.secrets is off)");
    }
    size_t slash = path->rfind('/');
    sys::Dir parent = TRY(MakeParents(slash == std::string::npos ? "" : path->substr(0, slash)));
    std::string name = BaseName(*path);
    if (is_dir) {
      sys::Dir source = TRY(sys::Dir::FromFd(std::move(*opened), source_root_.PathOf(*path)));
      sys::Dir target = TRY(parent.MakeOrOpenDir(name, st.st_mode & 07777));
      return CopyDirectory(source, target, *path + "/");
    }
    return CopyFile(opened->get(), parent, name, *path);
  }

 private:
  Status Skip(const std::string& path, const std::string& reason) {
    skipped_.push_back(SkippedInclude{path, reason});
    return {};
  }

  Result<sys::Dir> MakeParents(const std::string& dir) {
    sys::Dir current = TRY(target_root_.OpenDir("."));
    if (dir.empty()) return current;
    for (const std::string& part : Split(dir, '/'))
      current = TRY(current.MakeOrOpenDir(part, 0755));
    return current;
  }

  Status CopyFile(int source_fd, const sys::Dir& parent, const std::string& name,
                  const std::string& path) {
    if (TRY(parent.StatIfExists(name))) return Skip(path, "already in the workspace");
    return parent.CopyFromFd(source_fd, source_root_.PathOf(path), name);
  }

  // Inside an included directory: files, subdirectories and symlinks (as links), never
  // following a symlink; secrets skipped by name.
  Status CopyDirectory(const sys::Dir& from, const sys::Dir& to, const std::string& prefix) {
    for (const std::string& name : TRY(from.List())) {
      std::string path = prefix + name;
      struct stat st = TRY(from.Stat(name));
      if (!options_.include_secrets && LooksLikeSecret(name)) {
        TRY(Skip(path, "looks like a secret (the policy's include.secrets is off)"));
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        if (name == ".git") {
          TRY(Skip(path, "a .git directory"));
          continue;
        }
        sys::Dir source = TRY(from.OpenDir(name));
        sys::Dir target = TRY(to.MakeOrOpenDir(name, st.st_mode & 07777));
        TRY(CopyDirectory(source, target, path + "/"));
      } else if (S_ISREG(st.st_mode)) {
        if (TRY(to.StatIfExists(name))) {
          TRY(Skip(path, "already in the workspace"));
          continue;
        }
        TRY(to.CopyFileFrom(from, name, name));
      } else if (S_ISLNK(st.st_mode)) {
        if (TRY(to.StatIfExists(name))) {
          TRY(Skip(path, "already in the workspace"));
          continue;
        }
        TRY(to.MakeSymlink(TRY(from.ReadLink(name)), name));
      } else {
        TRY(Skip(path, "not a regular file, directory or symlink"));
      }
    }
    return {};
  }

  git::Repository& repo_;
  const Snapshot& snapshot_;
  const CreateOptions& options_;
  const sys::Dir& source_root_;
  const sys::Dir& target_root_;
  IgnoreRules& ignore_;
  std::vector<SkippedInclude>& skipped_;
};

Status CopyIncludes(git::Repository& repo, const Snapshot& snapshot, const CreateOptions& options,
                    const std::string& target, std::vector<SkippedInclude>& skipped) {
  if (options.include_paths.empty()) return {};
  IgnoreRules ignore = TRY(IgnoreRules::Open(repo, snapshot, sys::Dirname(target)));
  sys::Dir source_root = TRY(sys::Dir::Open(repo.workdir()));
  sys::Dir target_root = TRY(sys::Dir::Open(target));
  IncludeCopier copier(repo, snapshot, options, source_root, target_root, ignore, skipped);
  for (const std::string& path : options.include_paths)
    TRY_CTX(copier.Include(path), "include " + path);
  return {};
}

// `[submodule "NAME"] active = true`, so that git in the job counts the submodule as
// initialised (`git submodule status`, `foreach`, `--recurse-submodules`) as it is in the
// user's checkout. No url: the user's may hold a token, and the job has no network anyway.
Status MarkActive(const std::string& config, const std::string& name) {
  std::string quoted;
  for (char c : name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  std::string text = TRY(sys::ReadFile(config));
  return sys::WriteFileAtomic(config, text + "[submodule \"" + quoted + "\"]\n\tactive = true\n",
                              0644);
}

// Each submodule whose files the snapshot shows gets a git dir of its own at
// <git dir>/modules/<name> (its `.git` file in the snapshot names it), reading the user's
// submodule objects through alternates, with a detached HEAD at the recorded commit. The
// snapshot's git/ holds its index; the copy backend copies it like the job's own.
Status MakeModuleGitDirs(git::Repository& repo, const Snapshot& snapshot,
                         const CreateOptions& options, JobWorkspace& workspace) {
  std::string modules =
      options.modules_alternate.empty() ? repo.gitdir() + "/modules" : options.modules_alternate;
  std::vector<Submodule> all = TRY(ListSubmodules(repo, snapshot.commit));
  for (const Submodule& sub : all) {
    WorkspaceSubmodule seen{sub.path, sub.commit, "", sub.name};
    std::string index = snapshot.dir + "/git/modules/" + sub.name + "/index";
    if (!sys::Exists(index)) {
      if (OpenModule(repo, sub, &seen.missing))
        seen.missing = "initialised after berth made the snapshot of this commit";
      workspace.submodules.push_back(seen);
      continue;
    }
    std::string git_dir = workspace.git_dir + "/modules/" + sub.name;
    TRY(sys::MakeDirs(sys::Dirname(git_dir), 0755));
    TRY(MakeGitDir(git_dir, modules + "/" + sub.name + "/objects", sub.commit,
                   workspace.git_lower.empty() ? index : std::string()));
    // Its parent's config: the job's own, or the git dir of the submodule holding it.
    std::string parent_dir = workspace.git_dir, own_name = sub.name;
    for (const Submodule& parent : all) {
      if (sub.parent.empty() || parent.path != sub.parent) continue;
      parent_dir = workspace.git_dir + "/modules/" + parent.name;
      own_name = sub.name.substr(parent.name.size() + std::string("/modules/").size());
    }
    TRY(MarkActive(parent_dir + "/config", own_name));
    workspace.submodules.push_back(seen);
  }
  return {};
}

Status Populate(git::Repository& repo, const Snapshot& snapshot, const std::string& job_id,
                const CreateOptions& options, const sys::Dir& job, JobWorkspace& workspace) {
  std::string writable_layer;
  if (workspace.backend == Backend::kOverlay) {
    workspace.lower = snapshot.Layers();
    workspace.upper = workspace.job_dir + "/upper";
    workspace.work = workspace.job_dir + "/work";
    // The upper root's attributes become the merged root's: a normal directory mode.
    TRY(job.MakeDir("upper", 0755));
    TRY(job.MakeDir("work", 0700));
    writable_layer = workspace.upper;
    if (!snapshot.git_lower.empty()) {
      workspace.git_lower = snapshot.git_lower;
      workspace.git_work = workspace.job_dir + "/git-work";
      TRY(job.MakeDir("git-work", 0700));
    }
  } else {
    workspace.copy = workspace.job_dir + "/copy";
    sys::Dir tree = TRY(sys::Dir::Open(snapshot.stack.back() + "/tree"));
    struct stat st = TRY(sys::StatFd(tree.fd()));
    sys::Dir copy = TRY(job.MakeDir("copy", st.st_mode & 07777));
    LayerStack layers = TRY(LayerStack::Open(snapshot.Layers()));
    TRY_CTX(layers.CopyTo(copy), "copy the snapshot");
    writable_layer = workspace.copy;
    if (options.git_place == GitDirPlace::kInsideCopy) {
      // The snapshot's empty .git/ is a mount point; here the git dir itself takes its place.
      TRY(sys::RemoveDir(workspace.copy + "/.git"));
      workspace.git_dir = workspace.copy + "/.git";
      workspace.git_place = GitDirPlace::kInsideCopy;
    }
  }
  TRY_CTX(MakePrivateGitDir(
              workspace.git_dir,
              options.objects_alternate.empty() ? repo.objects_dir() : options.objects_alternate,
              snapshot, /*copy_index=*/workspace.git_lower.empty()),
          "create the private git dir");
  TRY_CTX(MakeModuleGitDirs(repo, snapshot, options, workspace), "create the submodules' git dirs");
  TRY(CopyIncludes(repo, snapshot, options, writable_layer, workspace.skipped_includes));
  workspace.lfs_missing = LfsMissing(snapshot);
  // Garbage collection keeps the snapshot and those below it while any user is live.
  return RegisterUser(snapshot, job_id);
}

}  // namespace

Result<JobWorkspace> CreateWorkspace(git::Repository& repo, const Snapshot& snapshot,
                                     const std::string& job_id, const std::string& job_dir,
                                     const CreateOptions& options) {
  TRY(ValidateJobId(job_id));
  if (job_dir.empty() || job_dir.front() != '/')
    return Error(Cause::kInvalidArgument, "the job directory must be absolute: " + job_dir);
  JobWorkspace workspace;
  workspace.backend = options.backend;
  if (options.git_place == GitDirPlace::kInsideCopy && workspace.backend != Backend::kCopy)
    return Error(Cause::kInvalidArgument, "a git dir inside the workspace needs the copy backend");
  std::string state_dir = sys::Dirname(sys::Dirname(snapshot.dir));
  if (workspace.backend == Backend::kAuto) {
    workspace.backend = OverlayAvailable(state_dir) ? Backend::kOverlay : Backend::kCopy;
  } else if (workspace.backend == Backend::kOverlay && !OverlayAvailable(state_dir)) {
    return Error(Cause::kUnavailable,
                 "this host cannot mount overlayfs in an unprivileged user namespace")
        .WithHint("see " + state_dir + "/overlay-probe for the reason, or use the copy backend");
  }
  workspace.job_dir = job_dir;
  workspace.git_dir = job_dir + "/git";
  workspace.target = repo.workdir();

  TRY(sys::MakeDirs(sys::Dirname(job_dir), 0700));
  sys::Dir parent = TRY(sys::Dir::Open(sys::Dirname(job_dir)));
  // The job directory may exist already (the submitter keeps the prompt and the supervisor's
  // log there), but never with a workspace in it.
  Result<sys::Dir> job = parent.MakeOrOpenDir(BaseName(job_dir), 0700);
  if (!job) return std::move(job).error();
  for (const char* part : {"upper", "work", "copy", "git", "git-work"}) {
    if (sys::Exists(job_dir + "/" + part))
      return Error(Cause::kInvalidArgument,
                   "the job directory " + job_dir + " already holds a workspace (" + part + ")");
  }
  if (Status populated = Populate(repo, snapshot, job_id, options, *job, workspace); !populated) {
    // Nothing of the job's work can be lost here: the agent has not started. The job
    // directory itself stays for the receipt.
    IgnoreError(sys::MakeOverlayWorkRemovable(job_dir + "/work"),
                "the removal below fails on what stays, and that fails only cleanup too");
    for (const char* part : {"upper", "work", "copy", "git", "git-work"})
      IgnoreError(sys::RemoveTree(job_dir + "/" + part),
                  "the population error is what the caller must see; berth gc takes leftovers");
    return std::move(populated).error().AddContext("create the workspace of job " + job_id);
  }
  return workspace;
}

}  // namespace berth::workspace
