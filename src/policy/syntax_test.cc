#include "policy/syntax.h"

#include <gtest/gtest.h>

namespace berth::policy {
namespace {

TEST(GrantProblem, AcceptsEveryKind) {
  for (const char* grant : {"write:/tmp/x",
                            "write:~/work",
                            "read:~",
                            "read:/etc/hosts",
                            "socket:/run/x.sock",
                            "docker",
                            "browser",
                            "cache:npm",
                            "cache:cargo",
                            "cache:pip",
                            "cache:uv",
                            "cache:go",
                            "cache:gradle",
                            "cache:maven",
                            "cache:ccache",
                            "cache:playwright",
                            "net:example.com",
                            "net:example.com:443",
                            "net:*.example.com",
                            "net:*.example.com:8443",
                            "net:10.1.2.3",
                            "net:10.1.2.3:80",
                            "net:[::1]",
                            "net:[2001:db8::1]:443",
                            "net:localhost",
                            "net:my-host.internal"}) {
    EXPECT_EQ(GrantProblem(grant), "") << grant;
  }
}

TEST(GrantProblem, RejectsMalformedGrants) {
  struct Case {
    const char* grant;
    const char* fragment;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"", "unknown grant"},
           {"sudo", "unknown grant"},
           {"docker:x", "unknown grant"},
           {"write", "unknown grant"},
           {"write:", "needs a path"},
           {"read:relative", "must be absolute"},
           {"socket:./x.sock", "must be absolute"},
           {"write:/tmp/\nx", "control"},
           {"cache:", "unknown cache ''"},
           {"cache:apt", "unknown cache 'apt'"},
           {"cache:NPM", "unknown cache"},
           {"net:", "expected net:HOST"},
           {"net:*", "network = \"open\""},
           {"net:*:443", "network = \"open\""},
           {"net:a.*.com", "only as a leading"},
           {"net:*.1.2.3.4", "wildcard"},
           {"net:host:0", "port '0'"},
           // Looks like a host name to the policy's own check; the proxy refuses it.
           {"net:127.1", "127.1"},
           {"net:host:65536", "port"},
           {"net:host:", "port ''"},
           {"net:host:http", "port"},
           {"net:-bad.com", "not a valid host"},
           {"net:bad-.com", "not a valid host"},
           {"net:a..b", "not a valid host"},
           {"net:under_score.com", "not a valid host"},
           {"net:256.1.1.1", "not a valid host"},
           {"net:1.2.3", "not a valid host"},
           {"net:example.123", "not a valid host"},
           {"net:[zz::1]", "IPv6"},
           {"net:[::1", "IPv6"},
           {"net:[::1]x", "expected net:HOST"},
           {"net:http://example.com", "port"},
       }) {
    std::string problem = GrantProblem(c.grant);
    EXPECT_NE(problem.find(c.fragment), std::string::npos)
        << "'" << c.grant << "' -> '" << problem << "'";
  }
}

TEST(RefNameProblem, FollowsGitRules) {
  for (const char* ok : {"main", "berth/0abc", "feature/x-y_z", "v1.2", "a/b/c"}) {
    EXPECT_EQ(RefNameProblem(ok), "") << ok;
  }
  for (const char* bad : {"",   "-x",   "a b",  "a..b", "a~",     "a^",         "a:b",  "a?",
                          "a*", "a[",   "a\\b", "a/",   "a.lock", "a/b.lock/c", "a//b", "/a",
                          ".a", "a/.b", "a.",   "@",    "HEAD",   "a@{b",       "a\tb", "a\x7f"}) {
    EXPECT_NE(RefNameProblem(bad), "") << bad;
  }
}

TEST(IsEnvName, AcceptsShellNames) {
  EXPECT_TRUE(IsEnvName("PATH"));
  EXPECT_TRUE(IsEnvName("_x9"));
  EXPECT_FALSE(IsEnvName(""));
  EXPECT_FALSE(IsEnvName("9A"));
  EXPECT_FALSE(IsEnvName("A-B"));
  EXPECT_FALSE(IsEnvName("A=B"));
}

TEST(IsProfileName, LowerCaseWithDashes) {
  EXPECT_TRUE(IsProfileName("implement"));
  EXPECT_TRUE(IsProfileName("0day"));
  EXPECT_TRUE(IsProfileName("a_b-c"));
  EXPECT_FALSE(IsProfileName(""));
  EXPECT_FALSE(IsProfileName("-a"));
  EXPECT_FALSE(IsProfileName("_a"));
  EXPECT_FALSE(IsProfileName("Ab"));
  EXPECT_FALSE(IsProfileName("a.b"));
  EXPECT_TRUE(IsProfileName(std::string(64, 'a')));
  EXPECT_FALSE(IsProfileName(std::string(65, 'a')));
}

TEST(CommitTemplateProblem, PlaceholdersBracesAndLines) {
  EXPECT_EQ(CommitTemplateProblem("{subject}"), "");
  EXPECT_EQ(
      CommitTemplateProblem("{agent}: {prompt}\n\n{summary}\nJob {job} ({model}) {{literal}}"), "");
  EXPECT_NE(CommitTemplateProblem("{nope}"), "");
  EXPECT_NE(CommitTemplateProblem("{"), "");
  EXPECT_NE(CommitTemplateProblem("}"), "");
  EXPECT_NE(CommitTemplateProblem(""), "");
  EXPECT_NE(CommitTemplateProblem("   \nbody"), "");
  EXPECT_NE(CommitTemplateProblem("x\rY"), "");
  EXPECT_NE(CommitTemplateProblem("x\nBerth-Job: 2"), "");
  EXPECT_EQ(CommitTemplateProblem("x\n\tindented"), "");
  EXPECT_NE(CommitTemplateProblem(std::string(5000, 'a')), "");
}

}  // namespace
}  // namespace berth::policy
