/*
 * The run call: argv in the session, its output captured, its result as one
 * value; and the same as JSON for hosts that speak only JSON through the C
 * ABI.  The pipes, the poll loop and the timeout are the platform's
 * (ows__run_exchange, lib/posix/run_io.c); what is kept, streamed and
 * reported is here.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mbedtls/base64.h>

#include "internal.h"

#define RUN_DEFAULT_LIMIT ((size_t)1 << 20)

void ows_run_options_init(ows_run_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

void ows_run_result_free(ows_run_result *r)
{
	if (!r)
		return;
	free(r->out);
	free(r->err);
	free(r->blocked_json);
	free(r);
}

/* Room for `want` bytes and the NUL after them; false when out of memory. */
static bool sink_reserve(ows__sink *k, size_t want)
{
	if (want < k->cap)
		return true;
	size_t cap = k->cap ? k->cap : 4096;
	while (cap <= want)
		cap = cap > SIZE_MAX / 2 ? want + 1 : cap * 2;
	char *b = realloc(k->buf, cap);
	if (!b)
		return false;
	k->buf = b;
	k->cap = cap;
	return true;
}

void ows__sink_put(ows__sink *k, const char *data, size_t n)
{
	if (n == 0)
		return;
	if (k->fn)
		k->fn(k->ctx, k->stream, data, n);
	size_t room = k->limit - k->len;
	size_t keep = n < room ? n : room;
	if (keep < n)
		k->truncated = true;
	if (keep == 0 || k->failed)
		return;
	if (!sink_reserve(k, k->len + keep)) {
		k->failed = true;
		return;
	}
	memcpy(k->buf + k->len, data, keep);
	k->len += keep;
	k->buf[k->len] = '\0';
}

static void sinks_init(ows__run_io *io, const ows_run_options *o)
{
	for (int i = 0; i < 2; i++) {
		ows__sink *k = &io->sink[i];
		memset(k, 0, sizeof(*k));
		k->stream = i + 1;
		k->limit = o->output_limit ? o->output_limit : RUN_DEFAULT_LIMIT;
		if (k->limit == SIZE_MAX)
			k->limit--; /* room for the NUL */
		k->fn = o->on_output;
		k->ctx = o->output_ctx;
	}
}

/* The stream's bytes, NUL-terminated, moved out of the sink; NULL when out of memory. */
static char *sink_take(ows__sink *k)
{
	if (!sink_reserve(k, k->len))
		return NULL;
	k->buf[k->len] = '\0';
	char *b = k->buf;
	k->buf = NULL;
	return b;
}

static int result_fill(ows_run_result *r, ows_session *s, ows__run_io *io, ows_error *err)
{
	r->exit_code = io->exit_code;
	r->timed_out = io->timed_out;
	r->wall_ms = io->wall_ms;
	r->out_len = io->sink[0].len;
	r->out_truncated = io->sink[0].truncated;
	r->err_len = io->sink[1].len;
	r->err_truncated = io->sink[1].truncated;
	r->enforcement = ows_session_enforcement(s);
	r->out = sink_take(&io->sink[0]);
	r->err = sink_take(&io->sink[1]);
	if (!r->out || !r->err)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	return ows_proc_blocked_json(io->proc, &r->blocked_json, err);
}

