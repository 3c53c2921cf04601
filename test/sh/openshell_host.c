/* openshell_host FOLDER SITE: an allowlist session under the openshell provider (test/sh/openshell.sh
 * drives it against the stand-in), a site added while it runs, then closed.  Prints
 * "allow=RC close=RC" and any error. */
#include <stdio.h>

#include "owsandbox.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	ows_error err;
	ows_error_clear(&err);
	ows_policy *p = NULL;
	ows_session *s = NULL;
	int rc = ows_policy_new(&p, &err);
	if (rc == 0)
		rc = ows_policy_set_provider(p, "openshell", &err);
	if (rc == 0)
		rc = ows_policy_add_folder(p, argv[1], OWS_ACCESS_RW, &err);
	if (rc == 0) /* a site is for the allow list; under none it is refused */
		rc = ows_policy_set_network(p, OWS_NET_ALLOWLIST, &err);
	if (rc == 0)
		rc = ows_session_open(p, NULL, NULL, &s, &err);
	ows_policy_free(p);
	if (rc != 0) {
		printf("open=%d %s\n", rc, err.what);
		return 1;
	}
	int arc = ows_session_allow_site(s, argv[2], &err);
	if (arc != 0)
		printf("allow error: %s\n", err.what);
	int crc = ows_session_close(s, &err);
	printf("allow=%d close=%d\n", arc, crc);
	return arc || crc;
}
