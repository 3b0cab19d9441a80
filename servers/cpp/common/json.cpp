#include "json.hpp"

#include <cstdint>
#include <unordered_map>

namespace json {
namespace {

constexpr int kMaxDepth = 512;
constexpr size_t kLinearKeys = 16;

}  // namespace

bool valid_utf8(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const auto* end = p + s.size();
    while (p < end) {
        unsigned c = *p;
        if (c < 0x80) { ++p; continue; }
        int n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { n = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { n = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { n = 3; cp = c & 0x07; }
        else return false;
        if (end - p <= n) return false;
        for (int k = 1; k <= n; ++k) {
            if ((p[k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (p[k] & 0x3F);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        p += n + 1;
    }
    return true;
}

namespace {

void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

// Builds an object's member list, replacing the value of a repeated key.
class ObjectBuilder {
public:
    explicit ObjectBuilder(Value& obj) : obj_(obj) {}
    void add(std::string key, Value v) {
        auto& m = obj_.members;
        if (!index_.empty()) {
            auto it = index_.find(key);
            if (it != index_.end()) {
                m[it->second].second = std::move(v);
            } else {
                index_.emplace(key, m.size());
                m.emplace_back(std::move(key), std::move(v));
            }
            return;
        }
        for (auto& kv : m) {
            if (kv.first == key) { kv.second = std::move(v); return; }
        }
        m.emplace_back(std::move(key), std::move(v));
        if (m.size() > kLinearKeys) {
            for (size_t i = 0; i < m.size(); ++i) index_.emplace(m[i].first, i);
        }
    }

private:
    Value& obj_;
    std::unordered_map<std::string, size_t> index_;
};

class Parser {
public:
    explicit Parser(std::string_view s) : s_(s) {}

    bool document(Value& out) {
        ws();
        if (!value(out)) return false;
        ws();
        return i_ == s_.size();
    }

private:
    std::string_view s_;
    size_t i_ = 0;
    int depth_ = 0;

    int peek() const { return i_ < s_.size() ? static_cast<unsigned char>(s_[i_]) : -1; }

    void ws() {
        while (i_ < s_.size()) {
            char c = s_[i_];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
            ++i_;
        }
    }

    bool literal(std::string_view word, Value::Kind kind, Value& out) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        out.kind = kind;
        return true;
    }

    bool value(Value& out) {
        switch (peek()) {
        case '{': return object(out);
        case '[': return array(out);
        case '"': out.kind = Value::Kind::String; return string(out.text);
        case 't': return literal("true", Value::Kind::True, out);
        case 'f': return literal("false", Value::Kind::False, out);
        case 'n': return literal("null", Value::Kind::Null, out);
        default: {
            int c = peek();
            if (c == '-' || (c >= '0' && c <= '9')) return number(out);
            return false;
        }
        }
    }

    bool enter() {
        ++i_;  // the opening bracket
        return ++depth_ <= kMaxDepth;
    }

    bool array(Value& out) {
        out.kind = Value::Kind::Array;
        if (!enter()) return false;
        ws();
        if (peek() == ']') { ++i_; --depth_; return true; }
        for (;;) {
            ws();
            out.items.emplace_back();
            if (!value(out.items.back())) return false;
            ws();
            int c = peek();
            if (c == ',') { ++i_; continue; }
            if (c == ']') { ++i_; --depth_; return true; }
            return false;
        }
    }

    bool object(Value& out) {
        out.kind = Value::Kind::Object;
        if (!enter()) return false;
        ObjectBuilder members(out);
        ws();
        if (peek() == '}') { ++i_; --depth_; return true; }
        for (;;) {
            ws();
            if (peek() != '"') return false;
            std::string key;
            if (!string(key)) return false;
            ws();
            if (peek() != ':') return false;
            ++i_;
            ws();
            Value v;
            if (!value(v)) return false;
            members.add(std::move(key), std::move(v));
            ws();
            int c = peek();
            if (c == ',') { ++i_; continue; }
            if (c == '}') { ++i_; --depth_; return true; }
            return false;
        }
    }

    size_t digits() {
        size_t start = i_;
        while (peek() >= '0' && peek() <= '9') ++i_;
        return i_ - start;
    }

    bool number(Value& out) {
        size_t start = i_;
        if (peek() == '-') ++i_;
        int c = peek();
        if (c == '0') ++i_;
        else if (c >= '1' && c <= '9') digits();
        else return false;
        if (peek() == '.') {
            ++i_;
            if (digits() == 0) return false;
        }
        if (peek() == 'e' || peek() == 'E') {
            ++i_;
            if (peek() == '+' || peek() == '-') ++i_;
            if (digits() == 0) return false;
        }
        out.kind = Value::Kind::Number;
        out.text.assign(s_.substr(start, i_ - start));
        return true;
    }

    bool hex4(uint32_t& v) {
        if (s_.size() - i_ < 4) return false;
        v = 0;
        for (int k = 0; k < 4; ++k) {
            char c = s_[i_ + k];
            uint32_t d;
            if (c >= '0' && c <= '9') d = c - '0';
            else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
            else return false;
            v = v * 16 + d;
        }
        i_ += 4;
        return true;
    }

    // A string starting at its opening quote, decoded into out.
    bool string(std::string& out) {
        ++i_;
        for (;;) {
            size_t start = i_;
            while (i_ < s_.size()) {
                unsigned char c = s_[i_];
                if (c == '"' || c == '\\' || c < 0x20) break;
                ++i_;
            }
            out.append(s_.data() + start, i_ - start);
            int c = peek();
            if (c == '"') { ++i_; return true; }
            if (c != '\\') return false;  // end of input or a raw control character
            ++i_;
            int e = peek();
            ++i_;
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                uint32_t cp;
                if (!hex4(cp)) return false;
                if (cp >= 0xD800 && cp < 0xDC00) {
                    uint32_t lo;
                    size_t save = i_;
                    if (s_.substr(i_, 2) == "\\u") {
                        i_ += 2;
                        if (!hex4(lo)) return false;
                        if (lo >= 0xDC00 && lo < 0xE000) {
                            put_utf8(out, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
                            break;
                        }
                        i_ = save;  // not a low half: it is decoded on its own
                    }
                    cp = 0xFFFD;
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    cp = 0xFFFD;
                }
                put_utf8(out, cp);
                break;
            }
            default: return false;
            }
        }
    }
};

}  // namespace

bool parse(std::string_view in, Value& out) {
    if (!valid_utf8(in)) return false;
    out = Value{};
    return Parser(in).document(out);
}

void write_string(std::string& out, std::string_view s) {
    static const char kHex[] = "0123456789abcdef";
    out += '"';
    size_t start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = s[i];
        const char* esc;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c >= 0x20) continue;
            esc = nullptr;
        }
        out.append(s.data() + start, i - start);
        if (esc) {
            out += esc;
        } else {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
        start = i + 1;
    }
    out.append(s.data() + start, s.size() - start);
    out += '"';
}

void write(std::string& out, const Value& v) {
    switch (v.kind) {
    case Value::Kind::Null: out += "null"; break;
    case Value::Kind::False: out += "false"; break;
    case Value::Kind::True: out += "true"; break;
    case Value::Kind::Number: out += v.text; break;
    case Value::Kind::String: write_string(out, v.text); break;
    case Value::Kind::Array:
        out += '[';
        for (size_t k = 0; k < v.items.size(); ++k) {
            if (k) out += ',';
            write(out, v.items[k]);
        }
        out += ']';
        break;
    case Value::Kind::Object:
        out += '{';
        for (size_t k = 0; k < v.members.size(); ++k) {
            if (k) out += ',';
            write_string(out, v.members[k].first);
            out += ':';
            write(out, v.members[k].second);
        }
        out += '}';
        break;
    }
}

void set_member(Value& obj, std::string key, Value v) {
    obj.kind = Value::Kind::Object;
    for (auto& kv : obj.members) {
        if (kv.first == key) { kv.second = std::move(v); return; }
    }
    obj.members.emplace_back(std::move(key), std::move(v));
}

}  // namespace json
