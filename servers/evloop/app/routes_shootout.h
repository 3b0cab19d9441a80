/* routes_shootout: the generated answers of the five-language shoot-out's
 * /something route (registered by app.c; exposed for the unit tests).
 *
 *   GET /something?q          text/plain, "name=value\n" per parameter
 *   GET /something?json=true  application/json {"message":..,"query":{..}}
 *   POST /something           application/json {"received":..,"bytes":n}
 *
 * Both write into req->scratch and fill res; errors are 400 (malformed
 * percent escape, non-UTF-8 text where JSON needs it, invalid JSON) or 500
 * (no scratch, out of memory). */
#ifndef ROUTES_SHOOTOUT_H
#define ROUTES_SHOOTOUT_H

#include "http/routes.h"

void shootout_get_something(const route_request *req, route_response *res);
void shootout_post_something(const route_request *req, route_response *res);

#endif
