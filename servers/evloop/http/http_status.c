#include "http_status.h"

#include <string.h>

/* Each reason phrase with its newline, so one string serves as the reason
 * (without the last byte) and as a plain-text error body. Indexed by
 * code - 100; NULL where nothing is registered. */
#define R(code, text) [(code) - HTTP_STATUS_MIN] = text "\n"
static const char *const reasons[HTTP_STATUS_MAX - HTTP_STATUS_MIN + 1] = {
    R(100, "Continue"),
    R(101, "Switching Protocols"),
    R(102, "Processing"),
    R(103, "Early Hints"),
    R(200, "OK"),
    R(201, "Created"),
    R(202, "Accepted"),
    R(203, "Non-Authoritative Information"),
    R(204, "No Content"),
    R(205, "Reset Content"),
    R(206, "Partial Content"),
    R(207, "Multi-Status"),
    R(208, "Already Reported"),
    R(226, "IM Used"),
    R(300, "Multiple Choices"),
    R(301, "Moved Permanently"),
    R(302, "Found"),
    R(303, "See Other"),
    R(304, "Not Modified"),
    R(305, "Use Proxy"),
    R(307, "Temporary Redirect"),
    R(308, "Permanent Redirect"),
    R(400, "Bad Request"),
    R(401, "Unauthorized"),
    R(402, "Payment Required"),
    R(403, "Forbidden"),
    R(404, "Not Found"),
    R(405, "Method Not Allowed"),
    R(406, "Not Acceptable"),
    R(407, "Proxy Authentication Required"),
    R(408, "Request Timeout"),
    R(409, "Conflict"),
    R(410, "Gone"),
    R(411, "Length Required"),
    R(412, "Precondition Failed"),
    R(413, "Content Too Large"),
    R(414, "URI Too Long"),
    R(415, "Unsupported Media Type"),
    R(416, "Range Not Satisfiable"),
    R(417, "Expectation Failed"),
    R(421, "Misdirected Request"),
    R(422, "Unprocessable Content"),
    R(423, "Locked"),
    R(424, "Failed Dependency"),
    R(425, "Too Early"),
    R(426, "Upgrade Required"),
    R(428, "Precondition Required"),
    R(429, "Too Many Requests"),
    R(431, "Request Header Fields Too Large"),
    R(451, "Unavailable For Legal Reasons"),
    R(500, "Internal Server Error"),
    R(501, "Not Implemented"),
    R(502, "Bad Gateway"),
    R(503, "Service Unavailable"),
    R(504, "Gateway Timeout"),
    R(505, "HTTP Version Not Supported"),
    R(506, "Variant Also Negotiates"),
    R(507, "Insufficient Storage"),
    R(508, "Loop Detected"),
    R(510, "Not Extended"),
    R(511, "Network Authentication Required"),
};
#undef R

int http_status_valid(int code) {
    return code >= HTTP_STATUS_MIN && code <= HTTP_STATUS_MAX ? code : 500;
}

const char *http_status_reason(int code, size_t *len) {
    const char *r = reasons[http_status_valid(code) - HTTP_STATUS_MIN];
    if (!r) r = "\n";
    *len = strlen(r) - 1;
    return r;
}

void http_status_digits(int code, char out[3]) {
    code = http_status_valid(code);
    out[0] = (char)('0' + code / 100);
    out[1] = (char)('0' + code / 10 % 10);
    out[2] = (char)('0' + code % 10);
}

const char *http_status_error_body(int code, size_t *len) {
    const char *r = reasons[http_status_valid(code) - HTTP_STATUS_MIN];
    /* An unregistered code still gets a readable body. */
    if (!r) r = "Error\n";
    *len = strlen(r);
    return r;
}

size_t fmt_u64(char *p, uint64_t v) {
    char tmp[20];
    size_t n = 0, i = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) p[i++] = tmp[--n];
    return i;
}
