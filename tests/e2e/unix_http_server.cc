#include "tests/e2e/unix_http_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "sys/retry.h"
#include "tests/e2e/e2e_util.h"

namespace berth::e2e {

namespace {

// How long one client may take to send its request head; a client that only connects (the
// probe's unix-connect) is answered once it closes or this passes.
constexpr int kRequestWaitMs = 2000;
constexpr size_t kMaxRequestBytes = 8192;

}  // namespace

Result<std::unique_ptr<UnixHttpServer>> UnixHttpServer::Start(const std::string& path,
                                                              std::string body) {
  std::unique_ptr<UnixHttpServer> server(new UnixHttpServer(path, std::move(body)));
  BoundSocket bound = TRY(ListenUnix(path));
  server->listener_ = std::move(bound.fd);
  server->stop_ = sys::UniqueFd(eventfd(0, EFD_CLOEXEC));
  if (!server->stop_.valid()) return Error::FromErrno("eventfd", errno);
  server->thread_ = std::thread([s = server.get()] { s->Serve(); });
  return server;
}

UnixHttpServer::~UnixHttpServer() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(stop_.get(), &one, sizeof(one));
    thread_.join();
  }
  unlink(path_.c_str());
}

void UnixHttpServer::Serve() {
  for (;;) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (sys::RetryEintr([&] { return poll(fds, 2, -1); }) < 0) return;
    if (fds[1].revents != 0) return;
    sys::UniqueFd client(accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) continue;
    connections_.fetch_add(1);
    Answer(client.get());
  }
}

void UnixHttpServer::Answer(int fd) {
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    pollfd pfd = {fd, POLLIN, 0};
    if (sys::RetryEintr([&] { return poll(&pfd, 1, kRequestWaitMs); }) <= 0) break;
    ssize_t n = sys::RetryEintr([&] { return read(fd, buf, sizeof(buf)); });
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  const std::string line = request.substr(0, request.find("\r\n"));
  const std::string content = body_ + " " + line + "\n";
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                               std::to_string(content.size()) + "\r\nConnection: close\r\n\r\n" +
                               content;
  // MSG_NOSIGNAL: a client that already left must not kill the test with SIGPIPE.
  (void)send(fd, response.data(), response.size(), MSG_NOSIGNAL);
}

}  // namespace berth::e2e
