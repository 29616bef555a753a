// toml++ as berth uses it (policy and user config): header-only, without exceptions (parse errors
// come back as values), and with the library's internal precondition checks disabled.
//
// Why the checks are off: toml++ 3.3.0 (Debian 12) asserts a precondition in parse_key() that
// its table-header parser breaks on malformed input such as "[[[1]]]" or "[\x02]"
// (marzer/tomlplusplus#301, found here by policy_fuzz). The code after the check already turns
// that case into a parse error, but the check itself aborts debug builds, and with NDEBUG it
// becomes __builtin_assume under clang, which makes the fallback undefined behaviour. The policy
// file is untrusted input, so neither may happen.
//
// Every translation unit in one binary that includes toml++ must use the same settings (its
// functions are inline), so every one includes toml++ through this header.
#pragma once

#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/impl/preprocessor.h>

#undef TOML_ASSERT
#define TOML_ASSERT(expr) static_cast<void>(0)
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_cast<void>(0)

#include <toml++/toml.h>
