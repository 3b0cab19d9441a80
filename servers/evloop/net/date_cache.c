#include "date_cache.h"

static char cached[DATE_CACHE_LEN + 1] = "Thu, 01 Jan 1970 00:00:00 GMT";
static time_t cached_at = -1;

static char *put2(char *p, int v) {
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
    return p + 2;
}

/* Formatted by hand: strftime would depend on the C locale being "C". */
void date_cache_update(time_t now) {
    static const char days[] = "SunMonTueWedThuFriSat";
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    struct tm tm;
    char *p = cached;

    if (now == cached_at || !gmtime_r(&now, &tm)) return;
    cached_at = now;
    p[0] = days[tm.tm_wday * 3];
    p[1] = days[tm.tm_wday * 3 + 1];
    p[2] = days[tm.tm_wday * 3 + 2];
    p[3] = ',';
    p[4] = ' ';
    p = put2(p + 5, tm.tm_mday);
    *p++ = ' ';
    p[0] = months[tm.tm_mon * 3];
    p[1] = months[tm.tm_mon * 3 + 1];
    p[2] = months[tm.tm_mon * 3 + 2];
    p[3] = ' ';
    p = put2(p + 4, (tm.tm_year + 1900) / 100);
    p = put2(p, (tm.tm_year + 1900) % 100);
    *p++ = ' ';
    p = put2(p, tm.tm_hour);
    *p++ = ':';
    p = put2(p, tm.tm_min);
    *p++ = ':';
    p = put2(p, tm.tm_sec);
    p[0] = ' ';
    p[1] = 'G';
    p[2] = 'M';
    p[3] = 'T';
    p[4] = '\0';
}

const char *date_cache_get(void) { return cached; }
