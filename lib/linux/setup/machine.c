/*
 * Machine setup for the account provider: plan, setup, status, remove.
 *
 * Every item is one row of the table below: an inspect that says what is
 * there and how it stands against what setup wants, a step that lists the
 * change it would make and makes it when applying, and an undo
 * (machine_items.c).  The plan and the setup run the same steps, so what is
 * shown is what is done; status and the per-session check judge each item
 * by the same inspect, so what they report is what setup would change.  The
 * record is saved after every change: a setup cut short leaves a record
 * that says what it did, and `remove` or a second `setup` pick up from there.
 *
 * What setup makes (all names come from the machine's config, [account]):
 *   closed_user, open_user   useradd --system --user-group --no-create-home
 *                            --home-dir /nonexistent --shell /usr/sbin/nologin;
 *                            locked (no password), so nobody logs in as them
 *   group                    people allowed to start sandboxes; the person
 *                            who asked is added
 *   state_dir/               0755 root:root, holds setup.json (0644: no secret)
 *   state_dir/sandboxes/     0711 root:group: the launcher, as root, creates
 *                            each session's private folder there and hands
 *                            it to the account; nobody else may write in it,
 *                            the accounts may only pass through
 *   state_dir/journal/       1770 root:group: people journal their grants;
 *                            the accounts cannot see it
 *   launcher                 root:group 4750: only the group may run it
 *   launcher.conf            0644 root:root, beside the launcher: the six
 *                            numbers and the path it trusts (it parses no
 *                            JSON), rewritten whenever they change
 *   nft table inet <name>    the closed account's firewall (nft.c)
 *   the machine's config     [sandbox] provider = account, once proved
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "linux/linux.h"
#include "machine.h"
#include "platform.h"
#include "record.h"


/* ------------------------------------------------------------- context */

static const char *config_file(const ows_config *c)
{
	const char *p = ows_config_path(c);
	return p && *p ? p : OWS_CONFIG_DEFAULT_PATH;
}

/* "sudo owsbx machine sandbox setup [--config F] [--for-user P]" */
static void build_fix(char *buf, size_t len, const ows_config *c, const char *person,
		      const char *launcher_source)
{
	const char *cp = ows_config_path(c);
	int n = snprintf(buf, len, "sudo owsbx machine sandbox setup");
	if (cp && *cp && strcmp(cp, OWS_CONFIG_DEFAULT_PATH) != 0)
		n += snprintf(buf + n, len - (size_t)n, " --config %s", cp);
	if (person && *person)
		n += snprintf(buf + n, len - (size_t)n, " --for-user %s", person);
	if (launcher_source && *launcher_source)
		snprintf(buf + n, len - (size_t)n, " --launcher-source %s", launcher_source);
}

/* The person status and the plan talk about: --for-user, else who is behind sudo, else us. */
static void find_person(char *buf, size_t len, const char *for_user)
{
	buf[0] = '\0';
	if (for_user && *for_user) {
		snprintf(buf, len, "%s", for_user);
		return;
	}
	const char *sudo_user = getenv("SUDO_USER");
	if (geteuid() == 0 && getuid() == 0) {
		if (sudo_user && *sudo_user && strcmp(sudo_user, "root") != 0)
			snprintf(buf, len, "%s", sudo_user);
		return;
	}
	struct passwd *pw = getpwuid(getuid());
	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
}

/*
 * The record must describe what the config names: a renamed account, group,
 * table or path would make setup forget what it made, and remove miss it.
 */
static int same_names(mctx *m)
{
	json_t *r = m->rec;
	const ows_config *c = m->c;
	const struct { json_t *o; const char *key, *want, *what; } items[] = {
		{json_object_get(json_object_get(r, "accounts"), "closed"), "name", c->closed_user,
		 "closed_user"},
		{json_object_get(json_object_get(r, "accounts"), "open"), "name", c->open_user,
		 "open_user"},
		{json_object_get(r, "group"), "name", c->group, "group"},
		{json_object_get(r, "launcher"), "path", c->launcher, "launcher"},
		{json_object_get(r, "nft"), "table", c->nft_table, "nft_table"},
	};
	for (size_t i = 0; i < OWS__ARRAY_LEN(items); i++) {
		const char *had = jstr(items[i].o, items[i].key);
		if (had && strcmp(had, items[i].want) != 0)
			return ows__fail(m->err, OWS_ECONFIG, 0, items[i].what,
					 "put the old name back and run remove first, then set up "
					 "with the new one",
					 "the config's %s (%s) is not the one setup recorded (%s)",
					 items[i].what, items[i].want, had);
	}
	return 0;
}

