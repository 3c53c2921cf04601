/*
 * The setup record (`<state_dir>/setup.json`) and the small pieces the
 * machine calls share on every platform: SHA-256, the record's checksum,
 * and a line-preserving INI edit for the machine's config file.
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

/* SHA-256 of a buffer, as 64 lower-case hex digits and a NUL. */
OWS__HIDDEN void ows__sha256_hex(const void *data, size_t len, char out[65]);
/* SHA-256 of a file's content, read without following a final symlink. */
OWS__HIDDEN int ows__sha256_file(const char *path, char out[65], ows_error *err);

/*
 * Reads a whole file (at most 1 MiB) into *out (caller frees), NUL-terminated;
 * *len gets its length when len is not NULL.  OWS_ENOTFOUND when absent.
 */
OWS__HIDDEN int ows__read_file(const char *path, char **out, size_t *len, ows_error *err);
/*
 * Replaces `path` atomically (temporary file, fsync, rename) with `data`,
 * mode `mode`, owned by whoever runs this.
 */
OWS__HIDDEN int ows__write_file(const char *path, const char *data, size_t len,
				unsigned mode, ows_error *err);

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

/*
 * Sets `key = value` in `[section]` of INI text `in`, keeping every other
 * line as it was; value NULL removes the key.  Appends the section when it
 * is missing.  *out is fresh (caller frees).
 */
OWS__HIDDEN int ows__ini_set(const char *in, const char *section, const char *key,
			     const char *value, char **out, ows_error *err);
/* The value of `key` in `[section]` of INI text, into buf; false when absent. */
OWS__HIDDEN bool ows__ini_get(const char *in, const char *section, const char *key,
			      char *buf, size_t len);

#endif /* OWS_RECORD_H */
