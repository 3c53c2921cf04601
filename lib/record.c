/*
 * The setup record (<state_dir>/setup.json): loaded and checked against its checksum,
 * saved with a fresh one.  What setup made is what the record says; remove undoes that.
 *
 * The checksum detects drift and hand edits of a file only root may write
 * (the state folder is root's); it is not a signature, and does not pretend
 * to stop root.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "record.h"

static char *record_path(const char *state_dir, ows_error *err)
{
	return ows__asprintf(err, "%s/%s", state_dir, OWS__RECORD_FILE);
}

int ows__record_checksum(json_t *record, char out[72], ows_error *err)
{
	json_t *copy = json_copy(record);
	if (!copy)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	json_object_del(copy, "checksum");
	char *text = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(copy);
	if (!text)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	char hex[65];
	ows__sha256_hex(text, strlen(text), hex);
	free(text);
	snprintf(out, 72, "sha256:%s", hex);
	return 0;
}

int ows__record_load(const char *state_dir, json_t **out, ows_error *err)
{
	*out = NULL;
	char *path = record_path(state_dir, err);
	if (!path)
		return OWS_ENOMEM;
	char *text = NULL;
	int rc = ows__read_file(path, &text, NULL, NULL);
	if (rc == OWS_ENOTFOUND) {
		rc = ows__fail(err, OWS_ENOTFOUND, ENOENT, path, "sudo owsbx machine sandbox setup",
			       "the machine is not set up for the account provider");
		goto out;
	}
	if (rc < 0) {
		rc = ows__fail(err, OWS_ESETUP, errno, path, "sudo owsbx machine sandbox setup",
			       "cannot read the setup record");
		goto out;
	}
	json_error_t jerr;
	json_t *rec = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	const char *sum = json_string_value(json_object_get(rec, "checksum"));
	char want[72];
	if (!json_is_object(rec) || !sum) {
		rc = ows__fail(err, OWS_ESETUP, 0, path, "sudo owsbx machine sandbox setup",
			       "the setup record is damaged (%s)",
			       rec ? "no checksum" : jerr.text);
	} else if ((rc = ows__record_checksum(rec, want, err)) == 0 && strcmp(want, sum) != 0) {
		rc = ows__fail(err, OWS_ESETUP, 0, path,
			       "someone edited the record: check the machine, then "
			       "sudo owsbx machine sandbox setup",
			       "the setup record does not match its checksum");
	} else if (rc == 0 && json_integer_value(json_object_get(rec, "version")) !=
				      OWS__RECORD_VERSION) {
		rc = ows__fail(err, OWS_ESETUP, 0, path, "sudo owsbx machine sandbox setup",
			       "the setup record has a version this build does not know");
	}
	if (rc < 0) {
		json_decref(rec);
		goto out;
	}
	json_object_del(rec, "checksum");
	*out = rec;
out:
	free(text);
	free(path);
	return rc;
}

int ows__record_save(const char *state_dir, json_t *record, ows_error *err)
{
	char sum[72];
	int rc = ows__record_checksum(record, sum, err);
	if (rc < 0)
		return rc;
	json_t *copy = json_copy(record);
	if (!copy)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	json_object_set_new(copy, "checksum", json_string(sum));
	char *text = json_dumps(copy, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(copy);
	char *path = record_path(state_dir, err);
	char *withnl = text && path ? ows__asprintf(err, "%s\n", text) : NULL;
	if (!withnl)
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	else
		rc = ows__write_file(path, withnl, strlen(withnl), 0644, err);
	free(withnl);
	free(text);
	free(path);
	return rc;
}