static int ctx_init(mctx *m, const ows_config *c, const ows_setup_options *o, bool apply,
		    ows_error *err)
{
	memset(m, 0, sizeof(*m));
	m->c = c;
	m->err = err;
	m->apply = apply;
	m->root = geteuid() == 0;
	m->closed_uid = (uid_t)-1;
	m->group_gid = (gid_t)-1;
	ows_setup_options_init(&m->o);
	if (o) {
		if (o->size < offsetof(ows_setup_options, progress_ctx) + sizeof(void *))
			return ows__fail(err, OWS_EINVAL, 0, "ows_setup_options.size",
					 "call ows_setup_options_init() first",
					 "options struct too small");
		memcpy(&m->o, o, o->size < sizeof(m->o) ? o->size : sizeof(m->o));
		m->o.size = sizeof(m->o);
	}
	if (!c)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "load the machine's config first",
				 "config is NULL");
	if (!ows__name_is_safe(c->closed_user) || !ows__name_is_safe(c->open_user) ||
	    !ows__name_is_safe(c->group) || !ows__name_is_safe(c->nft_table) ||
	    strcmp(c->closed_user, c->open_user) == 0 || c->state_dir[0] != '/' ||
	    c->launcher[0] != '/')
		return ows__fail(err, OWS_ECONFIG, 0, ows_config_path(c),
				 "give two different account names and absolute paths in [account]",
				 "the machine's config names unusable accounts or paths");
	if (m->o.for_user && !ows__name_is_safe(m->o.for_user))
		return ows__fail(err, OWS_EINVAL, 0, m->o.for_user, NULL, "not a user name");
	find_person(m->person, sizeof(m->person), m->o.for_user);
	snprintf(m->config_file, sizeof(m->config_file), "%s", config_file(c));
	build_fix(m->fix, sizeof(m->fix), c, NULL, NULL);
	m->changes = json_array();
	m->notes = json_array();
	if (!m->changes || !m->notes)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");

	ows_error lerr;
	ows_error_clear(&lerr);
	int rc = ows__record_load(c->state_dir, &m->rec, &lerr);
	if (rc == OWS_ENOTFOUND) {
		m->rec = json_pack("{s:i}", "version", OWS__RECORD_VERSION);
		if (!m->rec)
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	} else if (rc < 0) {
		/* A damaged record cannot say what to undo: a person must look first. */
		if (err && !err->code)
			*err = lerr;
		return rc;
	}
	return same_names(m);
}

static void ctx_free(mctx *m)
{
	json_decref(m->rec);
	json_decref(m->changes);
	json_decref(m->notes);
}

/* --------------------------------------------------------------- items */

/*
 * What setup makes, in the order it makes it: each item needs those above
 * it (the folders and the launcher the group, the launcher's record and the
 * firewall the accounts' ids).  The config comes last, after the proof.
 */
const ows__item ows__machine_items[ITEM_COUNT] = {
	[ITEM_STATE_DIR] = {"state folder", "state folder", NULL, MODE_STATE, NULL,
			    ows__inspect_state_dir, ows__apply_state_dir, ows__undo_state_dir},
	[ITEM_CLOSED] = {"closed account", "closed account", "closed", 0, NULL,
			 ows__inspect_account, ows__apply_account, ows__undo_account},
	[ITEM_OPEN] = {"open account", "open account", "open", 0, NULL, ows__inspect_account,
		       ows__apply_account, ows__undo_account},
	[ITEM_GROUP] = {"group", "group", NULL, 0, NULL, ows__inspect_group, ows__apply_group,
			ows__undo_group},
	/* The subfolders go with the state folder's undo. */
	[ITEM_SANDBOXES] = {"state folder", "private folders", "sandboxes", MODE_SANDBOXES,
			    "per-session private folders", ows__inspect_subdir, ows__apply_subdir,
			    NULL},
	[ITEM_JOURNAL] = {"state folder", "grant journal", "journal", MODE_JOURNAL,
			  "the grant journal", ows__inspect_subdir, ows__apply_subdir, NULL},
	[ITEM_LAUNCHER] = {"launcher", "launcher", NULL, MODE_LAUNCHER, NULL,
			   ows__inspect_launcher, ows__apply_launcher, ows__undo_launcher},
	[ITEM_LAUNCHER_CONF] = {"launcher record", "launcher record", NULL, MODE_LAUNCHER_CONF,
				NULL, ows__inspect_launcher_conf, ows__apply_launcher_conf,
				ows__undo_launcher_conf},
	[ITEM_NFT] = {"firewall", "firewall", NULL, 0, NULL, ows__inspect_nft, ows__apply_nft,
		      ows__undo_nft},
	/* Status has no row for it: it reports the config's provider as is. */
	[ITEM_CONFIG] = {"config", NULL, NULL, 0, NULL, ows__inspect_config, ows__apply_config,
			 ows__undo_config},
};

/*
 * What remove undoes, in this order: the config first, the mirror of setup
 * choosing it last; the state folder, with its subfolders and the record,
 * last, so that a remove cut short still has a record to finish from.
 */
static const int undo_order[] = {ITEM_CONFIG, ITEM_NFT, ITEM_LAUNCHER_CONF, ITEM_LAUNCHER,
				 ITEM_GROUP, ITEM_CLOSED, ITEM_OPEN, ITEM_STATE_DIR};