int ows_session_run(ows_session *s, const char *const argv[], const ows_run_options *opts,
		    ows_run_result **out, ows_error *err)
{
	ows_run_options defaults;
	if (out)
		*out = NULL;
	if (!s || !argv || !argv[0] || !out)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "give a command to run",
				 "session, argv or out is NULL or empty");
	if (!opts) {
		ows_run_options_init(&defaults);
		opts = &defaults;
	} else if (opts->size < sizeof(*opts)) {
		return ows__fail(err, OWS_EINVAL, 0, "ows_run_options.size",
				 "call ows_run_options_init() first", "options struct too small");
	}
	if (!opts->input && opts->input_len)
		return ows__fail(err, OWS_EINVAL, 0, "ows_run_options.input",
				 "set input, or input_len to 0", "input_len without input");
	/* Entered for the whole call: a close from another thread ends the command, then waits. */
	int rc = ows__session_enter(s, err);
	if (rc < 0)
		return rc;
	ows_run_result *r = ows__calloc(1, sizeof(*r), err);
	if (!r) {
		ows__session_leave(s);
		return OWS_ENOMEM;
	}
	ows__run_io io = {.opts = opts};
	sinks_init(&io, opts);
	rc = ows__run_exchange(s, argv, &io, err);
	if (rc == 0)
		rc = result_fill(r, s, &io, err);
	if (rc == 0 && (io.sink[0].failed || io.sink[1].failed))
		rc = ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL,
			       "out of memory for the command's output");
	ows_proc_free(io.proc);
	ows__session_leave(s);
	free(io.sink[0].buf);
	free(io.sink[1].buf);
	if (rc < 0) {
		ows_run_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* ------------------------------------------------------------------ JSON */

/* What a JSON request holds, as ows_session_run() takes it. */
struct run_request {
	ows__strv argv;
	ows__strv env;
	char *cwd;
	unsigned char *input;
	size_t input_len;
	bool has_input;
	ows_run_options opts;
};

static void request_free(struct run_request *q)
{
	ows__strv_free(&q->argv);
	ows__strv_free(&q->env);
	free(q->cwd);
	free(q->input);
}

static int bad_key(ows_error *err, const char *key, const char *hint, const char *what)
{
	return ows__fail(err, OWS_EINVAL, 0, key, hint, "run request: %s", what);
}

/* A string that a C string can carry: no NUL inside. */
static int c_string(json_t *v, const char *key, const char **out, ows_error *err)
{
	if (!json_is_string(v))
		return bad_key(err, key, "give a string", "not a string");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return bad_key(err, key,
			       "drop the NUL byte; data with NULs goes in \"input_b64\"",
			       "holds a NUL byte, which a command's argument, folder or "
			       "environment cannot carry");
	*out = json_string_value(v);
	return 0;
}

static int parse_argv(struct run_request *q, json_t *v, ows_error *err)
{
	if (!json_is_array(v) || json_array_size(v) == 0)
		return bad_key(err, "argv", "give the command as [\"name\", \"arg\", ...]",
			       "argv is not a non-empty array of strings");
	for (size_t i = 0; i < json_array_size(v); i++) {
		char key[32];
		const char *s;
		snprintf(key, sizeof(key), "argv[%zu]", i);
		int rc = c_string(json_array_get(v, i), key, &s, err);
		if (rc == 0)
			rc = ows__strv_push(&q->argv, s, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_env(struct run_request *q, json_t *v, ows_error *err)
{
	const char *name;
	json_t *val;
	if (!json_is_object(v))
		return bad_key(err, "env", "give {\"NAME\": \"VALUE\"}", "env is not an object");
	json_object_foreach(v, name, val) {
		const char *s;
		char key[300];
		snprintf(key, sizeof(key), "env.%s", name);
		if (!ows__env_name_is_valid(name, strlen(name)))
			return bad_key(err, key, "use letters, digits and '_', not starting with a digit",
				       "not a variable name");
		int rc = c_string(val, key, &s, err);
		if (rc == 0)
			rc = ows__strv_pushf(&q->env, err, "%s=%s", name, s);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_b64(struct run_request *q, json_t *v, ows_error *err)
{
	if (!json_is_string(v))
		return bad_key(err, "input_b64", "give base64 text", "input_b64 is not a string");
	const unsigned char *src = (const unsigned char *)json_string_value(v);
	size_t slen = json_string_length(v), olen = 0;
	/* The first call only measures; it fails on a byte that is not base64. */
	int r = mbedtls_base64_decode(NULL, 0, &olen, src, slen);
	if (r != 0 && r != MBEDTLS_ERR_BASE64_BUFFER_TOO_SMALL)
		return bad_key(err, "input_b64", "encode the input as standard base64 (RFC 4648)",
			       "input_b64 is not base64");
	if (!(q->input = ows__calloc(1, olen + 1, err)))
		return OWS_ENOMEM;
	if (mbedtls_base64_decode(q->input, olen + 1, &q->input_len, src, slen) != 0)
		return bad_key(err, "input_b64", "encode the input as standard base64 (RFC 4648)",
			       "input_b64 is not base64");
	q->has_input = true;
	return 0;
}

static int parse_input(struct run_request *q, json_t *v, ows_error *err)
{
	if (!json_is_string(v))
		return bad_key(err, "input", "give text, or bytes as \"input_b64\"",
			       "input is not a string");
	/* Text may hold NULs (\u0000): they are bytes of the command's stdin. */
	size_t n = json_string_length(v);
	if (!(q->input = ows__calloc(1, n + 1, err)))
		return OWS_ENOMEM;
	memcpy(q->input, json_string_value(v), n);
	q->input_len = n;
	q->has_input = true;
	return 0;
}

static int parse_count(json_t *v, const char *key, json_int_t max, json_int_t *out,
		       ows_error *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return bad_key(err, key, "give a whole number, 0 or more",
			       "not a whole number in range");
	*out = json_integer_value(v);
	return 0;
}

static int parse_field(struct run_request *q, const char *key, json_t *v, ows_error *err)
{
	json_int_t n;
	int rc;
	if (strcmp(key, "argv") == 0)
		return parse_argv(q, v, err);
	if (strcmp(key, "env") == 0)
		return parse_env(q, v, err);
	if (strcmp(key, "input") == 0 || strcmp(key, "input_b64") == 0) {
		if (q->has_input)
			return bad_key(err, key, "give one of them",
				       "both \"input\" and \"input_b64\" given");
		return strcmp(key, "input") == 0 ? parse_input(q, v, err) : parse_b64(q, v, err);
	}
	if (strcmp(key, "cwd") == 0) {
		const char *s;
		if ((rc = c_string(v, key, &s, err)) < 0)
			return rc;
		return (q->cwd = ows__strdup(s, err)) ? 0 : OWS_ENOMEM;
	}
	if (strcmp(key, "timeout_ms") == 0) {
		if ((rc = parse_count(v, key, INT_MAX, &n, err)) == 0)
			q->opts.timeout_ms = (int)n;
		return rc;
	}
	if (strcmp(key, "output_limit") == 0) {
		if ((rc = parse_count(v, key, LLONG_MAX, &n, err)) == 0)
			q->opts.output_limit = (uint64_t)n > SIZE_MAX ? SIZE_MAX : (size_t)n;
		return rc;
	}
	return bad_key(err, key,
		       "use argv, cwd, env, input, input_b64, timeout_ms, output_limit",
		       "unknown key");
}

static int parse_request(const char *text, struct run_request *q, ows_error *err)
{
	json_error_t jerr;
	/* NULs are let through the parser so that each field can say where one is wrong. */
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (!root) {
		char where[64];
		snprintf(where, sizeof(where), "line %d, column %d", jerr.line, jerr.column);
		return ows__fail(err, OWS_EINVAL, 0, where, "send one JSON object",
				 "run request is not valid JSON: %s", jerr.text);
	}
	int rc = 0;
	const char *key;
	json_t *v;
	if (!json_is_object(root))
		rc = bad_key(err, "(request)", "send {\"argv\": [...]}", "not a JSON object");
	else if (!json_object_get(root, "argv"))
		rc = bad_key(err, "argv", "send {\"argv\": [...]}", "argv is missing");
	if (rc == 0)
		json_object_foreach(root, key, v) {
			if ((rc = parse_field(q, key, v, err)) < 0)
				break;
		}
	json_decref(root);
	if (rc == 0 && q->has_input) {
		q->opts.input = q->input;
		q->opts.input_len = q->input_len;
	}
	q->opts.cwd = q->cwd;
	q->opts.env = q->env.len ? (const char *const *)q->env.v : NULL;
	return rc;
}

/* Text when the bytes are UTF-8 (a truncated stream may end inside a character), else base64. */
static int put_stream(json_t *o, const char *key, const char *data, size_t len, bool truncated)
{
	json_t *s = json_stringn(data, len);
	for (size_t cut = 1; !s && truncated && cut <= 3 && cut <= len; cut++)
		s = json_stringn(data, len - cut);
	if (s)
		return json_object_set_new(o, key, s);
	size_t olen = 0;
	mbedtls_base64_encode(NULL, 0, &olen, (const unsigned char *)data, len);
	unsigned char *b = malloc(olen ? olen : 1);
	if (!b || mbedtls_base64_encode(b, olen ? olen : 1, &olen,
					(const unsigned char *)data, len) != 0) {
		free(b);
		return -1;
	}
	char b64key[32];
	snprintf(b64key, sizeof(b64key), "%s_b64", key);
	int rc = json_object_set_new(o, b64key, json_stringn((const char *)b, olen));
	free(b);
	return rc;
}

static char *response_of(const ows_run_result *r)
{
	json_t *blocked = json_loads(r->blocked_json, 0, NULL);
	json_t *o = json_pack("{s:i, s:b, s:b, s:b, s:I, s:o, s:s}", "exit_code", r->exit_code,
			      "timed_out", r->timed_out, "stdout_truncated", r->out_truncated,
			      "stderr_truncated", r->err_truncated, "wall_ms", (json_int_t)r->wall_ms,
			      "blocked", blocked ? blocked : json_array(), "enforcement",
			      r->enforcement);
	char *text = NULL;
	if (o && put_stream(o, "stdout", r->out, r->out_len, r->out_truncated) == 0 &&
	    put_stream(o, "stderr", r->err, r->err_len, r->err_truncated) == 0)
		text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

static char *error_response(int code, const ows_error *e)
{
	json_t *o = json_pack("{s:{s:i, s:s, s:s, s:s, s:s}}", "error", "code", code, "name",
			      ows_err_name(code), "what", e->what, "where", e->where, "hint",
			      e->hint);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return text;
}

int ows_session_run_json(ows_session *s, const char *request_json, char **response_json,
			 ows_error *err)
{
	ows_error local;
	ows_error *e = err ? err : &local;
	if (!err)
		ows_error_clear(&local);
	if (!response_json)
		return ows__fail(e, OWS_EINVAL, 0, "response_json", NULL, "response_json is NULL");
	*response_json = NULL;
	struct run_request q = {0};
	ows_run_options_init(&q.opts);
	ows_run_result *r = NULL;
	int rc = request_json ? parse_request(request_json, &q, e)
			      : ows__fail(e, OWS_EINVAL, 0, "request_json", "send {\"argv\": [...]}",
					  "request_json is NULL");
	if (rc == 0)
		rc = ows_session_run(s, (const char *const *)q.argv.v, &q.opts, &r, e);
	request_free(&q);
	if (rc == 0 && !(*response_json = response_of(r)))
		rc = ows__fail(e, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	ows_run_result_free(r);
	if (rc < 0) {
		*response_json = error_response(rc, e);
		return rc;
	}
	return 0;
}
