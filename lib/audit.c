/*
 * Session events as JSON lines: to a file the caller names and/or a callback.  Writes
 * what it is given and decides nothing; a failed write never stops the session.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "internal.h"
#include "platform.h"

int ows__audit_open(ows__audit *a, const ows_session_options *opts, ows_error *err)
{
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (!opts)
		return 0;
	a->fn = opts->on_event;
	a->ctx = opts->event_ctx;
	if (opts->events_path) {
		a->fd = ows__plat_open_append(opts->events_path);
		if (a->fd < 0)
			return ows__fail_sys(err, opts->events_path,
					     "check that its folder exists and is writable",
					     "cannot open the events file");
	}
	return 0;
}

json_t *ows__json_text(const char *s)
{
	size_t cap = 4 * strlen(s ? s : "") + 1;
	char *shown = malloc(cap);
	json_t *j = shown ? json_string(ows_text_escape(shown, cap, s)) : NULL;
	free(shown);
	return j;
}

void ows__audit_emit(ows__audit *a, const char *event, json_t *fields)
{
	if (!a || (a->fd < 0 && !a->fn)) {
		json_decref(fields);
		return;
	}
	json_t *obj = json_object();
	if (!obj) {
		json_decref(fields);
		return;
	}
	json_object_set_new(obj, "ts_ms", json_integer(ows__now_ms()));
	json_object_set_new(obj, "event", json_string(event));
	json_object_set_new(obj, "session", json_string(a->session));
	if (fields)
		json_object_update(obj, fields);
	json_decref(fields);
	/* Events carry paths and hosts the agent chose: past ASCII (C1 controls too) they are
	 * \u escapes, which a terminal showing the log does not act on. */
	char *line = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(obj);
	if (!line)
		return;
	if (a->fn)
		a->fn(a->ctx, line);
	if (a->fd >= 0) {
		size_t n = strlen(line);
		line[n] = '\n'; /* one write per event keeps lines whole under O_APPEND */
		(void)ows__plat_write_all(a->fd, line, n + 1);
	}
	free(line);
}

void ows__audit_close(ows__audit *a)
{
	if (a && a->fd >= 0) {
		close(a->fd);
		a->fd = -1;
	}
}