/* One line per account: how many checks passed, and the names of those that failed. */
static void proof_summary(mctx *m, const char *role, const char *report)
{
	json_t *j = report ? json_loads(report, 0, NULL) : NULL;
	json_t *checks = json_object_get(j, "checks");
	size_t i, passed = 0;
	json_t *c;
	char failed[600] = "", partial[sizeof(failed)] = "";
	json_array_foreach(checks, i, c) {
		if (jtrue(c, "passed")) {
			passed++;
			continue;
		}
		char *to = jtrue(c, "partial") ? partial : failed;
		size_t n = strlen(to);
		snprintf(to + n, sizeof(failed) - n, "%s%s: %s", n ? "; " : "", jstr(c, "name"),
			 jstr(c, "detail") ? jstr(c, "detail") : "");
	}
	if (json_array_size(checks))
		progress(m, "proof (%s): %zu of %zu checks passed%s%s%s%s", role, passed,
			 json_array_size(checks), failed[0] ? "; failed: " : "", failed,
			 partial[0] ? "; partial (recorded, not demanded): " : "", partial);
	if (partial[0])
		progress(m, "proof (%s): `open` sessions on this kernel run only when the config "
			    "says open_without_scopes = partial", role);
	json_decref(j);
}

/* All of buf, through EINTR and short reads; false when the pipe broke first. */
static bool read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	while (len > 0) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* The proof's session for one account: as its caller, or for a root caller run as `run_as`. */
static int verify_one(ows_net net, const char *run_as, const ows_config *c, char **report,
		      ows_error *err)
{
	ows_policy *pol = NULL;
	int rc = ows_policy_new(&pol, err);
	if (rc == 0)
		rc = ows_policy_set_provider(pol, "account", err);
	if (rc == 0)
		rc = ows_policy_set_network(pol, net, err);
	if (rc == 0 && run_as)
		rc = ows_policy_set_run_as(pol, run_as, err);
	if (rc == 0)
		rc = ows_verify(pol, c, report, err);
	ows_policy_free(pol);
	return rc;
}

/* In the child: become the person, with the groups setup just gave them, in their home. */
static int become(const struct passwd *pw, ows_error *err)
{
	if (initgroups(pw->pw_name, pw->pw_gid) != 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0)
		return ows__fail_sys(err, "setresuid", pw->pw_name,
				     "cannot become the person to prove the wall as them");
	if (chdir("/") != 0)
		return ows__fail_sys(err, "chdir", "/", "cannot leave root's folder");
	setenv("HOME", pw->pw_dir, 1);
	setenv("USER", pw->pw_name, 1);
	setenv("LOGNAME", pw->pw_name, 1);
	return 0;
}

/*
 * The proof as the person, not root: a root caller runs the launcher as an
 * ordinary program, and would prove a wall the person cannot open (the
 * launcher's setuid bit ignored on a nosuid mount, or under no_new_privs;
 * the group not yet theirs).  A child becomes the person and opens the
 * session through the setuid launcher, as every session will; its report
 * and error come back through a pipe.  Without a person, root proves it.
 */
static int verify_as_person(const char *person, ows_net net, const ows_config *c,
			    char **report, ows_error *err)
{
	const struct passwd *pw = person[0] && geteuid() == 0 ? getpwnam(person) : NULL;
	if (!pw)
		return verify_one(net, person[0] ? person : NULL, c, report, err);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0)
		return ows__fail_sys(err, "pipe", NULL, "cannot prove the wall as the person");
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		ows_error e;
		ows_error_clear(&e);
		char *rep = NULL;
		int rc = become(pw, &e);
		if (rc == 0)
			rc = verify_one(net, NULL, c, &rep, &e);
		size_t len = rep ? strlen(rep) : 0;
		bool sent = ows__plat_write_all(pfd[1], &rc, sizeof(rc)) == 0 &&
			    ows__plat_write_all(pfd[1], &e, sizeof(e)) == 0 &&
			    ows__plat_write_all(pfd[1], &len, sizeof(len)) == 0 &&
			    ows__plat_write_all(pfd[1], rep ? rep : "", len) == 0;
		_exit(sent ? 0 : 1);
	}
	int saved = errno;
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		errno = saved;
		return ows__fail_sys(err, "fork", NULL, "cannot prove the wall as the person");
	}
	int rc = OWS_ESYS;
	size_t len = 0;
	ows_error e;
	ows_error_clear(&e);
	bool got = read_all(pfd[0], &rc, sizeof(rc)) && read_all(pfd[0], &e, sizeof(e)) &&
		   read_all(pfd[0], &len, sizeof(len)) && len < (64u << 20);
	char *rep = got ? calloc(1, len + 1) : NULL;
	got = rep && read_all(pfd[0], rep, len);
	close(pfd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!got) {
		free(rep);
		return ows__fail(err, OWS_ESYS, 0, person, NULL,
				 "the proof as the person ended without a word");
	}
	e.what[sizeof(e.what) - 1] = e.where[sizeof(e.where) - 1] = e.hint[sizeof(e.hint) - 1] = '\0';
	if (err)
		*err = e;
	/* The caller frees it with ows_free(), which is free(). */
	*report = len ? rep : (free(rep), NULL);
	return rc;
}

