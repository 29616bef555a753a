// Syntactic checks shared by the policy parser: grants, git ref names, variable and agent
// names. Each returns "" when the text is acceptable, otherwise a sentence saying why not.
//
// Grants are re-validated here on purpose instead of asking the sandbox library: policy sits
// below sandbox in the dependency graph. The grant kinds mirror confine/grant.cc.
#pragma once

#include <string>
#include <string_view>

namespace berth::policy {

// write:PATH, read:PATH, socket:PATH (PATH absolute or ~/...), docker, browser, cache:NAME,
// net:HOST[:PORT], net:*.DOMAIN[:PORT].
std::string GrantProblem(std::string_view grant);
bool IsKnownCacheName(std::string_view name);
// A name usable as a git branch (git check-ref-format rules, for refs/heads/NAME).
std::string RefNameProblem(std::string_view name);
// [A-Za-z_][A-Za-z0-9_]*
bool IsEnvName(std::string_view name);
// [a-z0-9][a-z0-9_-]*, at most 64 characters: agent and provider names.
bool IsProfileName(std::string_view name);

// The placeholders of [commit] message, each written {NAME}; "{{" and "}}" are literal braces.
inline constexpr std::string_view kCommitPlaceholders[] = {"subject", "summary", "prompt", "job",
                                                           "id",      "agent",   "model"};
// A [commit] message template: at most 4 KiB, a non-empty first line, no control characters
// but newline and tab, only known placeholders, no Berth-Job: line (berth adds it).
std::string CommitTemplateProblem(std::string_view text);

}  // namespace berth::policy
