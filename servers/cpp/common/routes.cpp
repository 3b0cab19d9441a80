#include "routes.hpp"

#include <utility>
#include <vector>

#include "json.hpp"

namespace routes {
namespace {

constexpr std::string_view kHello = "Hello, World!";

int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

using Params = std::vector<std::pair<std::string, std::string>>;

Params parse_query(std::string_view q) {
    Params params;
    while (!q.empty()) {
        size_t amp = q.find('&');
        std::string_view seg = q.substr(0, amp);
        q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
        if (seg.empty()) continue;
        size_t eq = seg.find('=');
        if (eq == std::string_view::npos) {
            params.emplace_back(decode_component(seg), std::string());
        } else {
            params.emplace_back(decode_component(seg.substr(0, eq)),
                                decode_component(seg.substr(eq + 1)));
        }
    }
    return params;
}

// A JSON string must be UTF-8: bytes of a malformed sequence become U+FFFD.
std::string as_utf8(std::string s) {
    if (json::valid_utf8(s)) return s;
    std::string out;
    for (unsigned char c : s) {
        if (c < 0x80) out += static_cast<char>(c);
        else out += "\xEF\xBF\xBD";
    }
    return out;
}

void get_something(std::string_view query, Reply& out) {
    Params params = parse_query(query);
    bool wants_json = false;
    for (const auto& p : params) {
        if (p.first == "json" && p.second == "true") { wants_json = true; break; }
    }
    if (!wants_json) {
        out.content_type = "text/plain";
        for (const auto& p : params) {
            out.body += p.first;
            out.body += '=';
            out.body += p.second;
            out.body += '\n';
        }
        return;
    }
    json::Value q;
    q.kind = json::Value::Kind::Object;
    for (auto& p : params) {
        json::Value v;
        v.kind = json::Value::Kind::String;
        v.text = as_utf8(std::move(p.second));
        json::set_member(q, as_utf8(std::move(p.first)), std::move(v));
    }
    out.content_type = "application/json";
    out.body += "{\"message\":";
    json::write_string(out.body, kHello);
    out.body += ",\"query\":";
    json::write(out.body, q);
    out.body += '}';
}

void post_something(std::string_view body, Reply& out) {
    json::Value v;
    if (!json::parse(body, v)) {
        out.status = 400;
        out.content_type = "text/plain";
        out.body = "invalid JSON\n";
        return;
    }
    out.content_type = "application/json";
    out.body += "{\"received\":";
    json::write(out.body, v);
    out.body += ",\"bytes\":";
    out.body += std::to_string(body.size());
    out.body += '}';
}

}  // namespace

std::string decode_component(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '+') {
            out += ' ';
        } else if (c == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
            out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

void handle(std::string_view method, std::string_view target, std::string_view body, Reply& out) {
    out.status = 200;
    out.body.clear();
    size_t qm = target.find('?');
    std::string_view path = target.substr(0, qm);
    std::string_view query = qm == std::string_view::npos ? std::string_view() : target.substr(qm + 1);
    if (path == "/" && method == "GET") {
        out.content_type = "text/plain";
        out.body.assign(kHello);
    } else if (path == "/something" && method == "GET") {
        get_something(query, out);
    } else if (path == "/something" && method == "POST") {
        post_something(body, out);
    } else {
        out.status = 404;
        out.content_type = "text/plain";
        out.body = "not found\n";
    }
}

const char* reason(int status) {
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

}  // namespace routes
