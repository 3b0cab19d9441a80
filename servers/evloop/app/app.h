/* app: the benchmark application -- its routes, registered with the router
 * (routes.h) at start-up:
 *
 *   GET|HEAD /ping            "pong" (other methods: 405)
 *   GET|HEAD /echo?size=N     N bytes of 'x'; POST /echo answers its body
 *   GET|HEAD /                "Hello, World!" (the shoot-out's; other
 *                             methods: 404)
 *   GET|POST /something       the shoot-out's generated answers
 *                             (routes_shootout.h; other methods: 404) */
#ifndef APP_H
#define APP_H

#include <stddef.h>

/* GET /echo?size=N answers N bytes of 'x'. N is capped at 1 MiB so that one
 * static buffer, filled once at start, backs every such response by
 * reference (writev), with no per-request fill or allocation. */
#define APP_ECHO_MAX 1048576
#define APP_ECHO_DEFAULT 64

/* Fills the echo buffer and installs the route table. Once per process,
 * before the first request. */
void app_init(void);

/* Finds "size" in a query string. Absent: APP_ECHO_DEFAULT. Returns -1 if
 * its value is empty, not all digits, or above APP_ECHO_MAX. */
int app_parse_size(const char *query, size_t query_len, size_t *size);

#endif
