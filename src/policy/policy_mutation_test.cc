// Robustness of the parser in the plain unit tier (g++ builds have no libFuzzer): mutated
// policies must come back as a Policy or an Error, never a crash. policy_fuzz.cc goes further
// under clang.
#include <gtest/gtest.h>

#include <cstdint>

#include "policy/policy.h"
#include "policy/starter.h"

namespace berth::policy {
namespace {

constexpr const char* kExample = R"(version = 1
[defaults]
max_concurrent_jobs = 4
deadline = "45m"
output_limit = "8MiB"
[agents.implement]
capability = "write"
provider = "command"
argv = ["./scripts/agent.sh"]
writable = ["src/**", "tests/**", "!src/generated/**"]
grants = ["cache:npm"]
[agents.explore]
capability = "read"
provider = "command"
[[verify]]
name = "unit"
argv = ["make", "test"]
required = true
timeout = "10m"
)";

// SplitMix64: deterministic on every platform, unlike std distributions.
class Prng {
 public:
  explicit Prng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }

 private:
  uint64_t state_;
};

std::string Mutate(const std::string& seed, Prng& prng) {
  static const char* kTokens[] = {"[",          "]",          "[[",    "]]", "\"",
                                  "'",          "=",          "\n",    "{",  "}",
                                  ",",          "**",         "!",     "..", "\\",
                                  "\\u0000",    "#",          "1e999", "-",  "9223372036854775808",
                                  "[agents.x]", "[[verify]]", "{id}"};
  std::string text = seed;
  int edits = 1 + static_cast<int>(prng.Below(4));
  for (int i = 0; i < edits; ++i) {
    size_t at = prng.Below(text.size() + 1);
    switch (prng.Below(5)) {
      case 0:  // flip a bit
        if (at < text.size()) text[at] = static_cast<char>(text[at] ^ (1 << prng.Below(8)));
        break;
      case 1:  // truncate
        text.resize(at);
        break;
      case 2:  // delete a span
        text.erase(at, prng.Below(16));
        break;
      case 3:  // insert a token
        text.insert(at, kTokens[prng.Below(sizeof kTokens / sizeof kTokens[0])]);
        break;
      case 4:  // duplicate a span
        text.insert(at, text.substr(prng.Below(text.size() + 1), prng.Below(40)));
        break;
    }
  }
  return text;
}

TEST(PolicyMutation, NeverCrashes) {
  RepoFacts facts;
  facts.build_systems = {"cmake", "npm"};
  facts.source_globs = {"src/**"};
  facts.test_globs = {"tests/**"};
  facts.make_has_test_target = true;
  std::vector<std::string> seeds = {kExample, StarterPolicy(facts)};
  Prng prng(20240601);
  int parsed = 0;
  int rejected = 0;
  for (int i = 0; i < 240; ++i) {
    std::string text = Mutate(seeds[i % seeds.size()], prng);
    Result<Policy> policy = ParsePolicy(text, "mutant.toml");
    if (policy) {
      ++parsed;
      EXPECT_FALSE(ExplainPolicy(*policy).empty());
      // Whatever parsed must still honour the invariants the parser promises.
      for (const auto& [name, agent] : policy->agents) {
        if (agent.capability != Capability::kWrite) continue;
        EXPECT_FALSE(agent.writable.Matches(".git/config")) << text;
        EXPECT_FALSE(agent.writable.Matches(".berth/policy.toml")) << text;
      }
    } else {
      ++rejected;
      EXPECT_FALSE(policy.error().message().empty());
      EXPECT_EQ(policy.error().message().rfind("mutant.toml:", 0), 0u) << policy.error().message();
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(parsed + rejected, 200);
}

TEST(PolicyMutation, EveryTruncationOfTheExample) {
  std::string text = kExample;
  for (size_t n = 0; n <= text.size(); ++n) {
    Result<Policy> policy = ParsePolicy(text.substr(0, n), "t.toml");
    if (!policy) {
      EXPECT_FALSE(policy.error().message().empty());
    }
  }
}

}  // namespace
}  // namespace berth::policy
