/* date_cache: the IMF-fixdate for the Date header, formatted once a second.
 *
 * Why: formatting a date (gmtime + strftime) per response is measurable at
 * 100k+ responses/s, and the value only changes once a second anyway. A loop
 * timer calls date_cache_update(); responses copy the cached bytes. */
#ifndef DATE_CACHE_H
#define DATE_CACHE_H

#include <time.h>

#define DATE_CACHE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

void date_cache_update(time_t now);
/* DATE_CACHE_LEN bytes (also NUL-terminated). */
const char *date_cache_get(void);

#endif