/* Opens a throwaway session as each account and proves the wall from inside. */
static int step_proof(mctx *m)
{
	json_t *p = obj(m->rec, "proof");
	static const struct { ows_net net; const char *role; } runs[] = {
		{OWS_NET_NONE, "closed"}, {OWS_NET_OPEN, "open"}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(runs); i++) {
		if (m->person[0] && m->root)
			progress(m, "proof: %s opens a throwaway sandbox as the %s account (network "
				    "%s) through the setuid launcher, and it proves the wall from "
				    "inside", m->person, runs[i].role, ows__net_name(runs[i].net));
		else
			progress(m, "proof: open a throwaway sandbox as the %s account (network %s) "
				    "and prove the wall from inside", runs[i].role,
				 ows__net_name(runs[i].net));
		ows_error verr;
		ows_error_clear(&verr);
		char *report = NULL;
		/*
		 * Where Landlock has no scopes, `open` runs only partial, and sessions
		 * only when the config chooses it; setup proves the open account's wall
		 * all the same (partial: the rest is demanded, what is not kept is
		 * said), so that choosing it later needs no second setup.  A shallow
		 * copy: it borrows every string of m->c and is never released.
		 */
		ows_config partial_ok = *m->c;
		partial_ok.open_unscoped = true;
		int rc = verify_as_person(m->person, runs[i].net,
					  runs[i].net == OWS_NET_OPEN ? &partial_ok : m->c, &report,
					  &verr);
		proof_summary(m, runs[i].role, report);
		ows_free(report);
		if (rc < 0) {
			json_object_set_new(p, "passed", json_false());
			save(m);
			ows__fail(m->err, rc == OWS_EVERIFY ? OWS_EVERIFY : OWS_ESETUP, verr.sys_errno,
				  verr.where[0] ? verr.where : NULL,
				  "setup is recorded but not in use; fix the cause and run setup "
				  "again, or undo it: sudo owsbx machine sandbox remove",
				  "the wall could not be proved as the %s account: %s", runs[i].role,
				  verr.what[0] ? verr.what : ows_strerror(rc));
			return rc == OWS_EVERIFY ? OWS_EVERIFY : OWS_ESETUP;
		}
		progress(m, "proof (%s): passed", runs[i].role);
	}
	json_object_set_new(p, "passed", json_true());
	return save(m);
}

/* ----------------------------------------------------------- preflight */

/* The flags of the mount that holds `path`, or of its nearest folder that exists. */
static int mount_flags_at(const char *path, unsigned long *flags)
{
	char dir[PATH_MAX];
	struct statvfs v;
	snprintf(dir, sizeof(dir), "%s", path);
	for (;;) {
		if (statvfs(dir, &v) == 0) {
			*flags = v.f_flag;
			return 0;
		}
		char *slash = strrchr(dir, '/');
		if (errno != ENOENT || !slash)
			return -1;
		slash[slash == dir] = '\0'; /* "/a" becomes "/" */
	}
}

/*
 * What a container takes away and setup cannot do without, checked before
 * anything changes (a setup stopped at the firewall would leave accounts and
 * a launcher behind): CAP_NET_ADMIN for the firewall; a launcher path where
 * setuid works (not nosuid); no no_new_privs, under which the setuid launcher
 * cannot gain root for anyone.  Each names the option that gives it back.
 */
static int preflight(mctx *m)
{
	unsigned long flags;
	if (m->root && !ows__cap_effective(12 /* CAP_NET_ADMIN */))
		return ows__fail(m->err, OWS_ESETUP, EPERM, "CAP_NET_ADMIN",
				 "start the container with --cap-add NET_ADMIN (Kubernetes: "
				 "securityContext.capabilities.add: [NET_ADMIN]), or set up on the host",
				 "this root lacks CAP_NET_ADMIN (a container drops it by default), which "
				 "the closed account's firewall (nft) needs: nothing was changed");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return ows__fail(m->err, OWS_ESETUP, EPERM, "no_new_privs",
				 "start the container without --security-opt no-new-privileges "
				 "(Kubernetes: allowPrivilegeEscalation: true), or use the landlock "
				 "provider, which needs no setup",
				 "this process runs with no_new_privs, under which the setuid launcher "
				 "cannot become root, so no account session could start: nothing was "
				 "changed");
	if (mount_flags_at(m->c->launcher, &flags) == 0 && (flags & ST_NOSUID))
		return ows__fail(m->err, OWS_ESETUP, 0, m->c->launcher,
				 "set launcher in [account] of the config to a path on a mount without "
				 "nosuid (in a container: the image's own files, not a nosuid volume)",
				 "the launcher's place is on a nosuid mount, where the setuid launcher "
				 "cannot become root: nothing was changed");
	return 0;
}

/* Runs every step; stops at the first failure.  The config waits for the proof. */
static int run_steps(mctx *m)
{
	int rc = preflight(m);
	if (rc < 0)
		return rc;
	for (int i = 0; i < ITEM_CONFIG; i++) {
		const ows__item *it = &ows__machine_items[i];
		if ((rc = it->apply(it, m)) < 0)
			return rc;
	}
	if (m->apply && (rc = step_proof(m)) != 0)
		return rc;
	const ows__item *cfg = &ows__machine_items[ITEM_CONFIG];
	return cfg->apply(cfg, m);
}

/* ---------------------------------------------------------------- plan */

