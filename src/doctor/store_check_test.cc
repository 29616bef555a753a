// The job store item: its wording and status from what the CLI's probe found. The probe itself,
// against real stores, is tested through the berth binary (tests/e2e/doctor_host_e2e_test.cc).
#include "doctor/store_check.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "doctor/checks.h"

namespace berth::doctor {
namespace {

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- StoreItem: what a probe's findings read as ------------------------------------------

TEST(StoreItemTest, AMissingSqliteFileIsOkAndSaysBerthCreatesIt) {
  StoreProbe probe;
  probe.location = "/home/u/.local/state/berth/berth.db";
  probe.missing = true;
  probe.nearest_dir = "/home/u/.local/state";
  Item item = StoreItem(probe);
  EXPECT_EQ(item.section, "store");
  EXPECT_EQ(item.name, "sqlite");
  EXPECT_EQ(item.status, ItemStatus::kOk);
  EXPECT_EQ(item.detail,
            "/home/u/.local/state/berth/berth.db does not exist yet; berth creates it on first "
            "use");
  EXPECT_EQ(item.fix, "");
}

TEST(StoreItemTest, AMissingSqliteFileThatCannotBeCreatedIsBlocked) {
  StoreProbe probe;
  probe.location = "/ro/state/berth.db";
  probe.missing = true;
  probe.creatable = false;
  probe.nearest_dir = "/ro";
  Item item = StoreItem(probe);
  EXPECT_EQ(item.status, ItemStatus::kBlocked);
  EXPECT_PRED2(Mentions, item.detail, "/ro is not writable");
  EXPECT_PRED2(Mentions, item.fix, "--store");
}

TEST(StoreItemTest, AFailureIsBlockedWithTheCauseAndItsHint) {
  StoreProbe probe;
  probe.kind = "postgresql";
  probe.location = "postgresql://berth@db/berth";
  probe.error =
      Error(Cause::kUnavailable, "job store postgresql://berth@db/berth: schema version 9", 0,
            "a newer berth wrote this store; upgrade berth to use it");
  Item item = StoreItem(probe);
  EXPECT_EQ(item.name, "postgresql");
  EXPECT_EQ(item.status, ItemStatus::kBlocked);
  EXPECT_EQ(item.detail, "job store postgresql://berth@db/berth: schema version 9");
  EXPECT_EQ(item.fix, "a newer berth wrote this store; upgrade berth to use it");
}

TEST(StoreItemTest, AFailureWithoutAHintSaysWhatToCheck) {
  StoreProbe probe;
  probe.location = "/s/berth.db";
  probe.error = Error(Cause::kSystem, "job store /s/berth.db: open", 13);
  Item item = StoreItem(probe);
  EXPECT_EQ(item.status, ItemStatus::kBlocked);
  EXPECT_PRED2(Mentions, item.detail, "Permission denied");
  EXPECT_PRED2(Mentions, item.fix, "check /s/berth.db and its directory");
}

TEST(StoreItemTest, AWorkingStoreShowsItsSchemaAndNewestJob) {
  StoreProbe probe;
  probe.kind = "postgresql";
  probe.location = "postgresql://berth@db/berth";
  probe.schema_version = 3;
  EXPECT_EQ(StoreItem(probe).detail,
            "postgresql://berth@db/berth: connected, schema version 3, no jobs yet");
  probe.kind = "sqlite";
  probe.location = "/s/berth.db";
  probe.newest_job = "k3x9 (completed)";
  Item item = StoreItem(probe);
  EXPECT_EQ(item.status, ItemStatus::kOk);
  EXPECT_EQ(item.detail, "/s/berth.db: schema version 3, newest job k3x9 (completed)");
}

TEST(StoreItemTest, TheReportNamesTheStoreAndIsNotOkWhenItFails) {
  Inputs in;
  in.store.kind = "postgresql";
  in.store.location = "postgresql://berth@db/berth";
  in.store.schema_version = 1;
  Report report;
  report.tier = "namespaces";
  report.store = CheckStore(in, &report.items);
  ASSERT_EQ(report.items.size(), 1u);
  EXPECT_TRUE(report.ok());
  nlohmann::json j = report.ToJson();
  EXPECT_EQ(j["store"]["kind"], "postgresql");
  EXPECT_EQ(j["store"]["location"], "postgresql://berth@db/berth");
  EXPECT_EQ(j["store"]["ok"], true);
  EXPECT_EQ(j["items"][0]["section"], "store");

  in.store.error =
      Error(Cause::kUnavailable, "cannot connect to job store postgresql://berth@db/berth");
  report.items.clear();
  report.store = CheckStore(in, &report.items);
  EXPECT_FALSE(report.ok()) << "no job can run without its store";
  EXPECT_EQ(report.ToJson()["store"]["ok"], false);
}

}  // namespace
}  // namespace berth::doctor
