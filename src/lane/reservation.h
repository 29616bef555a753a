// Reservation of a lane's files: output, receipt and the receipt's .stdout/.stderr sidecars,
// each created empty with mode 0600 and O_EXCL, in that order, parent directories as needed.
//
// A failure part way removes only what this attempt created (files, then directories), so a
// file that was there already is never touched. Once reserved the receipt is never deleted;
// the output is removed when the lane fails (Reservation::DropOutput).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace berth::lane {

class Reservation {
 public:
  // `paths` absolute, in reservation order: output, receipt, stdout sidecar, stderr sidecar.
  static Result<Reservation> Reserve(const std::vector<std::string>& paths);

  // Removes the output reservation (paths[0]) of a lane that did not complete.
  Status DropOutput();

 private:
  explicit Reservation(std::vector<std::string> paths) : paths_(std::move(paths)) {}
  std::vector<std::string> paths_;
};

}  // namespace berth::lane
