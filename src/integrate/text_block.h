// A block of lines that berth owns inside a text file that belongs to someone else (an
// AGENTS.md, a config.toml): it starts and ends with marker lines, so that berth can replace
// or remove exactly what it added and nothing else.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"

namespace berth::integrate {

struct Markers {
  std::string begin;  // a whole line, without its newline
  std::string end;
};

// Whether `text` holds the block. Refused: a begin marker without its end, or a second block
// (someone edited the markers; berth does not guess which lines are its own).
Result<bool> HasBlock(const std::string& text, const Markers& markers);

// `text` with the block holding `body` (lines ending in '\n'): the existing block replaced in
// place, or a new one appended after a blank line.
Result<std::string> PutBlock(const std::string& text, const Markers& markers,
                             const std::string& body);

// `text` without the block (and the blank line PutBlock put before it); the same text when
// there is none.
Result<std::string> TakeBlock(const std::string& text, const Markers& markers);

}  // namespace berth::integrate
