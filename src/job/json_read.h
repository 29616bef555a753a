// Strict reading of berth's JSON records (the receipt and what it holds): a known key of the
// wrong type is an error that names it; a missing key keeps the field's default, so that a
// record written before a field existed still reads; unknown keys are ignored.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace berth::job {

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

}  // namespace berth::job
