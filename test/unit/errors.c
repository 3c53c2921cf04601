/* The error model: every code has a name and a text; the first error wins. */
#include <string.h>

#include "internal.h"
#include "tap.h"

/* The escaper: what a terminal acts on is written out, everything else kept. */
static void escapes(void)
{
	static const struct {
		const char *in, *out, *why;
	} cases[] = {
		{"/home/p/plain path", "/home/p/plain path", "plain text is kept"},
		{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		 "UTF-8 letters, the euro sign and an emoji are kept"},
		{"a\x1b]52;c;ZXZpbA==\x07" "b", "a\\x1b]52;c;ZXZpbA==\\x07b", "an OSC 52 clipboard write"},
		{"\x1b]0;title\x1b\\", "\\x1b]0;title\\x1b\\", "an OSC 0 title with ST"},
		{"x\nowsbx: forged", "x\\x0aowsbx: forged", "a newline cannot start a forged line"},
		{"cr\rtab\tdel\x7f", "cr\\x0dtab\\x09del\\x7f", "CR, TAB and DEL"},
		{"c1 \xc2\x9b" "31m \xc2\x9d" "0;t", "c1 \\xc2\\x9b31m \\xc2\\x9d0;t", "C1 CSI and OSC in UTF-8"},
		{"\xc2\xa0nbsp", "\xc2\xa0nbsp", "U+00A0 is no control: kept"},
		{"raw \x9b\x80", "raw \\x9b\\x80", "raw C1 bytes (not UTF-8)"},
		{"over \xc0\x8a \xe0\x80\x8a", "over \\xc0\\x8a \\xe0\\x80\\x8a", "overlong forms"},
		{"cut \xe2\x82", "cut \\xe2\\x82", "a cut character"},
		{"sur \xed\xa0\x80", "sur \\xed\\xa0\\x80", "a UTF-16 surrogate"},
	};
	char out[128], again[128];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		is_str(ows_text_escape(out, sizeof(out), cases[i].in), cases[i].out, "escape: %s", cases[i].why);
		is_str(ows_text_escape(again, sizeof(again), out), out, "... and escaping again changes nothing");
	}
	is_str(ows_text_escape(out, 7, "ab\x1b" "cd"), "ab\\x1b", "cut at a whole escape");
	is_str(ows_text_escape(out, 6, "ab\x1b" "cd"), "ab", "never half an escape");
	is_str(ows_text_escape(out, 6, "ab\xe2\x82\xac"), "ab\xe2\x82\xac", "a character that fits is kept");
	is_str(ows_text_escape(out, 6, "abc\xe2\x82\xac"), "abc", "never half a character");
	is_str(ows_text_escape(out, sizeof(out), NULL), "", "NULL is empty");
	ows_error err;
	ows_error_clear(&err);
	ows__fail(&err, OWS_EINVAL, 0, "/h/\x1b]52;c;eA==\x07", "x\ny", "bad \x1b[2J%s", "\xc2\x9b");
	is_str(err.what, "bad \\x1b[2J\\xc2\\x9b", "an error's what is escaped");
	is_str(err.where, "/h/\\x1b]52;c;eA==\\x07", "its where");
	is_str(err.hint, "x\\x0ay", "and its hint");
}

int main(void)
{
	for (int code = 0; code >= OWS_ENOSYS; code--) {
		ok(strcmp(ows_err_name(code), "OWS_E?") != 0, "code %d has a name (%s)", code,
		   ows_err_name(code));
		ok(strcmp(ows_strerror(code), "unknown error") != 0, "and a text");
	}
	is_str(ows_err_name(-999), "OWS_E?", "an unknown code says so");
	ows_error err;
	ows_error_clear(&err);
	is_int(ows__fail(&err, OWS_EINVAL, 0, "first", "fix it", "first %d", 1), OWS_EINVAL,
	       "fail returns its code");
	ows__fail(&err, OWS_ESYS, 5, "second", NULL, "second");
	is_str(err.where, "first", "the first error wins");
	is_str(err.what, "first 1", "formatted");
	is_str(err.hint, "fix it", "with its hint");
	ows__fail(NULL, OWS_EINVAL, 0, NULL, NULL, "no struct");
	ok(1, "a NULL error struct is fine");
	escapes();
	is_str(ows_version(), OWS_VERSION, "version");
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", OWS_VERSION_MAJOR, OWS_VERSION_MINOR,
		 OWS_VERSION_PATCH);
	is_str(ows_version(), want, "the version is MAJOR.MINOR.PATCH of the header's macros");
	return done_testing();
}