static int machine_plan(const ows_config *c, const ows_setup_options *o, char **plan, ows_error *err)
{
	if (!plan)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "plan_json is NULL");
	*plan = NULL;
	mctx m;
	int rc = ctx_init(&m, c, o, false, err);
	if (rc == 0) {
		ows_error serr;
		ows_error_clear(&serr);
		m.err = &serr;
		rc = run_steps(&m);
		m.err = err;
		if (rc < 0) /* the plan shows what would stop setup, rather than failing */
			json_array_append_new(m.notes, json_sprintf("setup would stop here: %s: %s (%s)",
								    serr.what, serr.where, serr.hint));
		build_fix(m.fix, sizeof(m.fix), c, m.person, m.o.launcher_source);
		json_t *j = json_pack("{s:O, s:O, s:s, s:b, s:s, s:s, s:b}", "changes", m.changes,
				      "notes", m.notes, "for_user", m.person, "root", m.root,
				      "command", m.fix, "config", m.config_file, "blocked", rc < 0);
		json_object_set_new(j, "then",
				    json_string("open a throwaway sandbox as each account and prove "
						"the wall from inside; only then choose the account "
						"provider in the machine's config"));
		*plan = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
		json_decref(j);
		rc = *plan ? 0 : ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	}
	ctx_free(&m);
	return rc;
}

/* --------------------------------------------------------------- setup */

static int machine_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	mctx m;
	int rc = ctx_init(&m, c, o, true, err);
	if (rc == 0 && !m.root) {
		char fix[sizeof(m.fix)];
		build_fix(fix, sizeof(fix), c, m.person, m.o.launcher_source);
		rc = ows__fail(err, OWS_EPERM, 0, NULL, fix,
			       "setup changes the machine and needs root: hand this command to an "
			       "administrator");
	}
	if (rc == 0)
		rc = run_steps(&m);
	ctx_free(&m);
	return rc;
}

/* --------------------------------------------------------------- status */

typedef struct rows {
	json_t *a;
	int failing;
} rows;

static void row(rows *r, const char *item, const char *state, const char *fix, const char *fmt,
		...) OWS__PRINTF(5, 6);
