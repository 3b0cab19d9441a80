/* json_members: repeated member names in a serialized object.
 *
 * RFC 8259 4 leaves repeated names to the implementation; ours, like most
 * parsers that build a map, keeps one member per name, with the value that
 * came last. Objects are written straight to the output as they are parsed
 * (there is no tree), so the offsets of their members' names are recorded
 * on a stack in a work buffer, and once an object is complete its
 * duplicates are squeezed out of the output in place.
 *
 * Names are compared in their serialized form. That is exact because the
 * serializer (json_str) is canonical: two names that decode to the same
 * bytes are always written the same way. */
#ifndef JSON_MEMBERS_H
#define JSON_MEMBERS_H

#include <stddef.h>

#include "http/sbuf.h"

/* Records a member whose name starts (at its '"') at offset off of the
 * output. JSON_OK or JSON_NOMEM. */
int json_members_push(sbuf *work, size_t off);

/* The object's members were recorded from work->len == mark on; they span
 * base[first member .. *end), written compactly ("name":value,...). Removes
 * every member whose name occurs again later, moving the rest down, and
 * updates *end. work->len is left at mark. JSON_OK or JSON_NOMEM. */
int json_members_dedup(char *base, size_t *end, sbuf *work, size_t mark);

#endif
