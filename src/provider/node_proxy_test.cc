#include "provider/node_proxy.h"

#include <gtest/gtest.h>

#include <string>

#include "sys/atomic_file.h"
#include "sys/command.h"
#include "sys/fs.h"

namespace berth::provider {
namespace {

TEST(NodeProxy, EmbedsTheModuleByteForByte) {
  Result<std::string> source = sys::ReadFile(BERTH_NODE_PROXY_MJS);
  ASSERT_TRUE(source.has_value()) << source.error().ToString();
  EXPECT_EQ(std::string(kNodeProxyModule), *source);
  EXPECT_EQ(source->find('\0'), std::string::npos) << "the module is used as a C string";
}

// What berth writes into a job must be an ES module that Node accepts.
TEST(NodeProxy, NodeAcceptsTheEmbeddedModule) {
  const std::string path_var = "/usr/local/bin:/usr/bin:/bin";
  Result<std::string> node = sys::FindExecutable("node", path_var);
  if (!node) GTEST_SKIP() << "node is not installed; cannot run node --check on the preload";
  Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-node-proxy-");
  ASSERT_TRUE(dir.has_value()) << dir.error().ToString();
  const std::string file = *dir + "/node-proxy.mjs";
  ASSERT_TRUE(sys::WriteFileAtomic(file, kNodeProxyModule, 0644).has_value());
  Result<sys::CommandResult> run =
      sys::RunCommand({*node, "--check", file}, {{"PATH", path_var}, {"HOME", *dir}}, *dir, 60000);
  IgnoreError(sys::RemoveTree(*dir), "a leftover temp dir harms no test");
  ASSERT_TRUE(run.has_value()) << run.error().ToString();
  EXPECT_FALSE(run->timed_out);
  EXPECT_EQ(run->status.ShellCode(), 0) << run->output;
}

}  // namespace
}  // namespace berth::provider
