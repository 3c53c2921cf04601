/*
 * Prints what machine setup renders, for golden-file tests:
 *   machine_render nft TABLE UID
 *   machine_render ini-set FILE SECTION KEY VALUE|-     ("-" removes the key)
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
