// berth's exit codes (PRODUCT.md §11 and docs/cli.md).
#pragma once

namespace berth::cli {

inline constexpr int kExitUsage = 64;
inline constexpr int kExitUnavailable = 69;
inline constexpr int kExitSoftware = 70;
inline constexpr int kExitOsError = 71;
inline constexpr int kExitBusy = 75;
inline constexpr int kExitUnauthenticated = 77;
inline constexpr int kExitPolicy = 78;
inline constexpr int kExitTimedOut = 124;

}  // namespace berth::cli
