// Unit test of the C++ servers' shared code (common/json, common/routes).
#include <cstdio>
#include <string>

#include "../common/json.hpp"
#include "../common/routes.hpp"

static int failures = 0;

static void expect(bool ok, const char* what, const std::string& got = "") {
    if (!ok) {
        ++failures;
        std::printf("FAIL %s: %s\n", what, got.c_str());
    }
}

static bool round_trip(const std::string& in, std::string& out) {
    json::Value v;
    if (!json::parse(in, v)) return false;
    out.clear();
    json::write(out, v);
    return true;
}

int main() {
    std::string out;
    expect(round_trip(" {\"a\" : [1, -2.5e+3, true, null, \"x\"]} ", out) &&
               out == "{\"a\":[1,-2.5e+3,true,null,\"x\"]}", "values", out);
    expect(round_trip("\"\\u00e9\\ud83d\\ude00\\n\\u0001\"", out) &&
               out == "\"\xC3\xA9\xF0\x9F\x98\x80\\n\\u0001\"", "escapes", out);
    expect(round_trip("{\"k\":1,\"j\":2,\"k\":3}", out) && out == "{\"k\":3,\"j\":2}", "dup keys", out);
    expect(round_trip("\"\\ud800x\"", out) && out == "\"\xEF\xBF\xBDx\"", "lone surrogate", out);
    std::string many = "{";
    for (int k = 0; k < 40; ++k) many += "\"k" + std::to_string(k % 30) + "\":" + std::to_string(k) + ",";
    many += "\"z\":0}";
    expect(round_trip(many, out) && out.rfind("{\"k0\":30,", 0) == 0, "many keys", out);
    const char* bad[] = {"", "nope", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "1e",
                         "\"\t\"", "\"\\x\"", "[1] 2", "tru", "{1:2}", "\"\xFF\""};
    for (const char* b : bad) expect(!round_trip(b, out), "rejects", b);
    expect(!round_trip(std::string(600, '[') + std::string(600, ']'), out), "depth");

    expect(routes::decode_component("x%20y+z%E2%9C%93") == "x y z\xE2\x9C\x93", "decode");
    expect(routes::decode_component("100%") == "100%", "decode %");
    expect(routes::decode_component("%zz%41") == "%zzA", "decode bad");

    routes::Reply r;
    routes::handle("GET", "/something?a=1&&b&c=x=y", "", r);
    expect(r.status == 200 && r.body == "a=1\nb=\nc=x=y\n", "query text", r.body);
    routes::handle("GET", "/something?json=true&x=1&x=2", "", r);
    expect(r.body == "{\"message\":\"Hello, World!\",\"query\":{\"json\":\"true\",\"x\":\"2\"}}",
           "query json", r.body);
    routes::handle("POST", "/something", "[1]", r);
    expect(r.status == 200 && r.body == "{\"received\":[1],\"bytes\":3}", "post", r.body);
    routes::handle("POST", "/something", "nope", r);
    expect(r.status == 400, "post bad");
    routes::handle("DELETE", "/", "", r);
    expect(r.status == 404, "delete");
    routes::handle("GET", "/nope", "", r);
    expect(r.status == 404, "nope");

    std::printf("%d failed\n", failures);
    return failures ? 1 : 0;
}
