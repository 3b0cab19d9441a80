/* The shared status table: every code a route may use has its digits and
 * phrase, unregistered ones an empty phrase, nonsense becomes 500. */
#include <stdint.h>
#include <string.h>

#include "http/http_status.h"
#include "test.h"

static int reason_is(int code, const char *want) {
    size_t n;
    const char *r = http_status_reason(code, &n);
    return n == strlen(want) && memcmp(r, want, n) == 0;
}

static int digits_are(int code, const char *want) {
    char d[3];
    http_status_digits(code, d);
    return memcmp(d, want, 3) == 0;
}

static int fmt_is(uint64_t v, const char *want) {
    char buf[24];
    size_t n = fmt_u64(buf, v);
    return n == strlen(want) && memcmp(buf, want, n) == 0;
}

void test_http_status(void) {
    {
        T_BEGIN;
        T_CHECK(reason_is(200, "OK"));
        T_CHECK(reason_is(201, "Created"));
        T_CHECK(reason_is(302, "Found"));
        T_CHECK(reason_is(413, "Content Too Large"));
        T_CHECK(reason_is(505, "HTTP Version Not Supported"));
        T_CHECK(digits_are(201, "201"));
        T_CHECK(digits_are(302, "302"));
        T_END("http_status", "registered codes keep their own code and phrase");
    }
    {
        T_BEGIN;
        T_CHECK(reason_is(299, ""));
        T_CHECK(digits_are(299, "299"));
        T_CHECK(digits_are(599, "599"));
        T_END("http_status", "an unregistered code is sent with an empty phrase");
    }
    {
        T_BEGIN;
        T_CHECK(http_status_valid(99) == 500);
        T_CHECK(http_status_valid(600) == 500);
        T_CHECK(http_status_valid(-1) == 500);
        T_CHECK(digits_are(42, "500"));
        T_CHECK(reason_is(1000, "Internal Server Error"));
        T_END("http_status", "a code outside 100..599 becomes 500");
    }
    {
        T_BEGIN;
        size_t n;
        const char *b = http_status_error_body(404, &n);
        T_CHECK(n == 10 && memcmp(b, "Not Found\n", n) == 0);
        b = http_status_error_body(299, &n);
        T_CHECK(n == 6 && memcmp(b, "Error\n", n) == 0);
        T_END("http_status", "error bodies are the phrase and a newline");
    }
    {
        T_BEGIN;
        T_CHECK(fmt_is(0, "0"));
        T_CHECK(fmt_is(7, "7"));
        T_CHECK(fmt_is(1048576, "1048576"));
        T_CHECK(fmt_is(UINT64_MAX, "18446744073709551615"));
        T_END("http_status", "fmt_u64 writes decimal without a terminator");
    }
}
