// The user namespace sysctls as doctor reads them, each case fed through a /proc tree of the
// test's own (Inputs::proc_root): what is blocked, for whom, and the exact fix.
#include "doctor/userns_check.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "sys/atomic_file.h"
#include "sys/fs.h"

namespace berth::doctor {
namespace {

class UsernsCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::string> dir = sys::MakeTempDir("/tmp", "berth-userns-test-");
    ASSERT_TRUE(dir) << dir.error().ToString();
    root_ = *dir;
    in_.proc_root = root_;
    in_.identity.uid = 1000;
  }
  void TearDown() override { (void)sys::RemoveTree(root_); }

  // Writes `value` (with the kernel's newline) to ROOT/RELATIVE.
  void Write(const std::string& relative, const std::string& value) {
    const std::string path = root_ + "/" + relative;
    ASSERT_TRUE(sys::MakeDirs(sys::Dirname(path), 0755));
    ASSERT_TRUE(sys::WriteFileAtomic(path, value + "\n", 0644));
  }
  std::vector<Item> Check() {
    std::vector<Item> items;
    CheckUsernsSysctls(in_, &items);
    return items;
  }
  // A copy: the items of Check() are a temporary.
  static std::optional<Item> Find(const std::vector<Item>& items, const std::string& name) {
    for (const Item& i : items)
      if (i.name == name) return i;
    return std::nullopt;
  }

  std::string root_;
  Inputs in_;
};

TEST_F(UsernsCheckTest, NoSysctlFilesNoItems) { EXPECT_TRUE(Check().empty()); }

TEST_F(UsernsCheckTest, AppArmorRestrictionWithoutAProfileIsBlockedWithTheFix) {
  Write("sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  Write("self/attr/apparmor/current", "unconfined");
  std::vector<Item> items = Check();
  std::optional<Item> item = Find(items, "apparmor userns restriction");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->section, "kernel");
  EXPECT_EQ(item->status, ItemStatus::kBlocked);
  EXPECT_NE(item->detail.find("kernel.apparmor_restrict_unprivileged_userns = 1"),
            std::string::npos)
      << item->detail;
  EXPECT_NE(item->fix.find("sudo apparmor_parser -r /etc/apparmor.d/berth"), std::string::npos)
      << item->fix;
  EXPECT_NE(item->fix.find("sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"),
            std::string::npos)
      << item->fix;
}

TEST_F(UsernsCheckTest, AppArmorRestrictionWithAProfileIsOk) {
  Write("sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  Write("self/attr/apparmor/current", "berth (unconfined)");
  std::optional<Item> item = Find(Check(), "apparmor userns restriction");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kOk);
  EXPECT_NE(item->detail.find("'berth (unconfined)'"), std::string::npos) << item->detail;
}

TEST_F(UsernsCheckTest, AppArmorRestrictionDoesNotBlockRoot) {
  Write("sys/kernel/apparmor_restrict_unprivileged_userns", "1");
  in_.identity.uid = 0;
  std::optional<Item> item = Find(Check(), "apparmor userns restriction");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kOk);
}

TEST_F(UsernsCheckTest, AppArmorRestrictionOffIsOk) {
  Write("sys/kernel/apparmor_restrict_unprivileged_userns", "0");
  std::optional<Item> item = Find(Check(), "apparmor userns restriction");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kOk);
}

TEST_F(UsernsCheckTest, ZeroMaxUserNamespacesIsBlockedWithTheFix) {
  Write("sys/user/max_user_namespaces", "0");
  in_.identity.uid = 0;  // refuses root too
  std::optional<Item> item = Find(Check(), "user.max_user_namespaces");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kBlocked);
  EXPECT_NE(item->fix.find("sudo sysctl -w user.max_user_namespaces=15000"), std::string::npos)
      << item->fix;
}

TEST_F(UsernsCheckTest, NonZeroMaxUserNamespacesIsOk) {
  Write("sys/user/max_user_namespaces", "63432");
  std::optional<Item> item = Find(Check(), "user.max_user_namespaces");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kOk);
  EXPECT_EQ(item->detail, "user.max_user_namespaces = 63432");
}

TEST_F(UsernsCheckTest, UnprivilegedUsernsCloneZeroIsBlockedWithTheFix) {
  Write("sys/kernel/unprivileged_userns_clone", "0");
  std::optional<Item> item = Find(Check(), "kernel.unprivileged_userns_clone");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kBlocked);
  EXPECT_NE(item->fix.find("sudo sysctl -w kernel.unprivileged_userns_clone=1"), std::string::npos)
      << item->fix;
}

TEST_F(UsernsCheckTest, UnprivilegedUsernsCloneOneIsOk) {
  Write("sys/kernel/unprivileged_userns_clone", "1");
  std::optional<Item> item = Find(Check(), "kernel.unprivileged_userns_clone");
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->status, ItemStatus::kOk);
}

}  // namespace
}  // namespace berth::doctor
