// overlayfs inside an unprivileged user namespace: the mount options, the namespace entry a
// child needs before mounting, and a probe that proves the whole path works on this host.
//
// Requirements: user namespaces, overlayfs mountable in one (FS_USERNS_MOUNT, Linux 5.11),
// the `userxattr` option (5.11; overlay keeps its metadata in user.overlay.* xattrs, so the
// upper filesystem must support user xattrs) and unprivileged whiteouts (5.8).
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/dir.h"
#include "sys/host.h"

namespace berth::sys {

// "lowerdir=L1:L2...,upperdir=U,workdir=W,userxattr" (`lower` top first). Fails when a path
// holds a character the option syntax reserves (',', ':', '\\' or a newline).
Result<std::string> OverlayOptions(const std::vector<std::string>& lower, const std::string& upper,
                                   const std::string& work);

// uid_map/gid_map lines mapping the caller's ids to themselves, formatted before a fork so
// that the child need not allocate.
struct SelfIdMaps {
  std::string uid_map;
  std::string gid_map;
};
SelfIdMaps SelfIdMapsForCaller();

// Mounts an overlay on a fresh `scratch_dir/overlay-probe-*` directory in a short-lived child,
// creates a file and removes a lower one through it, and checks that the upper directory got
// a file and a whiteout. `scratch_dir` must be on the filesystem that will hold upper dirs.
Capability ProbeOverlay(const std::string& scratch_dir);

// overlayfs leaves `work/work` with mode 000, and entries in it: a `volatile` mount its
// `incompat/volatile/` directory, also mode 000. Opens every directory below `work` to its
// owner (never following a symlink), so that a plain recursive removal succeeds. A missing
// directory is fine.
Status MakeOverlayWorkRemovable(const std::string& work);

// How overlayfs marks entries of an upper directory (Documentation/filesystems/overlayfs.rst).
// With `userxattr` its xattrs are user.overlay.*; trusted.overlay.* (privileged mounts) is
// checked too.
// A whiteout: a 0/0 character device hiding the lower entry of the same name.
bool IsWhiteout(const struct stat& st);
// Creates the whiteout `name` in the upper directory `upper`, so that a lower entry of that
// name is absent from the overlay (unprivileged since Linux 5.8).
Status MakeWhiteout(const Dir& upper, std::string_view name);
// An opaque directory ("y"): the lower directory of the same name is hidden entirely.
Result<bool> IsOpaqueDir(const Dir& dir);
// Marks `dir` opaque for a `userxattr` mount (user.overlay.opaque="y"), as overlayfs itself
// marks a directory that replaced a lower one; the owner may set it without privilege.
Status MakeOpaque(const Dir& dir);
// A directory renamed with redirect_dir, or a metadata-only copy-up (metacopy): layouts the
// userxattr mount option rules out; a reader that met one could not trust what it sees.
Result<bool> HasRedirect(const Dir& dir);
Result<bool> IsMetacopy(const Dir& parent, std::string_view name);

namespace kernel {

// Async-signal-safe (see sys/kernel.h): unshare(CLONE_NEWUSER | CLONE_NEWNS), deny setgroups,
// write the maps for the calling process, and make every mount private. Returns 0 or errno.
int EnterUserAndMountNamespace(const SelfIdMaps& maps);
// (The mount itself is kernel::MountOverlay in sys/kernel.h.)

}  // namespace kernel
}  // namespace berth::sys
