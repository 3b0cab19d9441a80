/* A minimal test harness: each case reports once through t_case(); failures
 * print why and where. */
#ifndef EVLOOP_TEST_H
#define EVLOOP_TEST_H

#include <stdio.h>

void t_case(const char *suite, const char *name, int ok, const char *why);

/* Inside a case: record the first failed check and keep going. */
#define T_CHECK(cond)                                                       \
    do {                                                                    \
        if (!(cond) && !t_why) {                                            \
            snprintf(t_whybuf, sizeof(t_whybuf), "%s:%d: %s", __FILE__,     \
                     __LINE__, #cond);                                      \
            t_why = t_whybuf;                                               \
        }                                                                   \
    } while (0)

#define T_BEGIN                                                             \
    char t_whybuf[256];                                                     \
    const char *t_why = NULL
#define T_END(suite, name) t_case(suite, name, t_why == NULL, t_why)

void test_parser(void);
void test_chunked(void);
void test_routes(void);
void test_h2_wire(void);
void test_gather(void);
void test_tls(void);
void test_query(void);
void test_json(void);
void test_json_fuzz(void);
void test_http_status(void);
void test_protocols(void);
void test_h2_frame(void);
void test_h2_hpack(void);
void test_h2_head(void);
void test_h2_hpack_dec(void);
void test_h2_settings(void);
void test_conn_h1(void);
void test_conn_h2(void);
void test_quic_table(void);
void test_quic_mem(void);

#endif
