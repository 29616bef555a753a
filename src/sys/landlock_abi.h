// The Landlock kernel ABI up to version 9 (pathname Unix socket resolution).
//
// Debian 12's linux-libc-dev (6.1) stops at ABI 2, but the running kernel may offer more;
// the ABI is stable, so berth carries its own copy of the definitions it uses.
#pragma once

#include <cstdint>

namespace berth::sys::landlock {

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};

struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct NetPortAttr {  // ABI 4
  uint64_t allowed_access;
  uint64_t port;
} __attribute__((packed));

inline constexpr uint32_t kCreateRulesetVersion = 1u << 0;
inline constexpr int kRulePathBeneath = 1;
inline constexpr int kRuleNetPort = 2;  // ABI 4

inline constexpr uint64_t kFsExecute = 1ull << 0;
inline constexpr uint64_t kFsWriteFile = 1ull << 1;
inline constexpr uint64_t kFsReadFile = 1ull << 2;
inline constexpr uint64_t kFsReadDir = 1ull << 3;
inline constexpr uint64_t kFsRemoveDir = 1ull << 4;
inline constexpr uint64_t kFsRemoveFile = 1ull << 5;
inline constexpr uint64_t kFsMakeChar = 1ull << 6;
inline constexpr uint64_t kFsMakeDir = 1ull << 7;
inline constexpr uint64_t kFsMakeReg = 1ull << 8;
inline constexpr uint64_t kFsMakeSock = 1ull << 9;
inline constexpr uint64_t kFsMakeFifo = 1ull << 10;
inline constexpr uint64_t kFsMakeBlock = 1ull << 11;
inline constexpr uint64_t kFsMakeSym = 1ull << 12;
inline constexpr uint64_t kFsRefer = 1ull << 13;     // ABI 2
inline constexpr uint64_t kFsTruncate = 1ull << 14;  // ABI 3
inline constexpr uint64_t kFsIoctlDev = 1ull << 15;  // ABI 5
// connect(2) and sendmsg(2) to a pathname Unix socket made outside the Landlock domain.
inline constexpr uint64_t kFsResolveUnix = 1ull << 16;  // ABI 9

inline constexpr uint64_t kNetBindTcp = 1ull << 0;     // ABI 4
inline constexpr uint64_t kNetConnectTcp = 1ull << 1;  // ABI 4

inline constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0;  // ABI 6
inline constexpr uint64_t kScopeSignal = 1ull << 1;              // ABI 6

// Rights that apply to files (not only directories).
inline constexpr uint64_t kFileAccess =
    kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev | kFsResolveUnix;

}  // namespace berth::sys::landlock
