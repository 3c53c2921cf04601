/*
 * The closed account's firewall: an nftables table of our own, keyed on the
 * account's uid.  Rendered in the form `nft list table` prints, so that the
 * table the kernel holds can be compared with the one setup loaded.
 *
 * Why these rules:
 *  - Only packets of the closed account's sockets jump to `closed`.  A SYN-ACK
 *    of any listener is sent from a request socket whose uid nft cannot read;
 *    keying the jump on the uid (rather than rejecting "not the uid") leaves
 *    everyone else's traffic alone.
 *  - `ct direction reply` lets a server the account runs answer connections
 *    made to it; it cannot open one.
 *  - Reject, never drop: a drop makes connect() hang about two minutes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linux/linux.h"

static const char NFT[] = "/usr/sbin/nft";

int ows__nft_render(const char *table, uid_t closed_uid, char **out, ows_error *err)
{
	*out = NULL;
	if (!ows__name_is_safe(table))
		return ows__fail(err, OWS_EINVAL, 0, table, NULL, "unsafe nftables table name");
	*out = ows__asprintf(err,
			     "table inet %s {\n"
			     "\tchain output {\n"
			     "\t\ttype filter hook output priority filter; policy accept;\n"
			     "\t\tmeta skuid %u jump closed\n"
			     "\t}\n"
			     "\n"
			     "\tchain closed {\n"
			     "\t\toifname \"lo\" ip daddr 127.0.0.1 tcp dport %d-%d accept\n"
			     "\t\tmeta l4proto tcp ct direction reply accept\n"
			     "\t\tmeta l4proto tcp reject with tcp reset\n"
			     "\t\treject with icmpx admin-prohibited\n"
			     "\t}\n"
			     "}\n",
			     table, (unsigned)closed_uid, OWS__PROXY_PORT_FIRST, OWS__PROXY_PORT_LAST);
	return *out ? 0 : OWS_ENOMEM;
}

int ows__nft_load(const char *table, const char *ruleset, ows_error *err)
{
	if (!ows__name_is_safe(table))
		return ows__fail(err, OWS_EINVAL, 0, table, NULL, "unsafe nftables table name");
	/* nft 1.0.6 has no `destroy`, and loading a file appends: add, then delete, then load. */
	char *file = ows__asprintf(err, "add table inet %s\ndelete table inet %s\n%s", table,
				   table, ruleset);
	if (!file)
		return OWS_ENOMEM;
	const char *argv[] = {NFT, "-f", "-", NULL};
	int rc = ows__cmd_run(argv, file, NULL, err);
	free(file);
	return rc;
}

int ows__nft_list(const char *table, char **out, ows_error *err)
{
	*out = NULL;
	if (!ows__name_is_safe(table))
		return ows__fail(err, OWS_EINVAL, 0, table, NULL, "unsafe nftables table name");
	char *tables = NULL;
	const char *list_argv[] = {NFT, "list", "tables", "inet", NULL};
	int rc = ows__cmd_run(list_argv, NULL, &tables, err);
	if (rc < 0)
		return rc;
	char want[64];
	snprintf(want, sizeof(want), "table inet %s\n", table);
	bool found = strncmp(tables, want, strlen(want)) == 0;
	char *nl_want = ows__asprintf(err, "\n%s", want);
	found = found || (nl_want && strstr(tables, nl_want));
	free(nl_want);
	free(tables);
	if (!found)
		return OWS_ENOTFOUND;
	const char *argv[] = {NFT, "list", "table", "inet", table, NULL};
	return ows__cmd_run(argv, NULL, out, err);
}

int ows__nft_delete(const char *table, ows_error *err)
{
	if (!ows__name_is_safe(table))
		return ows__fail(err, OWS_EINVAL, 0, table, NULL, "unsafe nftables table name");
	char *file = ows__asprintf(err, "add table inet %s\ndelete table inet %s\n", table, table);
	if (!file)
		return OWS_ENOMEM;
	const char *argv[] = {NFT, "-f", "-", NULL};
	int rc = ows__cmd_run(argv, file, NULL, err);
	free(file);
	return rc;
}
