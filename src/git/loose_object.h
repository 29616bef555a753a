// A loose object file of git's objects directory ("<type> <size>\0" and the content,
// deflated as one zlib stream), streamed a piece at a time (docs/workspace.md, "Large
// files"). Pure: the caller reads or maps the file.
#pragma once

#include <string_view>

#include "base/result.h"
#include "git/object_inflate.h"

namespace berth::git {

// Whether `data` starts like a zlib stream (RFC 1950: deflate, header a multiple of 31), as
// every loose object git writes today does; the old pack-like format does not.
bool LooksLikeZlib(std::string_view data);

// Inflates the loose object `compressed` into `buffer` (kPieceSize bytes) and hands the
// blob's content to `sink`, checking the header, that the content is as long as the header
// says, zlib's checksum and that nothing follows the stream; a damaged object is an error of
// a piece (DamagedObject). An object of another type is refused ("the tree names a non-blob
// as the file <label>"). `label` names the file in messages.
Status StreamLooseBlob(std::string_view compressed, char* buffer, std::string_view label,
                       const PieceSink& sink);

}  // namespace berth::git
