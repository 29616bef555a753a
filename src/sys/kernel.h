// Async-signal-safe kernel primitives for code that runs between clone and exec.
//
// Every function here returns 0 on success or the errno of the failing call, never
// allocates, never logs and never throws, so a freshly cloned child may call them.
#pragma once

#include <linux/filter.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <initializer_list>

namespace berth::sys::kernel {

int MakeMountsPrivate();  // mount --make-rprivate /
int MountTmpfs(const char* target, const char* options, unsigned long flags);
int MountProc(const char* target);
int MountOverlay(const char* target, const char* options);
int MountDevpts(const char* target);
int BindMount(const char* source, const char* target, bool recursive);
// Applies read-only (and nosuid/nodev) to the mount at `target`, recursively if asked.
int MakeReadOnly(const char* target, bool recursive);
int PivotRoot(const char* new_root, const char* put_old);
// pivot_root(".", ".") at `new_root`, then detaches the old root stacked above it.
int EnterRoot(const char* new_root);
int MakeDir(const char* path, mode_t mode);             // EEXIST is success
int MakeEmptyFile(const char* path, mode_t mode);       // existing is success
int MakeSymlink(const char* target, const char* link);  // EEXIST is success
int ChangeDir(const char* path);
int SetHostname(const char* name);
int BringUpLoopback();
// Adds an IPv4 default route through the loopback interface: a connection to any address that
// is not the namespace's own then waits for an answer that never comes (it times out) instead
// of failing at once with ENETUNREACH; no packet can leave the namespace either way.
int AddBlackholeDefaultRoute();
// Adds a route that rejects `ipv4` (dotted quad) at once (EHOSTUNREACH): with the blackhole
// route, the name servers, so that a lookup fails as it does without network instead of
// waiting out the resolver's timeouts.
int AddRejectRoute(const char* ipv4);
int SetResourceLimit(int resource, rlim_t value);
int SetNoNewPrivs();
int SetParentDeathSignal(int signal);
int SetChildSubreaper();
// Clears every capability set, the bounding set and the ambient set, and locks securebits
// so that a later execve by uid 0 cannot regain capabilities.
int DropAllCapabilities();
int WriteUserMap(pid_t pid, const char* file, const char* content);

int LandlockCreateRuleset(uint64_t fs_access, uint64_t net_access, uint64_t scoped, int* fd);
// Adds a path-beneath rule; a missing path is skipped (returns 0) when `optional`.
int LandlockAllowPath(int ruleset_fd, const char* path, uint64_t access, bool optional);
// Adds a network port rule (Landlock ABI 4): `access` (bind/connect TCP) on `port`.
int LandlockAllowPort(int ruleset_fd, uint64_t port, uint64_t access);
int LandlockRestrictSelf(int ruleset_fd);
int InstallSeccomp(const struct sock_fprog* program);
// Installs `program` with a user-notification listener and stores the listener in `*fd`.
int InstallSeccompWithListener(const struct sock_fprog* program, int* fd);
// Sends `fd` over the Unix socket `socket` (SCM_RIGHTS).
int SendFd(int socket, int fd);
// A TCP socket listening on 127.0.0.1:`port` of the caller's network namespace, stored in
// `*fd` (close-on-exec, non-blocking).
int ListenTcpLoopback(uint16_t port, int* fd);

// Process control for the sandbox's init.
// Fills `set` with exactly `signals` (sigemptyset and sigaddset).
int MakeSignalSet(std::initializer_list<int> signals, sigset_t* set);
int BlockSignals(const sigset_t* set, sigset_t* old);
int RestoreSignals(const sigset_t* old);
int WaitSignal(const sigset_t* set, int* signo);
// fork() without libc's atfork handlers; returns the pid (0 in the child) or -errno.
pid_t ForkRaw();
// waitpid(-1); returns the pid, 0 when nothing is ready (WNOHANG), or -errno.
pid_t ReapAny(int* status, bool no_hang);
int SendSignalTo(pid_t pid, int signal);
// waitpid(pid); returns the pid, 0 when it has not ended (WNOHANG), or -errno.
pid_t ReapChild(pid_t pid, int* status, bool no_hang);
// Sleeps `millis` milliseconds (EINTR ends the sleep early).
int SleepMillis(int millis);
// 0 when the file at `path` holds `text` among its first `limit` bytes (`buffer` has room for
// them), ENOENT when it does not exist, EAGAIN when it does not hold it (yet), else the errno.
int FileHolds(const char* path, const char* text, char* buffer, size_t limit);
// Unblocks every signal and restores default dispositions (ignored ones survive execve).
int ResetSignals();
// Marks every descriptor from 3 up close-on-exec.
int CloseOnExecFrom3();
// Closes every descriptor from 3 up except `keep`.
int CloseAllFrom3Except(int keep);
// 0 when `path` exists (without following a final symlink), else the errno.
int PathExists(const char* path);
int Execute(const char* path, char* const argv[], char* const envp[]);
// SIGKILLs every child of the calling process (as listed in /proc/self/task/TID/children),
// reaping them, until none is left. Used by a subreaper to end a tree it cannot namespace.
int KillAllChildren();

// Writes all of `size` bytes, retrying short writes and EINTR.
int WriteAll(int fd, const void* data, size_t size);
// WriteAll to a pipe or socket whose reader may have exited: EPIPE instead of SIGPIPE. The
// signal is blocked in this thread for the write and, when the write raised it, taken back.
int WriteAllToPeer(int fd, const void* data, size_t size);
// Reads exactly `size` bytes; returns ENODATA on EOF before any byte.
int ReadAll(int fd, void* data, size_t size);
int CloseFd(int fd);
int DuplicateTo(int fd, int target);  // dup2 that clears close-on-exec on `target`
[[noreturn]] void ExitNow(int code);

}  // namespace berth::sys::kernel