static void row(rows *r, const char *item, const char *state, const char *fix, const char *fmt,
		...)
{
	char detail[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	bool ok = strcmp(state, "ok") == 0;
	if (strcmp(state, "fail") == 0)
		r->failing++;
	json_t *j = json_pack("{s:s, s:b, s:s, s:s}", "item", item, "ok", ok, "state", state,
			      "detail", detail);
	if (!ok && fix)
		json_object_set_new(j, "fix", json_string(fix));
	json_array_append_new(r->a, j);
}

/* Inspects item `i` as status sees the machine; what it cannot look at is not as setup wants. */
static void status_inspect(int i, const scope *sc, seen *s)
{
	const ows__item *it = &ows__machine_items[i];
	(void)it->inspect(it, sc, s, NULL);
}

static void status_account(rows *r, const scope *sc, int i, const seen *s, const char *fix)
{
	const ows__item *it = &ows__machine_items[i];
	const char *name = i == ITEM_CLOSED ? sc->c->closed_user : sc->c->open_user;
	json_t *acc = json_object_get(json_object_get(sc->rec, "accounts"), it->key);
	json_t *uid = json_object_get(acc, "uid");
	if (!s->exists)
		row(r, it->row, "fail", fix, "%s does not exist", name);
	else if (sc->rec && !s->recorded)
		row(r, it->row, "fail", fix, "%s has uid %u, the record says %lld", name,
		    (unsigned)s->uid, uid ? (long long)json_integer_value(uid) : -1LL);
	else if (!s->nologin)
		row(r, it->row, "fail", fix, "%s has a login shell (%s)", name, s->shell);
	else if (s->locked == 0)
		row(r, it->row, "fail", fix, "%s has a usable password", name);
	else
		row(r, it->row, sc->rec ? "ok" : "fail", fix, "%s, uid %u, no login%s", name,
		    (unsigned)s->uid,
		    s->locked < 0 ? " (lock not checked without root)" : ", locked");
}

/* A folder setup makes: there, and of the owner, group and mode setup gives it. */
static void status_dir(rows *r, int i, const scope *sc, const char *gname, const char *fix)
{
	const ows__item *it = &ows__machine_items[i];
	seen s;
	status_inspect(i, sc, &s);
	if (!s.exists)
		row(r, it->row, "fail", fix, "%s is missing", s.path);
	else if (!s.meta_ok)
		row(r, it->row, "fail", fix, "%s is %04o %u:%u, want %04o root:%s", s.path, s.mode,
		    (unsigned)s.uid, (unsigned)s.gid, it->mode, gname);
	else
		row(r, it->row, "ok", fix, "%s %04o root:%s", s.path, it->mode, gname);
}

static int machine_status(const ows_config *c, char **status, ows_error *err)
{
	if (!status)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "status_json is NULL");
	*status = NULL;
	if (!c)
		return ows__fail(err, OWS_EINVAL, 0, NULL, "load the machine's config first",
				 "config is NULL");
	rows r = {json_array(), 0};
	char person[64];
	find_person(person, sizeof(person), NULL);
	char fix[PATH_MAX + 256], fix_person[PATH_MAX + 256], fix_status[PATH_MAX + 64];
	build_fix(fix, sizeof(fix), c, NULL, NULL);
	build_fix(fix_person, sizeof(fix_person), c, person, NULL);
	const char *cp = ows_config_path(c);
	snprintf(fix_status, sizeof(fix_status), "sudo owsbx machine sandbox status%s%s",
		 cp && *cp && strcmp(cp, OWS_CONFIG_DEFAULT_PATH) ? " --config " : "",
		 cp && *cp && strcmp(cp, OWS_CONFIG_DEFAULT_PATH) ? cp : "");

	json_t *rec = NULL;
	ows_error lerr;
	ows_error_clear(&lerr);
	char rpath[PATH_MAX];
	snprintf(rpath, sizeof(rpath), "%s/%s", c->state_dir, OWS__RECORD_FILE);
	int rc = ows__record_load(c->state_dir, &rec, &lerr);
	if (rc == 0)
		row(&r, "setup record", "ok", fix, "%s, checksum matches", rpath);
	else if (rc == OWS_ENOTFOUND)
		row(&r, "setup record", "fail", fix, "%s is missing: the machine is not set up", rpath);
	else
		row(&r, "setup record", "fail", fix, "%s: %s", rpath, lerr.what);

	scope sc = {.c = c, .rec = rec, .person = person, .config_file = config_file(c),
		    .group_gid = (gid_t)-1, .closed_uid = (uid_t)-1, .root = geteuid() == 0,
		    .deep = true};
	seen closed, open, s;
	status_inspect(ITEM_CLOSED, &sc, &closed);
	status_account(&r, &sc, ITEM_CLOSED, &closed, fix);
	status_inspect(ITEM_OPEN, &sc, &open);
	status_account(&r, &sc, ITEM_OPEN, &open, fix);

	const char *item = ows__machine_items[ITEM_GROUP].row;
	status_inspect(ITEM_GROUP, &sc, &s);
	if (s.exists)
		sc.group_gid = s.gid;
	json_t *g = json_object_get(rec, "group");
	if (!s.exists)
		row(&r, item, "fail", fix, "%s does not exist", c->group);
	else if (rec && !s.recorded)
		row(&r, item, "fail", fix, "%s has gid %u, the record says %lld", c->group,
		    (unsigned)s.gid, (long long)json_integer_value(json_object_get(g, "gid")));
	else
		row(&r, item, rec ? "ok" : "fail", fix, "%s, gid %u", c->group, (unsigned)s.gid);

	if (!person[0])
		row(&r, "membership", "ok", NULL, "root needs no membership");
	else if (s.member)
		row(&r, "membership", "ok", fix_person, "%s is in %s", person, c->group);
	else
		row(&r, "membership", "fail", fix_person, "%s is not in %s", person, c->group);

	/* The launcher: root-owned, the group's, setuid, and the file setup installed. */
	item = ows__machine_items[ITEM_LAUNCHER].row;
	status_inspect(ITEM_LAUNCHER, &sc, &s);
	if (!s.exists)
		row(&r, item, "fail", fix, "%s is missing", c->launcher);
	else if (!s.meta_ok)
		row(&r, item, "fail", fix, "%s is %04o %u:%u, want 4750 root:%s", c->launcher,
		    s.mode, (unsigned)s.uid, (unsigned)s.gid, c->group);
	else if (!s.read)
		row(&r, item, "ok", fix, "%s 4750 root:%s (content not checked: cannot read it)",
		    c->launcher, c->group);
	else if (!s.recorded_content)
		row(&r, item, "fail", fix, "%s is not the file setup installed (sha256 %.12s)",
		    c->launcher, s.sha256);
	else
		row(&r, item, "ok", fix, "%s 4750 root:%s, sha256 %.12s as recorded",
		    c->launcher, c->group, s.sha256);

	/* The launcher's own record: what it trusts, as setup wrote it for today's ids. */
	item = ows__machine_items[ITEM_LAUNCHER_CONF].row;
	status_inspect(ITEM_LAUNCHER_CONF, &sc, &s);
	if (!s.exists)
		row(&r, item, "fail", fix, "%s is missing", s.path);
	else if (!s.meta_ok)
		row(&r, item, "fail", fix, "%s is %04o %u:%u, want 0644 root:root", s.path,
		    s.mode, (unsigned)s.uid, (unsigned)s.gid);
	else if (!s.content_ok)
		row(&r, item, "fail", fix,
		    "%s does not hold today's account, group and state folder", s.path);
	else if (!s.recorded_content)
		row(&r, item, "fail", fix, "%s is not the one setup recorded", s.path);
	else
		row(&r, item, "ok", fix, "%s 0644 root:root, as recorded", s.path);
	ows__seen_free(&s);

	/* The firewall, compared with the table rendered for the recorded uid. */
	item = ows__machine_items[ITEM_NFT].row;
	json_t *n = json_object_get(rec, "nft");
	if (!sc.root) {
		row(&r, item, "skipped", fix_status,
		    "table inet %s: cannot check without root (sessions prove it from inside)",
		    c->nft_table);
	} else if (!rec || !json_object_get(n, "closed_uid")) {
		row(&r, item, "fail", fix, "table inet %s: nothing recorded", c->nft_table);
	} else {
		uid_t uid = (uid_t)json_integer_value(json_object_get(n, "closed_uid"));
		scope nsc = sc;
		nsc.closed_uid = uid;
		const ows__item *it = &ows__machine_items[ITEM_NFT];
		int lrc = it->inspect(it, &nsc, &s, NULL);
		if (lrc < 0)
			row(&r, item, "fail", fix, "cannot list table inet %s", c->nft_table);
		else if (!s.exists)
			row(&r, item, "fail", fix, "table inet %s is missing", c->nft_table);
		else if (!s.content_ok || !s.recorded_content)
			row(&r, item, "fail", fix, "table inet %s differs from the one setup loaded",
			    c->nft_table);
		else if (!closed.exists || closed.uid != uid)
			row(&r, item, "fail", fix, "table inet %s is for uid %u, not the closed "
			    "account's", c->nft_table, (unsigned)uid);
		else
			row(&r, item, "ok", fix, "table inet %s as loaded, for uid %u",
			    c->nft_table, (unsigned)uid);
		ows__seen_free(&s);
	}

	/* The state folder and what lives in it. */
	status_dir(&r, ITEM_STATE_DIR, &sc, "root", fix);
	status_dir(&r, ITEM_SANDBOXES, &sc, c->group, fix);
	status_dir(&r, ITEM_JOURNAL, &sc, c->group, fix);

	json_t *p = json_object_get(rec, "proof");
	if (jtrue(p, "passed"))
		row(&r, "proof", "ok", fix, "setup proved the wall as both accounts");
	else
		row(&r, "proof", "fail", fix, "the wall has not been proved: setup did not finish");

	json_t *out = json_pack("{s:s, s:b, s:o, s:i, s:s}", "provider_in_config",
				c->provider ? c->provider : "", "set_up", rec && r.failing == 0,
				"rows", r.a, "failing", r.failing, "config", config_file(c));
	json_decref(rec);
	*status = out ? json_dumps(out, JSON_INDENT(2)) : NULL;
	json_decref(out);
	if (!*status)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	return r.failing;
}

