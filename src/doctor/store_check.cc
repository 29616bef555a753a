#include "doctor/store_check.h"

#include <vector>

#include "doctor/checks.h"

namespace berth::doctor {

namespace {

std::string DefaultFix(const StoreProbe& probe) {
  if (probe.kind == "sqlite") {
    return "check " + probe.location +
           " and its directory (permissions, disk space), or choose another store with "
           "--store, BERTH_STORE or the config's store";
  }
  return "check the server and the URL given by --store, BERTH_STORE or the config's store "
         "(docs/store.md)";
}

}  // namespace

Item StoreItem(const StoreProbe& probe) {
  Item item{"store", probe.kind, ItemStatus::kOk, "", ""};
  if (probe.missing) {
    if (probe.creatable) {
      item.detail = probe.location + " does not exist yet; berth creates it on first use";
    } else {
      item.status = ItemStatus::kBlocked;
      item.detail = probe.location +
                    " does not exist, and berth cannot create it: " + probe.nearest_dir +
                    " is not writable";
      item.fix = "make " + probe.nearest_dir +
                 " writable, or choose another state directory (--state-dir) or store (--store)";
    }
    return item;
  }
  if (probe.error) {
    item.status = ItemStatus::kBlocked;
    item.detail = probe.error->ToString();
    item.fix = probe.error->hint().empty() ? DefaultFix(probe) : probe.error->hint();
    return item;
  }
  item.detail = probe.location + ": " + (probe.kind == "postgresql" ? "connected, " : "") +
                "schema version " + std::to_string(probe.schema_version) + ", " +
                (probe.newest_job ? "newest job " + *probe.newest_job : "no jobs yet");
  return item;
}

StoreSummary CheckStore(const Inputs& in, std::vector<Item>* items) {
  items->push_back(StoreItem(in.store));
  return {in.store.kind, in.store.location, items->back().status == ItemStatus::kOk};
}

}  // namespace berth::doctor
