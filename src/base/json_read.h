// Strict reading of berth's JSON records (the job's request, its receipt, the land journal,
// the audit details... docs/store.md "How records are decoded"): a known key of the wrong
// type is an error that names the record and the field; a missing key keeps the field's
// default, so that a record written before a field existed still reads; unknown keys are
// ignored (a newer berth's fields). No input aborts: nlohmann's get/value() are called only
// on values whose type was checked, since the build defines JSON_NOEXCEPTION.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace berth {

// How deep a record may nest: far more than any record berth writes (a receipt nests about
// six levels), and shallow enough that copying, comparing or printing one never exhausts the
// stack, which nlohmann does recursively.
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as the record `what` names ("request", "the land journal"): an error saying
// that it is not JSON, or nests deeper than kMaxJsonDepth, instead of a discarded value.
Result<nlohmann::json> ParseJson(std::string_view text, const std::string& what);

class JsonReader {
 public:
  // Fails unless `value` is an object. `where` names it in errors ("receipt.sandbox").
  static Result<JsonReader> Of(const nlohmann::json& value, std::string where);

  bool Has(const char* key) const;
  // The member as an object (an empty one when missing); an error for another type.
  Result<JsonReader> Object(const char* key) const;
  // An error unless `key` is present.
  Status Require(const char* key) const;
  // The member itself, or null when missing.
  const nlohmann::json& At(const char* key) const;

  Status Read(const char* key, std::string* out) const;
  Status Read(const char* key, bool* out) const;
  Status Read(const char* key, int* out) const;
  Status Read(const char* key, int64_t* out) const;
  Status Read(const char* key, uint64_t* out) const;
  Status Read(const char* key, double* out) const;  // finite numbers only
  Status Read(const char* key, std::vector<std::string>* out) const;
  // An object whose every value is a string.
  Status Read(const char* key, std::map<std::string, std::string>* out) const;
  // As Read, but a null member also keeps the default: for fields a writer may set to null.
  template <typename T>
  Status ReadOrNull(const char* key, T* out) const {
    if (At(key).is_null()) return {};
    return Read(key, out);
  }
  // null (or missing) is nullopt.
  template <typename T>
  Status Read(const char* key, std::optional<T>* out) const {
    if (At(key).is_null()) return {};
    T value{};
    TRY(Read(key, &value));
    *out = std::move(value);
    return {};
  }
  // An array of records, each read by `decode(element, where)` -> Result<T>.
  template <typename T, typename Decode>
  Status ReadList(const char* key, std::vector<T>* out, Decode decode) const {
    const nlohmann::json& list = At(key);
    if (list.is_null() && !Has(key)) return {};
    if (!list.is_array()) return WrongType(key, "an array");
    out->clear();
    for (size_t i = 0; i < list.size(); ++i)
      out->push_back(TRY(decode(list[i], Where(key) + "[" + std::to_string(i) + "]")));
    return {};
  }

  // "receipt.sandbox.tier"
  std::string Where(const char* key) const { return where_ + "." + key; }
  Error WrongType(const char* key, const char* expected) const;

 private:
  JsonReader(const nlohmann::json* object, std::string where)
      : object_(object), where_(std::move(where)) {}
  const nlohmann::json* object_;
  std::string where_;
};

// An error saying that `value` at `where` is not `expected`.
Error JsonTypeError(const std::string& where, const char* expected, const nlohmann::json& value);

// The members of `object` whose keys are not in `known`: what a newer berth wrote, kept so
// that a record berth reads and writes back loses none of it (docs/store.md). null when
// there is none, or when `object` is not an object.
nlohmann::json UnknownMembers(const nlohmann::json& object,
                              std::span<const std::string_view> known);
// Adds the members of `extra` that `object` does not have.
void MergeUnknownMembers(const nlohmann::json& extra, nlohmann::json* object);

}  // namespace berth