/* -------------------------------------------------------------- remove */

static int machine_remove(const ows_config *c, const ows_setup_options *o, ows_error *err)
{
	mctx m;
	int rc = ctx_init(&m, c, o, true, err);
	if (rc == 0 && !m.root)
		rc = ows__fail(err, OWS_EPERM, 0, NULL, "sudo owsbx machine sandbox remove",
			       "remove changes the machine and needs root");
	if (rc < 0)
		goto out;
	if (json_object_size(m.rec) <= 1) {
		progress(&m, "nothing to remove: there is no setup record in %s", c->state_dir);
		goto out;
	}
	/* Grants a dead host left must be revoked while the accounts still exist. */
	ows_error cerr;
	ows_error_clear(&cerr);
	int crc = ows_machine_cleanup(c, &cerr);
	if (crc < 0 && crc != OWS_ENOSYS) {
		rc = ows__fail(err, crc, cerr.sys_errno, cerr.where,
			       "end running sessions, then run remove again",
			       "cannot revoke the grants sessions left: %s", cerr.what);
		goto out;
	}
	for (size_t i = 0; i < OWS__ARRAY_LEN(undo_order); i++) {
		const ows__item *it = &ows__machine_items[undo_order[i]];
		if ((rc = it->undo(it, &m)) < 0)
			break;
	}
out:
	ctx_free(&m);
	return rc;
}

/* ---------------------------------------------------- for the provider */

void ows__machine_fix(const ows_config *c, char *buf, size_t len)
{
	build_fix(buf, len, c, NULL, NULL);
}

static int broken(ows_error *err, const char *where, const char *fix, const char *what)
{
	return ows__fail(err, OWS_ESETUP, 0, where, fix,
			 "the account sandbox is not set up on this machine: %s", what);
}

