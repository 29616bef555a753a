#include "net/host_pattern.h"

#include <gtest/gtest.h>

#include "net/host_map.h"

namespace berth::net {
namespace {

HostPattern P(const char* text) {
  Result<HostPattern> pattern = ParseHostPattern(text);
  EXPECT_TRUE(pattern.has_value()) << text << ": " << pattern.error().ToString();
  return pattern ? *pattern : HostPattern{};
}

TEST(HostPattern, ParsesEntries) {
  EXPECT_EQ(P("example.com").port, 443);
  EXPECT_EQ(P("example.com").kind, HostPattern::Kind::kName);
  EXPECT_EQ(P("Example.COM.").host, "example.com");
  EXPECT_EQ(P("example.com:8080").port, 8080);
  EXPECT_EQ(P("*.example.com").kind, HostPattern::Kind::kSubdomains);
  EXPECT_EQ(P("*.Example.com:80").host, "example.com");
  EXPECT_EQ(P("10.0.0.5").kind, HostPattern::Kind::kAddress);
  EXPECT_EQ(P("[::1]:8080").host, "::1");
  EXPECT_EQ(P("[::1]:8080").port, 8080);
  EXPECT_EQ(P("::1").port, 443);
  EXPECT_EQ(P("2001:db8::1").kind, HostPattern::Kind::kAddress);
  EXPECT_EQ(P("under_score.example").host, "under_score.example");
}

TEST(HostPattern, PrintsInGrantSyntax) {
  EXPECT_EQ(P("example.com:443").ToString(), "example.com");
  EXPECT_EQ(P("*.example.com:8080").ToString(), "*.example.com:8080");
  EXPECT_EQ(P("[::1]:8080").ToString(), "[::1]:8080");
  EXPECT_EQ(P("[::1]").ToString(), "[::1]");
  EXPECT_EQ(GrantFor("evil.test", 443), "net:evil.test");
  EXPECT_EQ(GrantFor("evil.test", 80), "net:evil.test:80");
  EXPECT_EQ(GrantFor("::1", 8080), "net:[::1]:8080");
  for (const char* text : {"example.com", "*.a.example:81", "[::1]:8080", "10.0.0.1:22"})
    EXPECT_EQ(P(P(text).ToString().c_str()), P(text)) << text;
}

// Found by grant_fuzz: at the default port an IPv6 literal printed bare, so the grant berth
// suggested for a refused [::1]:443 was "net:::1", which a policy refuses.
TEST(HostPattern, Ipv6AtTheDefaultPortPrintsAsAGrantRegression) {
  EXPECT_EQ(P("::1").ToString(), "[::1]");
  EXPECT_EQ(GrantFor("::1", 443), "net:[::1]");
  EXPECT_EQ(P(P("[2001:db8::1]").ToString().c_str()), P("2001:db8::1"));
}

TEST(HostPattern, RejectsBadInput) {
  for (const char* bad : {"",
                          ":443",
                          "example.com:",
                          "example.com:0",
                          "example.com:65536",
                          "example.com:http",
                          "exa mple.com",
                          "example..com",
                          "-a.example",
                          "a-.example",
                          "*",
                          "*.",
                          "a.*.example",
                          "*example.com",
                          "**.example.com",
                          "*.10.0.0.1",
                          "[10.0.0.1]:80",
                          "[::1",
                          "[::1]x",
                          "[::1]:",
                          "127.1",
                          "0x7f000001",
                          "1.2.3.4.5",
                          "http://example.com",
                          "example.com/x",
                          "ex@mple.com"}) {
    Result<HostPattern> pattern = ParseHostPattern(bad);
    EXPECT_FALSE(pattern.has_value()) << "'" << bad << "' parsed as " << pattern->ToString();
  }
  Result<HostPattern> grant = ParseNetGrant("net:exa mple");
  ASSERT_FALSE(grant.has_value());
  EXPECT_NE(grant.error().message().find("grant net:exa mple"), std::string::npos);
  EXPECT_FALSE(ParseNetGrant("write:/x").has_value());
}

TEST(HostPattern, MatchingTable) {
  struct Case {
    const char* pattern;
    const char* host;
    uint16_t port;
    bool matches;
  };
  const Case cases[] = {
      {"example.com", "example.com", 443, true},
      {"example.com", "example.com", 80, false},
      {"example.com", "api.example.com", 443, false},
      {"example.com", "example.com.evil", 443, false},
      {"example.com:8080", "example.com", 8080, true},
      {"*.example.com", "api.example.com", 443, true},
      {"*.example.com", "a.b.example.com", 443, true},
      {"*.example.com", "example.com", 443, false},
      {"*.example.com", "badexample.com", 443, false},
      {"*.example.com", "api.example.com", 80, false},
      {"10.0.0.5", "10.0.0.5", 443, true},
      {"10.0.0.5", "10.0.0.6", 443, false},
      {"[::1]:8080", "::1", 8080, true},
  };
  for (const Case& c : cases) {
    std::string host = NormalizeHost(c.host).value();
    EXPECT_EQ(P(c.pattern).Matches(host, c.port), c.matches)
        << c.pattern << " vs " << c.host << ":" << c.port;
  }
}

TEST(NormalizeHost, LowerCasesAndCanonicalises) {
  EXPECT_EQ(NormalizeHost("API.Example.COM.").value(), "api.example.com");
  EXPECT_EQ(NormalizeHost("[0:0::1]").value(), "::1");
  EXPECT_EQ(NormalizeHost("::FFFF:127.0.0.1").value(), "::ffff:127.0.0.1");
  EXPECT_FALSE(NormalizeHost("[127.0.0.1]").has_value());
  EXPECT_FALSE(NormalizeHost("a b").has_value());
  EXPECT_FALSE(NormalizeHost("").has_value());
  EXPECT_FALSE(NormalizeHost(".").has_value());
}

TEST(HostMap, AddsAndFinds) {
  HostMap map;
  ASSERT_TRUE(map.Add("Model.Test", "127.0.0.1"));
  ASSERT_TRUE(map.Add("v6.test", "::1"));
  ASSERT_NE(map.Find("model.test"), nullptr);
  EXPECT_EQ(map.Find("model.test")->ToString(), "127.0.0.1");
  EXPECT_EQ(map.Find("v6.test")->ToString(), "::1");
  EXPECT_EQ(map.Find("other.test"), nullptr);
  EXPECT_FALSE(map.Add("bad name", "127.0.0.1"));
  EXPECT_FALSE(map.Add("*.test", "127.0.0.1"));
  EXPECT_FALSE(map.Add("10.0.0.1", "127.0.0.1"));
  EXPECT_FALSE(map.Add("x.test", "localhost"));
  EXPECT_FALSE(map.Add("x.test", "127.0.0.1:80"));
}

}  // namespace
}  // namespace berth::net
