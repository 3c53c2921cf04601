/*
 * The `direct` provider on Windows: no wall.  Commands run as the host
 * runs them, with the same minimal environment, every event saying
 * "enforcement": "none" -- but still in a job of the session's own, so
 * that every process they start ends with the session.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "win.h"

typedef struct direct_impl {
	ows__win_base base; /* first: the shared wait and kill find it there */
	char *dir;
} direct_impl;

static int direct_open(ows_session *s, const ows_policy *policy, const ows_config *config,
		       ows_error *err)
{
	int rc;
	direct_impl *d = ows__calloc(1, sizeof(*d), err);
	if (!d)
		return OWS_ENOMEM;
	char tmpbase[MAX_PATH + 1];
	DWORD n = GetTempPathA(sizeof(tmpbase), tmpbase);
	if (n == 0 || n > MAX_PATH) {
		free(d);
		return ows__fail_win(err, 0, GetLastError(), "GetTempPath", NULL,
				     "cannot find the temporary folder");
	}
	const char *base = config->private_root ? config->private_root : tmpbase;
	size_t bl = strlen(base);
	d->dir = ows__asprintf(err, "%s%sowsandbox-%s", base,
			       bl && ows__plat_is_sep(base[bl - 1]) ? "" : "\\", s->id);
	ows__strv paths = {0};
	rc = d->dir ? ows__session_layout(s, policy, d->dir, '\\', getenv("USERNAME"), "direct",
					  &paths, err)
		    : OWS_ENOMEM;
	const char *home = rc == 0 ? paths.v[0] : NULL, *tmp = rc == 0 ? paths.v[1] : NULL,
		   *cache = rc == 0 ? paths.v[2] : NULL;
	if (rc == 0 && ((rc = ows__win_mkdir_p(home, err)) < 0 ||
			(rc = ows__win_mkdir_p(tmp, err)) < 0 || (rc = ows__win_mkdir_p(cache, err)) < 0))
		goto out;
	if (rc == 0) {
		/* Windows programs look for these names, not the POSIX ones. */
		ows__strv_pushf(&s->env, err, "USERPROFILE=%s", home);
		ows__strv_pushf(&s->env, err, "TEMP=%s", tmp);
		ows__strv_pushf(&s->env, err, "TMP=%s", tmp);
		ows__strv_pushf(&s->env, err, "LOCALAPPDATA=%s", cache);
		const char *sr = getenv("SystemRoot");
		if (sr)
			ows__strv_pushf(&s->env, err, "SystemRoot=%s", sr);
	}
	if (rc == 0)
		rc = ows__job_create(policy, &d->base.job, err);
	if (rc < 0)
		goto out;
	s->private_dir = ows__strdup(d->dir, err);
	ows__check none = {.name = "wall", .detail = "direct: no wall; asked for by name", .passed = 1};
	s->proof_json = ows__proof_json("direct", ows__net_name(s->net), &none, 1, NULL);
	if (!s->default_cwd || !s->private_dir || !s->proof_json)
		rc = OWS_ENOMEM;
out:
	ows__strv_free(&paths);
	if (rc < 0) {
		ows__win_base_close(&d->base);
		if (d->dir)
			ows__win_rmtree(d->dir, NULL);
		free(d->dir);
		free(d);
		return rc;
	}
	s->enforcement = "none";
	s->impl = d;
	return 0;
}

static int direct_spawn(ows_session *s, ows_proc *proc, const char *const argv[],
			char *const envp[], const char *cwd, const int stdio[3], ows_error *err)
{
	direct_impl *d = s->impl;
	HANDLE h;
	DWORD pid;
	int rc = ows__win_spawn_in_job(d->base.job, argv, envp, cwd, stdio, &h, &pid, err);
	if (rc < 0)
		return rc;
	proc->pid = (int)pid;
	return ows__win_proc_put(s, proc, h, err);
}

static int direct_close(ows_session *s, ows_error *err)
{
	direct_impl *d = s->impl;
	if (!d)
		return 0;
	/* Closing the job kills every process in it, daemons included. */
	ows__win_proc_collect(s);
	ows__win_base_close(&d->base);
	int rc = ows__win_rmtree(d->dir, err);
	free(d->dir);
	free(d);
	s->impl = NULL;
	return rc;
}

const ows__provider ows__direct_provider = {
	.name = "direct",
	.open = direct_open,
	.spawn = direct_spawn,
	.wait = ows__win_proc_wait,
	.kill = ows__win_proc_kill,
	.stop = ows__win_proc_stop,
	.close = direct_close,
};
