// A tiny HTTP server on a Unix stream socket, on its own thread, that the sandbox should (or,
// once granted, may) reach: the lived-in home's own socket, and a Docker-like daemon socket.
// Every request is answered "200 OK" with the server's body followed by the request line, and
// the connection is closed. It counts the connections it accepted, so a test can tell that a
// refused connect never reached it.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace berth::e2e {

class UnixHttpServer {
 public:
  // Listens at `path` (which must not exist) and serves until destroyed.
  static Result<std::unique_ptr<UnixHttpServer>> Start(const std::string& path, std::string body);
  UnixHttpServer(const UnixHttpServer&) = delete;
  UnixHttpServer& operator=(const UnixHttpServer&) = delete;
  // Stops the thread and removes the socket file.
  ~UnixHttpServer();

  const std::string& path() const { return path_; }
  int connections() const { return connections_.load(); }

 private:
  UnixHttpServer(std::string path, std::string body)
      : path_(std::move(path)), body_(std::move(body)) {}
  void Serve();
  void Answer(int fd);

  std::string path_;
  std::string body_;
  sys::UniqueFd listener_;
  sys::UniqueFd stop_;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

}  // namespace berth::e2e
