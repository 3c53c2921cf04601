/*
 * The run call's parts that need no session: a captured stream's cap and
 * streaming (ows__sink_put), and the JSON form's refusals, which come before
 * any session is touched.  The call itself: test/sh/run_call.sh.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal.h"
#include "tap.h"

struct seen {
	char buf[64];
	size_t len;
	int stream;
};

static void collect(void *ctx, int stream, const char *data, size_t len)
{
	struct seen *s = ctx;
	if (s->len + len <= sizeof(s->buf)) {
		memcpy(s->buf + s->len, data, len);
		s->len += len;
	}
	s->stream = stream;
}

static void test_sink(void)
{
	struct seen seen = {0};
	ows__sink k = {.stream = 2, .limit = 5, .fn = collect, .ctx = &seen};
	ows__sink_put(&k, "abc", 3);
	ok(k.len == 3 && strcmp(k.buf, "abc") == 0 && !k.truncated, "under the cap: kept whole");
	ows__sink_put(&k, "defg", 4);
	ok(k.len == 5 && strcmp(k.buf, "abcde") == 0 && k.truncated, "past the cap: cut, truncated");
	ows__sink_put(&k, "h", 1);
	ok(k.len == 5 && k.truncated, "and nothing more kept");
	ok(seen.len == 8 && memcmp(seen.buf, "abcdefgh", 8) == 0 && seen.stream == 2,
	   "the callback got every byte, in order, with its stream");
	ows__sink_put(&k, "", 0);
	ok(seen.len == 8, "an empty put calls nothing");
	free(k.buf);

	ows__sink z = {.stream = 1, .limit = 10};
	ows__sink_put(&z, "a\0b", 3);
	ok(z.len == 3 && memcmp(z.buf, "a\0b", 4) == 0, "NUL bytes kept, and a NUL after them");
	free(z.buf);
}

/* The error object of a refused request, and its return code. */
static void refused(const char *request, const char *where, const char *what)
{
	char *resp = NULL;
	ows_error e;
	ows_error_clear(&e);
	int rc = ows_session_run_json(NULL, request, &resp, &e);
	json_t *j = resp ? json_loads(resp, 0, NULL) : NULL;
	json_t *eo = json_object_get(j, "error");
	const char *w = json_string_value(json_object_get(eo, "where"));
	ok(rc == OWS_EINVAL && eo && json_integer_value(json_object_get(eo, "code")) == rc &&
	   w && strstr(w, where) && strcmp(e.where, w) == 0,
	   "%s: OWS_EINVAL at %s, in the response and in err (%s)", what, where, resp ? resp : "NULL");
	json_decref(j);
	ows_free(resp);
}

static void test_json_refusals(void)
{
	refused("{\"argv\": [\"a\", \"b\\u0000c\"]}", "argv[1]", "a NUL in an argument");
	refused("{\"argv\": [\"a\"], \"env\": {\"X\": \"\\u0000\"}}", "env.X", "a NUL in a value");
	refused("{\"argv\": [\"a\"], \"env\": {\"1X\": \"v\"}}", "env.1X", "a bad variable name");
	refused("{\"argv\": [\"a\"], \"env\": [\"X=v\"]}", "env", "env not an object");
	refused("{\"argv\": [\"a\"], \"cwd\": 5}", "cwd", "cwd not a string");
	refused("{\"argv\": \"a\"}", "argv", "argv not an array");
	refused("{\"argv\": [\"a\"], \"argv\": [\"b\"]}", "line 1", "a duplicate key");
	refused("not json", "line 1", "not JSON");
	refused("", "line 1", "empty");
	refused("{\"argv\": [\"a\"], \"output_limit\": 1.5}", "output_limit", "a fraction");
	refused("{\"argv\": [\"a\"], \"timeout_ms\": 99999999999}", "timeout_ms", "a timeout past int");
	refused("{\"argv\": [\"a\"], \"input\": 3}", "input", "input not a string");
	refused("{\"argv\": [\"a\"]}", "", "a valid request with a NULL session");

	char *resp = (char *)1;
	ok(ows_session_run_json(NULL, NULL, &resp, NULL) == OWS_EINVAL && resp &&
	   strstr(resp, "request_json"), "a NULL request: the error object names it");
	ows_free(resp);
	ok(ows_session_run_json(NULL, "{}", NULL, NULL) == OWS_EINVAL, "a NULL response pointer");
}

static void test_options(void)
{
	ows_run_options o;
	memset(&o, 0x5a, sizeof(o));
	ows_run_options_init(&o);
	ok(o.size == sizeof(o) && !o.cwd && !o.env && !o.input && !o.input_len && !o.timeout_ms &&
	   !o.output_limit && !o.on_output && !o.output_ctx, "options start at their defaults");
	ows_run_options_init(NULL);
	ows_run_result_free(NULL);
	ok(1, "NULL options and NULL result are fine");
	ows_run_result *r = (ows_run_result *)1;
	const char *argv[] = {"true", NULL};
	ok(ows_session_run(NULL, argv, NULL, &r, NULL) == OWS_EINVAL && r == NULL,
	   "a NULL session: OWS_EINVAL, *out NULL");
}

int main(void)
{
	test_sink();
	test_json_refusals();
	test_options();
	return done_testing();
}
