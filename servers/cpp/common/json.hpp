// A small JSON parser and serializer (RFC 8259), C++17 standard library only.
// Shared by lang_cpp_std and lang_cpp_beast.
//
// Numbers are validated and kept as the text that was sent (they come back out
// unchanged, no float round trip). Strings are decoded to UTF-8; a lone
// surrogate escape becomes U+FFFD. In an object a repeated key keeps its first
// position and its last value. Input must be valid UTF-8.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace json {

struct Value {
    enum class Kind { Null, False, True, Number, String, Array, Object };
    Kind kind = Kind::Null;
    std::string text;                                  // Number (as written) or String
    std::vector<Value> items;                          // Array
    std::vector<std::pair<std::string, Value>> members;  // Object
};

// Parses one JSON text (surrounding whitespace allowed); false if invalid.
bool parse(std::string_view in, Value& out);

// Appends the compact serialization of v / of s as a string literal.
void write(std::string& out, const Value& v);
void write_string(std::string& out, std::string_view s);

// Whether s is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF).
bool valid_utf8(std::string_view s);

// Adds or replaces a member of an object (a repeated key keeps its first
// position and takes the new value).
void set_member(Value& obj, std::string key, Value v);

}  // namespace json
