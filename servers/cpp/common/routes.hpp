// The shoot-out's routes for the C++ servers (lang_cpp_std, lang_cpp_beast):
//
//   GET  /                      200 text/plain        "Hello, World!"
//   GET  /something?q           200 text/plain        "name=value\n" per parameter, in order
//   GET  /something?json=true   200 application/json  {"message": ..., "query": {...}}
//   POST /something             200 application/json  {"received": <body>, "bytes": n}
//                               400 if the body is not JSON
//   anything else               404
#pragma once

#include <string>
#include <string_view>

namespace routes {

struct Reply {
    int status = 200;
    const char* content_type = "text/plain";
    std::string body;
};

// Largest request body accepted (1 MiB); the front ends answer 413 above it.
constexpr size_t kMaxBody = 1 << 20;

// Answers one request; `target` is the request-target (path and query).
void handle(std::string_view method, std::string_view target, std::string_view body, Reply& out);

// Form decoding of one query component ('+' is a space, %XX a byte; a
// malformed escape stays as sent). Exposed for the tests.
std::string decode_component(std::string_view s);

const char* reason(int status);

}  // namespace routes
