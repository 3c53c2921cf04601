/* test/unit/acl_journal.c: the grant journal's line format (lib/journal.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

static int parse(const char *text, ows__jstate *st)
{
	return ows__jstate_parse(text, strlen(text), st, NULL);
}

int main(void)
{
	ows__jstate st;
	char *g = ows__jline_grant("owsandbox-closed", 998, 1000, OWS_ACCESS_RW,
				   "/home/p/my project\n%", "/home/p");
	ok(g && strcmp(g, "G owsandbox-closed 998 1000 rw /home/p/my%20project%0A%25 /home/p\n") == 0,
	   "a grant line percent-encodes spaces, newlines and '%%'");
	char *text = ows__asprintf(NULL, "owsj1 1000\n%s", g);
	is_int(parse(text, &st), 0, "a journal parses");
	ok(st.has_header && st.owner == 1000, "the header names the owner");
	is_int(st.ngrants, 1, "one active grant");
	is_str(st.grants[0].path, "/home/p/my project\n%", "the path round-trips");
	is_str(st.grants[0].home, "/home/p", "the home round-trips");
	ok(st.grants[0].access == OWS_ACCESS_RW && st.grants[0].acct_uid == 998 &&
	   st.grants[0].person_uid == 1000, "access and uids round-trip");
	ows__jstate_free(&st);
	free(text);

	char *r = ows__jline_revoke(998, "/home/p/my project\n%");
	text = ows__asprintf(NULL, "owsj1 1000\n%s%s", g, r);
	parse(text, &st);
	is_int(st.ngrants, 0, "an R line ends the grant");
	ows__jstate_free(&st);
	free(text);

	char *g2 = ows__jline_grant("acct", 997, 1000, OWS_ACCESS_RO, "/home/p/a", NULL);
	char *g3 = ows__jline_grant("acct", 997, 1000, OWS_ACCESS_RW, "/home/p/a", NULL);
	text = ows__asprintf(NULL, "owsj1 1000\n%s%s%sG torn line", g2, g3, g);
	parse(text, &st);
	is_int(st.ngrants, 2, "a second grant of a path replaces the first; a torn last line is ignored");
	ok(st.ngrants == 2 && st.grants[0].access == OWS_ACCESS_RW && st.grants[0].home == NULL,
	   "the last grant gives the access; no home is NULL");
	ows__jstate_free(&st);
	free(text);

	ows__jpre p1 = {.type = 'a', .dev = 2049, .ino = 42, .mask = 4, .person_added = 0, .acct_uid = 997};
	ows__jpre p2 = {.type = 'a', .dev = 2049, .ino = 42, .mask = 7, .person_added = 0, .acct_uid = 997};
	ows__jpre p3 = {.type = 'd', .dev = 2049, .ino = 42, .mask = -1, .person_added = 1, .acct_uid = 997};
	char *l1 = ows__jline_pre(&p1), *l2 = ows__jline_pre(&p2), *l3 = ows__jline_pre(&p3);
	is_str(l3, "P d 2049 42 - 1 997\n", "a P line without a mask");
	text = ows__asprintf(NULL, "owsj1 1000\n%s%s%sP x junk\nR nonsense\n", l1, l3, l2);
	is_int(parse(text, &st), 0, "bad lines are skipped");
	const ows__jpre *f = ows__jstate_find_pre(&st, 'a', 2049, 42, 997);
	ok(f && f->mask == 4, "the first P record of a node wins (the state before any grant)");
	f = ows__jstate_find_pre(&st, 'd', 2049, 42, 997);
	ok(f && f->mask == -1 && f->person_added, "the default record is found on its own");
	ok(!ows__jstate_find_pre(&st, 'a', 2049, 43, 997), "no record for another inode");
	ok(!ows__jstate_find_pre(&st, 'a', 2049, 42, 996), "no record for another account");
	ows__jstate_free(&st);
	free(text);

	is_int(parse("owsj1 1000\nG acct 997 1000 rw relative -\nG acct 997 1000 rw /a%00b -\n", &st), 0,
	       "relative paths and embedded NULs are refused");
	is_int(st.ngrants, 0, "so nothing is granted by them");
	ows__jstate_free(&st);

	free(g);
	free(r);
	free(g2);
	free(g3);
	free(l1);
	free(l2);
	free(l3);
	return done_testing();
}
