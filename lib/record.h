/*
 * The setup record (`<state_dir>/setup.json`, lib/record.c), which every platform's
 * machine setup writes and its remove reads.  SHA-256, whole-file reads and writes and the
 * INI edit it once held are in lib/internal.h (lib/sha256.c, file.c, ini_edit.c).
 */
#ifndef OWS_RECORD_H
#define OWS_RECORD_H

#include <jansson.h>

/* internal.h's include guard stops before its end: include it only once. */
#ifndef OWS__HIDDEN
#include "internal.h"
#endif

#define OWS__RECORD_VERSION 1
#define OWS__RECORD_FILE "setup.json"

/*
 * Loads and checks the record in `state_dir`.  *out (a new reference) is
 * the record without its "checksum" member.  OWS_ENOTFOUND when there is
 * none; OWS_ESETUP when it cannot be parsed or its checksum does not match
 * (edited by hand, truncated or tampered with).
 */
OWS__HIDDEN int ows__record_load(const char *state_dir, json_t **out, ows_error *err);
/*
 * Writes `record` (borrowed) with a fresh "checksum" member: the SHA-256
 * of its compact, key-sorted serialization without that member.  The file
 * is 0644: it holds no secret, and people and the account provider read it.
 */
OWS__HIDDEN int ows__record_save(const char *state_dir, json_t *record, ows_error *err);
/* The checksum ows__record_save() would write, "sha256:<hex>". */
OWS__HIDDEN int ows__record_checksum(json_t *record, char out[72], ows_error *err);

#endif /* OWS_RECORD_H */
