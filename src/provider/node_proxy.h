// A preload for Node.js CLIs whose fetch ignores HTTP_PROXY and HTTPS_PROXY (Node 20's global
// fetch does): loaded with NODE_OPTIONS=--import, it sends fetch's HTTP and HTTPS requests
// through the job's proxy (absolute-form requests for http:, CONNECT tunnels for https:).
#pragma once

namespace berth::provider {

// Where berth places the preload inside a job, and the text of the ES module: node_proxy.mjs,
// embedded at build time (src/provider/CMakeLists.txt).
inline constexpr const char* kNodeProxyPath = "/run/berth/node-proxy.mjs";
extern const char kNodeProxyModule[];

}  // namespace berth::provider
