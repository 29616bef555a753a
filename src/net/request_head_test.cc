#include "net/request_head.h"

#include <gtest/gtest.h>

namespace berth::net {
namespace {

RequestHead Parse(const std::string& text) {
  Result<RequestHead> head = ParseRequestHead(text);
  EXPECT_TRUE(head.has_value()) << text << ": " << head.error().ToString();
  return head ? *head : RequestHead{};
}

TEST(HeadLength, FindsTheEmptyLine) {
  EXPECT_EQ(HeadLength("GET / HTTP/1.1\r\nHost: x\r\n"), 0u);
  EXPECT_EQ(HeadLength("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody"), 27u);
  EXPECT_EQ(HeadLength("GET / HTTP/1.1\nHost: x\n\nbody"), 24u);
  EXPECT_EQ(HeadLength(""), 0u);
}

TEST(RequestHead, Connect) {
  RequestHead head =
      Parse("CONNECT API.Example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n");
  EXPECT_EQ(head.form, RequestHead::Form::kConnect);
  EXPECT_EQ(head.host, "api.example.com");
  EXPECT_EQ(head.port, 443);
  ASSERT_EQ(head.headers.size(), 1u);
  EXPECT_EQ(head.headers[0].value, "api.example.com:443");

  RequestHead v6 = Parse("CONNECT [::1]:8443 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 8443);
}

TEST(RequestHead, AbsoluteForm) {
  RequestHead head =
      Parse("GET http://Example.com:8080/a/b?c=d#frag HTTP/1.1\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(head.form, RequestHead::Form::kAbsolute);
  EXPECT_EQ(head.method, "GET");
  EXPECT_EQ(head.host, "example.com");
  EXPECT_EQ(head.port, 8080);
  EXPECT_EQ(head.path, "/a/b?c=d");

  EXPECT_EQ(Parse("GET http://example.com HTTP/1.1\r\n\r\n").path, "/");
  EXPECT_EQ(Parse("GET http://example.com HTTP/1.1\r\n\r\n").port, 80);
  EXPECT_EQ(Parse("GET HTTP://example.com?q HTTP/1.0\r\n\r\n").path, "/?q");
  EXPECT_EQ(Parse("POST http://[::1]:81/x HTTP/1.1\n\n").host, "::1");
}

TEST(RequestHead, RejectsMalformedInput) {
  for (const char* bad : {
           "",
           "\r\n\r\n",
           "GET / HTTP/1.1\r\n\r\n",                     // origin form
           "GET https://example.com/ HTTP/1.1\r\n\r\n",  // TLS is CONNECT's job
           "GET ftp://example.com/ HTTP/1.1\r\n\r\n",
           "GET * HTTP/1.1\r\n\r\n",
           "CONNECT example.com HTTP/1.1\r\n\r\n",  // no port
           "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
           "CONNECT example.com:99999 HTTP/1.1\r\n\r\n",
           "CONNECT ::1:443 HTTP/1.1\r\n\r\n",  // IPv6 without brackets
           "CONNECT :443 HTTP/1.1\r\n\r\n",
           "CONNECT 127.1:443 HTTP/1.1\r\n\r\n",
           "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
           "GET http:///x HTTP/1.1\r\n\r\n",
           "GET http://exa mple.com/ HTTP/1.1\r\n\r\n",
           "GET  http://example.com/ HTTP/1.1\r\n\r\n",  // double space
           "GET http://example.com/ HTTP/2.0\r\n\r\n",
           "GET http://example.com/ HTTP/1.1 extra\r\n\r\n",
           "G(T http://example.com/ HTTP/1.1\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nNo colon\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nBad Name: x\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nA: b\rc\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nContent-Length: x\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: "
           "chunked\r\n\r\n",
           "GET http://example.com/ HTTP/1.1\r\n\r\nextra",
           "GET http://example.com/ HTTP/1.1\r\n",
       }) {
    Result<RequestHead> head = ParseRequestHead(bad);
    EXPECT_FALSE(head.has_value()) << "accepted: " << bad;
  }
  const char with_nul[] = "GET http://a.test/ HTTP/1.1\r\nX: \0\r\n\r\n";
  EXPECT_FALSE(ParseRequestHead(std::string(with_nul, sizeof with_nul - 1)).has_value());
  std::string huge =
      "GET http://a.test/ HTTP/1.1\r\nX: " + std::string(kMaxRequestHeadBytes, 'a') + "\r\n\r\n";
  EXPECT_FALSE(ParseRequestHead(huge).has_value());
}

TEST(RequestHead, OriginFormDropsHopByHopAndProxyHeaders) {
  RequestHead head = Parse(
      "GET http://example.com:8080/x?y HTTP/1.1\r\n"
      "Host: wrong.example\r\n"
      "Proxy-Connection: keep-alive\r\n"
      "Proxy-Authorization: Basic eA==\r\n"
      "Connection: keep-alive, X-Secret\r\n"
      "Keep-Alive: 5\r\n"
      "X-Secret: 1\r\n"
      "Accept: */*\r\n"
      "Content-Length: 0\r\n\r\n");
  EXPECT_EQ(OriginRequestHead(head),
            "GET /x?y HTTP/1.1\r\n"
            "Host: example.com:8080\r\n"
            "Accept: */*\r\n"
            "Content-Length: 0\r\n"
            "Connection: close\r\n\r\n");
  EXPECT_EQ(OriginRequestHead(Parse("GET http://[::1]/ HTTP/1.0\r\n\r\n")),
            "GET / HTTP/1.0\r\nHost: [::1]\r\nConnection: close\r\n\r\n");
}

TEST(ResponseHead, RewrittenToConnectionClose) {
  Result<std::string> rewritten = RewriteResponseHead(
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\n"
      "Keep-Alive: timeout=5\r\nTransfer-Encoding: chunked\r\n\r\n");
  ASSERT_TRUE(rewritten.has_value()) << rewritten.error().ToString();
  EXPECT_EQ(*rewritten,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n");
  EXPECT_EQ(RewriteResponseHead("HTTP/1.0 204\r\n\r\n").value(),
            "HTTP/1.0 204\r\nConnection: close\r\n\r\n");
  for (const char* bad :
       {"", "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "SSH-2.0-OpenSSH\r\n\r\n",
        "HTTP/1.1 200OK\r\n\r\n", "HTTP/1.1 200 OK\r\nBad\r\n\r\n"})
    EXPECT_FALSE(RewriteResponseHead(bad).has_value()) << bad;
}

}  // namespace
}  // namespace berth::net