int ows__machine_check(const ows_config *c, struct ows__machine *out, ows_error *err)
{
	if (!c)
		return ows__fail(err, OWS_EINVAL, 0, NULL, NULL, "config is NULL");
	char fix[PATH_MAX + 256];
	build_fix(fix, sizeof(fix), c, NULL, NULL);
	/* Each session looks, it does not read: no shadow file, no launcher's content, no nft. */
	scope sc = {.c = c, .rec = NULL, .person = "", .config_file = config_file(c),
		    .group_gid = (gid_t)-1, .closed_uid = (uid_t)-1, .root = geteuid() == 0,
		    .deep = false};
	const ows__item *items = ows__machine_items;
	seen s;
	/* Only root may have written what the record says, or it says nothing. */
	items[ITEM_STATE_DIR].inspect(&items[ITEM_STATE_DIR], &sc, &s, NULL);
	if (s.exists && !s.root_alone)
		return broken(err, c->state_dir, fix, "the state folder is not root's alone");
	struct stat st;
	char rpath[PATH_MAX];
	snprintf(rpath, sizeof(rpath), "%s/%s", c->state_dir, OWS__RECORD_FILE);
	if (lstat(rpath, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)))
		return broken(err, rpath, fix, "the setup record is not root's alone");
	json_t *rec = NULL;
	ows_error lerr;
	ows_error_clear(&lerr);
	int rc = ows__record_load(c->state_dir, &rec, &lerr);
	if (rc < 0)
		return broken(err, lerr.where, fix,
			      rc == OWS_ENOTFOUND ? "there is no setup record" : lerr.what);
	sc.rec = rec;
	struct ows__machine m;
	memset(&m, 0, sizeof(m));
	json_t *accs = json_object_get(rec, "accounts");
	struct {
		int item;
		const char *name;
		uid_t *uid;
		gid_t *gid;
		char *dst;
	} want[] = {{ITEM_CLOSED, c->closed_user, &m.closed_uid, &m.closed_gid, m.closed_user},
		    {ITEM_OPEN, c->open_user, &m.open_uid, &m.open_gid, m.open_user}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(want); i++) {
		const ows__item *it = &items[want[i].item];
		const char *name = jstr(json_object_get(accs, it->key), "name");
		if (!name || strcmp(name, want[i].name) != 0) {
			rc = broken(err, want[i].name, fix, "the config names another account than setup made");
			goto out;
		}
		it->inspect(it, &sc, &s, NULL);
		if (!s.exists || !s.recorded || s.uid == 0) {
			char what[160];
			snprintf(what, sizeof(what), "the %s account %s is %s", it->key, name,
				 s.exists ? "not the one setup recorded" : "missing");
			rc = broken(err, name, fix, what);
			goto out;
		}
		*want[i].uid = s.uid;
		*want[i].gid = s.gid;
		snprintf(want[i].dst, 32, "%s", name);
	}
	sc.closed_uid = m.closed_uid;
	items[ITEM_GROUP].inspect(&items[ITEM_GROUP], &sc, &s, NULL);
	if (!s.exists || !s.recorded) {
		rc = broken(err, c->group, fix, s.exists ? "the group is not the one setup recorded"
							 : "the group is missing");
		goto out;
	}
	m.group_gid = sc.group_gid = s.gid;
	snprintf(m.group, sizeof(m.group), "%s", c->group);

	items[ITEM_LAUNCHER].inspect(&items[ITEM_LAUNCHER], &sc, &s, NULL);
	if (!s.recorded || !s.meta_ok) {
		rc = broken(err, c->launcher, fix,
			    "the launcher is missing or not root-owned, the group's and mode 4750");
		goto out;
	}
	/* What the launcher will trust: it must say what the record says, for today's ids. */
	items[ITEM_LAUNCHER_CONF].inspect(&items[ITEM_LAUNCHER_CONF], &sc, &s, NULL);
	bool conf_ok = s.exists && s.root_alone && s.recorded_content;
	ows__seen_free(&s);
	if (!conf_ok) {
		rc = broken(err, s.path, fix,
			    "the launcher's record is missing, changed or not root's alone");
		goto out;
	}
	snprintf(m.launcher, sizeof(m.launcher), "%s", c->launcher);
	snprintf(m.state_dir, sizeof(m.state_dir), "%s", c->state_dir);
	const struct { int item; char *dst; size_t len; } dirs[] = {
		{ITEM_SANDBOXES, m.sandboxes_dir, sizeof(m.sandboxes_dir)},
		{ITEM_JOURNAL, m.journal_dir, sizeof(m.journal_dir)}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(dirs); i++) {
		items[dirs[i].item].inspect(&items[dirs[i].item], &sc, &s, NULL);
		snprintf(dirs[i].dst, dirs[i].len, "%s", s.path);
		if (!s.meta_ok) {
			rc = broken(err, s.path, fix, "a state folder is missing or has the wrong owner or mode");
			goto out;
		}
	}
	items[ITEM_NFT].inspect(&items[ITEM_NFT], &sc, &s, NULL);
	if (!s.recorded) {
		rc = broken(err, c->nft_table, fix,
			    "the firewall was not recorded for the closed account's uid");
		goto out;
	}
	snprintf(m.nft_table, sizeof(m.nft_table), "%s", c->nft_table);
	m.proved = jtrue(json_object_get(rec, "proof"), "passed");

	/* The launcher re-checks this; saying it here gives the person the way out. */
	if (geteuid() != 0 && getuid() != 0) {
		bool member = getgid() == m.group_gid || getegid() == m.group_gid;
		gid_t groups[NGROUPS_MAX];
		int ng = getgroups(NGROUPS_MAX, groups);
		for (int i = 0; i < ng && !member; i++)
			member = groups[i] == m.group_gid;
		if (!member) {
			char pfix[PATH_MAX + 320];
			char person[64];
			find_person(person, sizeof(person), NULL);
			build_fix(pfix, sizeof(pfix), c, person, NULL);
			size_t len = strlen(pfix);
			snprintf(pfix + len, sizeof(pfix) - len, ", then log in again");
			rc = ows__fail(err, OWS_EPERM, 0, c->group, pfix,
				       "you are not in the group allowed to start sandboxes");
			goto out;
		}
	}
	if (out)
		*out = m;
	rc = 0;
out:
	json_decref(rec);
	return rc;
}

/* ----------------------------------------- the machine's own setup (lib/machine.c) */

const ows__machine_ops ows__machine_own = {
	.plan = machine_plan,
	.setup = machine_setup,
	.status = machine_status,
	.remove = machine_remove,
	.cleanup = ows__machine_cleanup, /* the grants' (acl.c) */
	.report = ows__report_json,      /* lib/linux/report.c */
};
