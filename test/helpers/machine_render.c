/*
 * Prints what machine setup renders, for golden-file tests:
 *   machine_render nft TABLE UID
 *   machine_render ini-set FILE SECTION KEY VALUE|-     ("-" removes the key)
 *   machine_render check CONFIG      what ows__machine_check() tells the provider
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"
#include "record.h"

int main(int argc, char **argv)
{
	ows_error err;
	ows_error_clear(&err);
	char *out = NULL;
	int rc = OWS_EINVAL;
	if (argc == 4 && strcmp(argv[1], "nft") == 0) {
		rc = ows__nft_render(argv[2], (uid_t)strtoul(argv[3], NULL, 10), &out, &err);
	} else if (argc == 6 && strcmp(argv[1], "ini-set") == 0) {
		char *in = NULL;
		rc = ows__read_file(argv[2], &in, NULL, &err);
		if (rc == OWS_ENOTFOUND)
			rc = 0;
		if (rc == 0)
			rc = ows__ini_set(in, argv[3], argv[4], strcmp(argv[5], "-") ? argv[5] : NULL,
					  &out, &err);
		free(in);
	} else if (argc == 3 && strcmp(argv[1], "check") == 0) {
		ows_config *config = NULL;
		struct ows__machine m;
		rc = ows_config_load(argv[2], &config, &err);
		if (rc == 0)
			rc = ows__machine_check(config, &m, &err);
		ows_config_free(config);
		if (rc < 0) {
			printf("%s\t%s\t%s\n", ows_err_name(rc), err.what, err.hint);
			return 1;
		}
		printf("ok closed=%u open=%u group=%u launcher=%s journal=%s proved=%d\n",
		       (unsigned)m.closed_uid, (unsigned)m.open_uid, (unsigned)m.group_gid, m.launcher,
		       m.journal_dir, m.proved);
		return 0;
	} else {
		fprintf(stderr, "usage: machine_render nft TABLE UID | ini-set FILE SECTION KEY VALUE\n");
		return 2;
	}
	if (rc < 0) {
		fprintf(stderr, "machine_render: %s: %s\n", err.what, err.where);
		return 1;
	}
	fputs(out, stdout);
	free(out);
	return 0;
}
