#include "lane/provider_reach.h"

namespace berth::lane {

bool ProviderUnreached(const std::optional<job::NetworkRecord>& network) {
  if (!network || !network->proxy || !network->proxy->totals) return false;
  const job::NetworkTotals& totals = *network->proxy->totals;
  return totals.failed > 0 && totals.bytes_in == 0;
}

}  // namespace berth::lane
