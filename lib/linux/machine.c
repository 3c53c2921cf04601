/*
 * Machine setup for the account provider: plan, setup, status, remove.
 *
 * Every item is one step function that inspects the machine, notes the
 * change it would make, and makes it when applying.  The plan and the setup
 * run the same steps, so what is shown is what is done.  The record is
 * saved after every change: a setup cut short leaves a record that says
 * what it did, and `remove` or a second `setup` pick up from there.
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
#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "launch.h"
#include "linux.h"
#include "record.h"

static const char USERADD[] = "/usr/sbin/useradd";
static const char USERDEL[] = "/usr/sbin/userdel";
static const char USERMOD[] = "/usr/sbin/usermod";
static const char GROUPADD[] = "/usr/sbin/groupadd";
static const char GROUPDEL[] = "/usr/sbin/groupdel";
static const char GPASSWD[] = "/usr/bin/gpasswd";
static const char NOLOGIN[] = "/usr/sbin/nologin";

#define MODE_STATE 0755
#define MODE_SANDBOXES 0711
#define MODE_JOURNAL 01770
#define MODE_LAUNCHER 04750
#define MODE_LAUNCHER_CONF 0644

void ows_setup_options_init(ows_setup_options *opts)
{
	if (opts) {
		memset(opts, 0, sizeof(*opts));
		opts->size = sizeof(*opts);
	}
}

/* ------------------------------------------------------------- context */

typedef struct mctx {
	const ows_config *c;
	ows_setup_options o;  /* a full-size copy of the caller's */
	ows_error *err;
	bool apply;
	bool root;
	json_t *rec;          /* the record as it stands (owned) */
	json_t *changes;      /* what the plan lists (owned) */
	json_t *notes;        /* what the plan says besides (owned) */
	char person[64];      /* who is added to the group; "" for nobody */
	char config_file[PATH_MAX];
	char fix[PATH_MAX + 256]; /* the command that sets the machine up */
	uid_t closed_uid;     /* (uid_t)-1 until known */
	gid_t group_gid;      /* (gid_t)-1 until known */
} mctx;

static json_t *obj(json_t *parent, const char *key)
{
	json_t *o = json_object_get(parent, key);
	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(parent, key, o);
	}
	return o;
}

static json_t *arr(json_t *parent, const char *key)
{
	json_t *a = json_object_get(parent, key);
	if (!json_is_array(a)) {
		a = json_array();
		json_object_set_new(parent, key, a);
	}
	return a;
}

static const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static bool jtrue(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static void note(mctx *m, const char *fmt, ...) OWS__PRINTF(2, 3);
static void note(mctx *m, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(m->notes, json_string(line));
}

/* Lists a change; when applying, announces it before it is made. */
static void change(mctx *m, const char *item, const char *fmt, ...) OWS__PRINTF(3, 4);
static void change(mctx *m, const char *item, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(m->changes, json_pack("{s:s, s:s}", "item", item, "change", line));
	if (m->apply && m->o.progress) {
		char step[900];
		snprintf(step, sizeof(step), "%s: %s", item, line);
		m->o.progress(m->o.progress_ctx, step);
	}
}

static void progress(mctx *m, const char *fmt, ...) OWS__PRINTF(2, 3);
static void progress(mctx *m, const char *fmt, ...)
{
	if (!m->o.progress)
		return;
	char line[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	m->o.progress(m->o.progress_ctx, line);
}

static int save(mctx *m)
{
	return m->apply ? ows__record_save(m->c->state_dir, m->rec, m->err) : 0;
}

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

/* ------------------------------------------------------------- helpers */

static bool is_nologin(const char *shell)
{
	return strcmp(shell, "/usr/sbin/nologin") == 0 || strcmp(shell, "/sbin/nologin") == 0 ||
	       strcmp(shell, "/bin/false") == 0 || strcmp(shell, "/usr/bin/false") == 0;
}

/* 1 locked, 0 not, -1 cannot tell (not root). */
static int is_locked(const char *name)
{
	if (geteuid() != 0)
		return -1;
	struct spwd *sp = getspnam(name);
	if (!sp)
		return -1;
	return sp->sp_pwdp[0] == '!' || sp->sp_pwdp[0] == '*';
}

static bool in_group(const char *user, gid_t gid)
{
	struct passwd *pw = getpwnam(user);
	if (!pw)
		return false;
	if (pw->pw_gid == gid)
		return true;
	struct group *gr = getgrgid(gid);
	for (char **mem = gr ? gr->gr_mem : NULL; mem && *mem; mem++)
		if (strcmp(*mem, user) == 0)
			return true;
	return false;
}

/* Creates the missing folders up to `path`, 0755 root, listing each it made in `created`. */
static int mkdir_p(const char *path, json_t *created, ows_error *err)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return ows__fail(err, OWS_EINVAL, 0, path, NULL, "path too long");
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;
		*p = '\0';
		if (mkdir(buf, 0755) == 0) {
			json_array_append_new(created, json_string(buf));
		} else if (errno != EEXIST) {
			return ows__fail_sys(err, buf, NULL, "cannot create the folder");
		}
		*p = saved;
		if (!saved)
			break;
	}
	return 0;
}

/* Removes the folders in `created`, deepest first, when empty; drops each removed from the array. */
static void rmdir_created(json_t *created)
{
	for (size_t i = json_array_size(created); i-- > 0;) {
		const char *d = json_string_value(json_array_get(created, i));
		if (d && (rmdir(d) == 0 || errno == ENOENT))
			json_array_remove(created, i);
	}
}

/* ------------------------------------------------------------- steps */

static int step_state_dir(mctx *m)
{
	const char *dir = m->c->state_dir;
	json_t *sd = obj(m->rec, "state_dir");
	json_object_set_new(sd, "path", json_string(dir));
	struct stat st;
	if (lstat(dir, &st) < 0) {
		change(m, "state folder", "create %s (0755 root:root) for the setup record", dir);
		if (!m->apply)
			return 0;
		int rc = mkdir_p(dir, arr(sd, "created_dirs"), m->err);
		if (rc == 0 && (chown(dir, 0, 0) < 0 || chmod(dir, MODE_STATE) < 0))
			rc = ows__fail_sys(m->err, dir, NULL, "cannot set the folder's owner and mode");
		if (rc == 0)
			rc = save(m);
		return rc;
	}
	if (!S_ISDIR(st.st_mode))
		return ows__fail(m->err, OWS_ESETUP, 0, dir, "choose another state_dir in [sandbox]",
				 "the state folder is not a folder");
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		if (json_array_size(json_object_get(sd, "created_dirs")) == 0)
			return ows__fail(m->err, OWS_ESETUP, 0, dir,
					 "make it root-owned and not writable by others, or choose "
					 "another state_dir",
					 "the state folder exists and others could change the record");
		change(m, "state folder", "set %s back to 0755 root:root", dir);
		if (m->apply && (chown(dir, 0, 0) < 0 || chmod(dir, MODE_STATE) < 0))
			return ows__fail_sys(m->err, dir, NULL, "cannot set the folder's owner and mode");
	}
	return save(m);
}

static int step_account(mctx *m, const char *role, const char *name)
{
	json_t *acc = obj(obj(m->rec, "accounts"), role);
	json_object_set_new(acc, "name", json_string(name));
	struct passwd *pw = getpwnam(name);
	bool ours = jtrue(acc, "created");
	char item[64];
	snprintf(item, sizeof(item), "%s account", role);
	if (!pw) {
		change(m, item,
		       "%s %s: useradd --system --user-group --no-create-home --home-dir "
		       "/nonexistent --shell %s %s",
		       ours ? "re-create (it was deleted)" : "create hidden system account", name,
		       NOLOGIN, name);
		if (!m->apply)
			return 0;
		const char *argv[] = {USERADD, "--system", "--user-group", "--no-create-home",
				      "--home-dir", "/nonexistent", "--shell", NOLOGIN, name, NULL};
		int rc = ows__cmd_run(argv, NULL, NULL, m->err);
		if (rc < 0)
			return rc;
		json_object_set_new(acc, "created", json_true());
		if (!(pw = getpwnam(name)))
			return ows__fail(m->err, OWS_ESYS, 0, name, NULL,
					 "useradd succeeded but the account is not there");
		ours = true;
	} else if (!json_object_get(acc, "created")) {
		/* There before us: usable only if nobody can log in as it. */
		if (pw->pw_uid == 0 || !is_nologin(pw->pw_shell) || is_locked(name) == 0)
			return ows__fail(m->err, OWS_ESETUP, 0, name,
					 "choose another name in [account] of the machine's config",
					 "the account exists and can log in: it cannot be a sandbox account");
		note(m, "%s account %s exists already (uid %u): it is used and will stay on remove",
		     role, name, (unsigned)pw->pw_uid);
		json_object_set_new(acc, "created", json_false());
	} else if (json_object_get(acc, "uid") &&
		   json_integer_value(json_object_get(acc, "uid")) != (json_int_t)pw->pw_uid) {
		note(m, "%s account %s has a new uid %u (recorded %lld): the firewall follows it",
		     role, name, (unsigned)pw->pw_uid,
		     (long long)json_integer_value(json_object_get(acc, "uid")));
	}
	if (pw && ours) {
		if (!is_nologin(pw->pw_shell)) {
			change(m, item, "give %s no login shell: usermod --shell %s %s", name, NOLOGIN, name);
			const char *argv[] = {USERMOD, "--shell", NOLOGIN, name, NULL};
			int rc = m->apply ? ows__cmd_run(argv, NULL, NULL, m->err) : 0;
			if (rc < 0)
				return rc;
		}
		if (is_locked(name) == 0) {
			change(m, item, "lock %s: usermod --lock %s", name, name);
			const char *argv[] = {USERMOD, "--lock", name, NULL};
			int rc = m->apply ? ows__cmd_run(argv, NULL, NULL, m->err) : 0;
			if (rc < 0)
				return rc;
		}
	}
	if (pw) {
		json_object_set_new(acc, "uid", json_integer(pw->pw_uid));
		json_object_set_new(acc, "gid", json_integer(pw->pw_gid));
		if (strcmp(role, "closed") == 0)
			m->closed_uid = pw->pw_uid;
	}
	return save(m);
}

static int step_group(mctx *m)
{
	const char *name = m->c->group;
	json_t *g = obj(m->rec, "group");
	json_object_set_new(g, "name", json_string(name));
	struct group *gr = getgrnam(name);
	if (!gr) {
		bool ours = jtrue(g, "created");
		change(m, "group", "%s group %s for people allowed to start sandboxes: groupadd --system %s",
		       ours ? "re-create (it was deleted)" : "create", name, name);
		if (m->apply) {
			const char *argv[] = {GROUPADD, "--system", name, NULL};
			int rc = ows__cmd_run(argv, NULL, NULL, m->err);
			if (rc < 0)
				return rc;
			json_object_set_new(g, "created", json_true());
			if (ours) /* members we added went with the group */
				json_object_set_new(g, "members_added", json_array());
			if (!(gr = getgrnam(name)))
				return ows__fail(m->err, OWS_ESYS, 0, name, NULL,
						 "groupadd succeeded but the group is not there");
		}
	} else if (!json_object_get(g, "created")) {
		note(m, "group %s exists already: it is used and will stay on remove", name);
		json_object_set_new(g, "created", json_false());
	}
	if (gr) {
		m->group_gid = gr->gr_gid;
		json_object_set_new(g, "gid", json_integer(gr->gr_gid));
	}
	arr(g, "members_added");
	int rc = save(m);
	if (rc < 0)
		return rc;

	if (!m->person[0]) {
		note(m, "nobody is added to group %s: run setup with --for-user NAME (or through "
			"sudo) to allow a person to start sandboxes", name);
		return 0;
	}
	if (!getpwnam(m->person))
		return ows__fail(m->err, OWS_EINVAL, 0, m->person, "give an existing user with --for-user",
				 "no such user");
	if (gr && in_group(m->person, gr->gr_gid))
		return 0;
	change(m, "group", "add %s to %s (gpasswd -a %s %s); it takes effect at their next login",
	       m->person, name, m->person, name);
	if (!m->apply)
		return 0;
	const char *argv[] = {GPASSWD, "-a", m->person, name, NULL};
	if ((rc = ows__cmd_run(argv, NULL, NULL, m->err)) < 0)
		return rc;
	json_t *added = arr(g, "members_added");
	size_t i;
	json_t *v;
	bool listed = false;
	json_array_foreach(added, i, v) listed |= strcmp(json_string_value(v), m->person) == 0;
	if (!listed)
		json_array_append_new(added, json_string(m->person));
	return save(m);
}

/* A folder of ours under the state folder, with its owner and mode. */
static int step_subdir(mctx *m, const char *key, unsigned mode, const char *why)
{
	json_t *sd = obj(m->rec, "state_dir");
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", m->c->state_dir, key);
	json_t *d = obj(sd, key);
	json_object_set_new(d, "path", json_string(path));
	json_object_set_new(d, "mode", json_sprintf("%04o", mode));
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	if (exists && !S_ISDIR(st.st_mode))
		return ows__fail(m->err, OWS_ESETUP, 0, path, "move it away, then run setup again",
				 "not a folder");
	bool right = exists && st.st_uid == 0 && st.st_gid == m->group_gid &&
		     (st.st_mode & 07777) == mode;
	if (right)
		return save(m);
	if (exists && !jtrue(d, "created") && m->group_gid != (gid_t)-1)
		return ows__fail(m->err, OWS_ESETUP, 0, path, "move it away, then run setup again",
				 "the folder exists and was not made by setup");
	if (!exists)
		change(m, "state folder", "create %s (%04o root:%s): %s", path, mode, m->c->group, why);
	else
		change(m, "state folder", "set %s back to %04o root:%s", path, mode, m->c->group);
	if (!m->apply)
		return 0;
	if (!exists) {
		if (mkdir(path, 0700) < 0)
			return ows__fail_sys(m->err, path, NULL, "cannot create the folder");
		json_object_set_new(d, "created", json_true());
	}
	if (chown(path, 0, m->group_gid) < 0 || chmod(path, mode) < 0)
		return ows__fail_sys(m->err, path, NULL, "cannot set the folder's owner and mode");
	return save(m);
}

/* Copies `src` to a temporary file beside `dst`, root:gid 4750, and renames it into place. */
static int install_launcher(const char *src, const char *dst, gid_t gid, ows_error *err)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return ows__fail_sys(err, src, "build it first (make), or pass --launcher-source",
				     "cannot read the launcher to install");
	char *tmp = ows__asprintf(err, "%s.new-%d", dst, (int)getpid());
	if (!tmp) {
		close(in);
		return OWS_ENOMEM;
	}
	int rc = 0;
	int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0700);
	if (out < 0) {
		rc = ows__fail_sys(err, tmp, NULL, "cannot install the launcher");
		goto done;
	}
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = ows__fail_sys(err, src, NULL, "cannot read the launcher to install");
			break;
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				rc = ows__fail_sys(err, tmp, NULL, "cannot install the launcher");
				break;
			}
			off += w;
		}
		if (rc < 0)
			break;
	}
	/* chown clears the set-user-ID bit: owner first, then the mode. */
	if (rc == 0 && (fchown(out, 0, gid) < 0 || fchmod(out, MODE_LAUNCHER) < 0 || fsync(out) < 0))
		rc = ows__fail_sys(err, tmp, NULL, "cannot set the launcher's owner and mode");
	close(out);
	if (rc == 0 && rename(tmp, dst) < 0)
		rc = ows__fail_sys(err, dst, NULL, "cannot put the launcher in place");
	if (rc < 0)
		unlink(tmp);
done:
	close(in);
	free(tmp);
	return rc;
}

static int step_launcher(mctx *m)
{
	const char *dst = m->c->launcher;
	json_t *l = obj(m->rec, "launcher");
	json_object_set_new(l, "path", json_string(dst));
	bool ours = jtrue(l, "installed");
	const char *src = m->o.launcher_source;
	char src_sha[65] = "", dst_sha[65] = "";
	int rc;
	if (src && (rc = ows__sha256_file(src, src_sha, m->err)) < 0)
		return rc;
	const char *want = src ? src_sha : jstr(l, "sha256");
	struct stat st;
	bool exists = lstat(dst, &st) == 0;
	if (exists && (!S_ISREG(st.st_mode) || ows__sha256_file(dst, dst_sha, NULL) < 0))
		return ows__fail(m->err, OWS_ESETUP, 0, dst, "move it away, then run setup again",
				 "the launcher's path holds something that is not a readable file");
	if (!want && !exists) {
		change(m, "launcher", "install the launcher at %s: no launcher given", dst);
		return ows__fail(m->err, OWS_ESETUP, 0, dst,
				 "build owsbx-launch and run setup with --launcher-source PATH",
				 "there is no launcher to install");
	}
	if (exists && !ours && !json_object_get(l, "installed")) {
		if (!want || strcmp(want, dst_sha) != 0)
			return ows__fail(m->err, OWS_ESETUP, 0, dst,
					 "move it away, or set another launcher path in [account]",
					 "a different file is already at the launcher's path");
		note(m, "the launcher at %s is there already and identical: it is used and will "
			"stay on remove", dst);
		json_object_set_new(l, "installed", json_false());
	}
	bool content_ok = exists && want && strcmp(want, dst_sha) == 0;
	bool meta_ok = exists && st.st_uid == 0 && st.st_gid == m->group_gid &&
		       (st.st_mode & 07777) == MODE_LAUNCHER;
	if (content_ok && meta_ok) {
		json_object_set_new(l, "sha256", json_string(dst_sha));
		json_object_set_new(l, "mode", json_string("4750"));
		return save(m);
	}
	if (exists && !ours)
		return ows__fail(m->err, OWS_ESETUP, 0, dst, "fix its owner and mode by hand",
				 "the launcher that was there before setup has the wrong owner or mode");
	if (content_ok) {
		change(m, "launcher", "set %s to root:%s mode 4750", dst, m->c->group);
		if (!m->apply)
			return 0;
		if (chown(dst, 0, m->group_gid) < 0 || chmod(dst, MODE_LAUNCHER) < 0)
			return ows__fail_sys(m->err, dst, NULL, "cannot set the launcher's owner and mode");
	} else {
		if (!src)
			return ows__fail(m->err, OWS_ESETUP, 0, dst,
					 "run setup with --launcher-source PATH to install it again",
					 "the installed launcher is not the one setup recorded");
		change(m, "launcher", "%s %s as %s (setuid root, group %s, mode 4750)",
		       exists ? "replace" : "install", src, dst, m->c->group);
		if (!m->apply)
			return 0;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", dst);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = '\0';
			if ((rc = mkdir_p(dir, arr(l, "created_dirs"), m->err)) < 0)
				return rc;
		}
		if ((rc = install_launcher(src, dst, m->group_gid, m->err)) < 0)
			return rc;
		json_object_set_new(l, "installed", json_true());
		if ((rc = ows__sha256_file(dst, dst_sha, m->err)) < 0)
			return rc;
	}
	json_object_set_new(l, "sha256", json_string(dst_sha));
	json_object_set_new(l, "mode", json_string("4750"));
	return save(m);
}

/* "<launcher>.conf": the record the setuid launcher trusts (cli/launch/launcher.c). */
static void conf_path(char *buf, size_t len, const char *launcher)
{
	snprintf(buf, len, "%s.conf", launcher);
}

/*
 * The launcher's record for the accounts and group as they are now; *out
 * is fresh (caller frees).  OWS_ENOTFOUND while an account or the group
 * does not exist yet (a plan before setup).
 */
static int render_conf(const ows_config *c, char **out, ows_error *err)
{
	*out = NULL;
	struct passwd *pw = getpwnam(c->closed_user);
	uid_t cu = pw ? pw->pw_uid : 0;
	gid_t cg = pw ? pw->pw_gid : 0;
	pw = getpwnam(c->open_user);
	uid_t ou = pw ? pw->pw_uid : 0;
	gid_t og = pw ? pw->pw_gid : 0;
	struct group *gr = getgrnam(c->group);
	if (!cu || !ou || !gr)
		return OWS_ENOTFOUND;
	*out = ows__asprintf(err,
			     "# Written by `owsbx machine sandbox setup`: what %s trusts.\n"
			     "# Root's alone; setup rewrites it and remove deletes it.\n"
			     "closed_uid=%u\nclosed_gid=%u\nopen_uid=%u\nopen_gid=%u\ngroup_gid=%u\n"
			     "state_dir=%s\n",
			     c->launcher, (unsigned)cu, (unsigned)cg, (unsigned)ou, (unsigned)og,
			     (unsigned)gr->gr_gid, c->state_dir);
	return *out ? 0 : OWS_ENOMEM;
}

/* Every folder above `path` is one the launcher trusts; else the first that is not. */
static const char *untrusted_parent(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s", path);
	for (char *s = strrchr(buf, '/'); s; s = strrchr(buf, '/')) {
		*s = '\0';
		const char *d = buf[0] ? buf : "/";
		struct stat st;
		if (lstat(d, &st) == 0 && !ows__launch_dir_is_trusted(&st))
			return d;
		if (!buf[0])
			break;
	}
	return NULL;
}

static int step_launcher_conf(mctx *m)
{
	char path[PATH_MAX + 8], dir[PATH_MAX];
	conf_path(path, sizeof(path), m->c->launcher);
	json_t *lc = obj(m->rec, "launcher_conf");
	json_object_set_new(lc, "path", json_string(path));
	if (!ows__launch_path_is_canonical(m->c->state_dir) || strlen(m->c->state_dir) > PATH_MAX - 128)
		return ows__fail(m->err, OWS_ECONFIG, 0, m->c->state_dir,
				 "write state_dir as a plain absolute path (no '//', '.', '..' or "
				 "trailing '/')",
				 "the launcher accepts only a canonical state folder");
	const char *bad = untrusted_parent(m->c->launcher, dir, sizeof(dir));
	if (bad)
		return ows__fail(m->err, OWS_ESETUP, 0, bad,
				 "set a launcher path in [account] whose folders are all root's "
				 "(e.g. /usr/local/libexec/owsandbox/owsbx-launch)",
				 "the launcher refuses to run from a folder others may change");
	char *want = NULL, *have = NULL;
	int rc = render_conf(m->c, &want, m->err);
	if (rc == OWS_ENOTFOUND) {
		change(m, "launcher record", "write %s (0644 root:root): the accounts' and the "
			  "group's ids and the state folder, for the launcher", path);
		return 0;
	}
	if (rc < 0)
		return rc;
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	bool ours = jtrue(lc, "created");
	if (exists && (!S_ISREG(st.st_mode) || ows__read_file(path, &have, NULL, NULL) < 0)) {
		rc = ows__fail(m->err, OWS_ESETUP, 0, path, "move it away, then run setup again",
			       "the launcher record's path holds something that is not a readable file");
		goto out;
	}
	bool same = exists && strcmp(have, want) == 0;
	bool meta_ok = exists && st.st_uid == 0 && st.st_gid == 0 &&
		       (st.st_mode & 07777) == MODE_LAUNCHER_CONF;
	if (exists && !ours && !json_object_get(lc, "created")) {
		if (!same) {
			rc = ows__fail(m->err, OWS_ESETUP, 0, path,
				       "move it away, or set another launcher path in [account]",
				       "a different launcher record is already there");
			goto out;
		}
		note(m, "the launcher record %s is there already and identical: it is used and "
			"will stay on remove", path);
		json_object_set_new(lc, "created", json_false());
	}
	if (!(same && meta_ok)) {
		if (exists && !ours) {
			rc = ows__fail(m->err, OWS_ESETUP, 0, path, "fix its owner and mode by hand",
				       "the launcher record that was there before setup has the "
				       "wrong owner or mode");
			goto out;
		}
		change(m, "launcher record", "%s %s (0644 root:root): closed, open and group ids, "
			  "state folder %s", exists ? (same ? "set the owner and mode of" : "rewrite")
						    : "write", path, m->c->state_dir);
		if (!m->apply)
			goto out;
		if ((rc = ows__write_file(path, want, strlen(want), MODE_LAUNCHER_CONF, m->err)) < 0)
			goto out;
		if (chown(path, 0, 0) < 0 || chmod(path, MODE_LAUNCHER_CONF) < 0) {
			rc = ows__fail_sys(m->err, path, NULL, "cannot set the record's owner and mode");
			goto out;
		}
		json_object_set_new(lc, "created", json_true());
	}
	char sha[65];
	ows__sha256_hex(want, strlen(want), sha);
	json_object_set_new(lc, "sha256", json_string(sha));
	rc = save(m);
out:
	free(want);
	free(have);
	return rc;
}

static bool same_table(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	while (la && (a[la - 1] == '\n' || a[la - 1] == ' '))
		la--;
	while (lb && (b[lb - 1] == '\n' || b[lb - 1] == ' '))
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

static int step_nft(mctx *m)
{
	const char *table = m->c->nft_table;
	json_t *n = obj(m->rec, "nft");
	json_object_set_new(n, "table", json_string(table));
	if (m->closed_uid == (uid_t)-1) {
		change(m, "firewall", "load nftables table inet %s: the closed account (uid given at "
			"creation) reaches only 127.0.0.1 tcp %d-%d, everything else refused at once",
		       table, OWS__PROXY_PORT_FIRST, OWS__PROXY_PORT_LAST);
		return 0;
	}
	char *want = NULL, *have = NULL;
	int rc = ows__nft_render(table, m->closed_uid, &want, m->err);
	if (rc < 0)
		return rc;
	if (!m->root) {
		change(m, "firewall", "load nftables table inet %s if it differs (cannot read the "
			"firewall without root)", table);
		free(want);
		return 0;
	}
	rc = ows__nft_list(table, &have, m->err);
	if (rc < 0 && rc != OWS_ENOTFOUND)
		goto out;
	bool exists = rc == 0;
	rc = 0;
	if (exists && !json_object_get(n, "created")) {
		/* A table of that name from before setup: keep it, to put it back on remove. */
		json_object_set_new(n, "previous", json_string(have));
	}
	if (!json_object_get(n, "created"))
		json_object_set_new(n, "created", json_boolean(!exists));
	char sha[65];
	ows__sha256_hex(want, strlen(want), sha);
	if (!exists || !same_table(have, want)) {
		change(m, "firewall", "%s nftables table inet %s: uid %u (the closed account) reaches "
			"only 127.0.0.1 tcp %d-%d and may answer connections made to it; tcp is "
			"reset, the rest refused (admin-prohibited)",
		       exists ? "replace" : "load", table, (unsigned)m->closed_uid,
		       OWS__PROXY_PORT_FIRST, OWS__PROXY_PORT_LAST);
		if (!m->apply)
			goto out;
		if ((rc = ows__nft_load(table, want, m->err)) < 0)
			goto out;
		free(have);
		have = NULL;
		if ((rc = ows__nft_list(table, &have, m->err)) < 0 || !same_table(have, want)) {
			rc = ows__fail(m->err, OWS_ESETUP, 0, table, "report this with `nft list ruleset`",
				       "the firewall table the kernel holds differs from the one loaded");
			goto out;
		}
	}
	json_object_set_new(n, "closed_uid", json_integer(m->closed_uid));
	json_object_set_new(n, "ruleset_sha256", json_string(sha));
	rc = save(m);
out:
	free(want);
	free(have);
	return rc;
}

/* One line per account: how many checks passed, and the names of those that failed. */
static void proof_summary(mctx *m, const char *role, const char *report)
{
	json_t *j = report ? json_loads(report, 0, NULL) : NULL;
	json_t *checks = json_object_get(j, "checks");
	size_t i, passed = 0;
	json_t *c;
	char failed[600] = "";
	json_array_foreach(checks, i, c) {
		if (jtrue(c, "passed")) {
			passed++;
			continue;
		}
		size_t n = strlen(failed);
		snprintf(failed + n, sizeof(failed) - n, "%s%s: %s", n ? "; " : "", jstr(c, "name"),
			 jstr(c, "detail") ? jstr(c, "detail") : "");
	}
	if (json_array_size(checks))
		progress(m, "proof (%s): %zu of %zu checks passed%s%s", role, passed,
			 json_array_size(checks), failed[0] ? "; failed: " : "", failed);
	json_decref(j);
}

/* Opens a throwaway session as each account and proves the wall from inside. */
static int step_proof(mctx *m)
{
	json_t *p = obj(m->rec, "proof");
	static const struct { ows_net net; const char *role; } runs[] = {
		{OWS_NET_NONE, "closed"}, {OWS_NET_OPEN, "open"}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(runs); i++) {
		progress(m, "proof: open a throwaway sandbox as the %s account (network %s) and prove "
			    "the wall from inside", runs[i].role, ows__net_name(runs[i].net));
		ows_policy *pol = NULL;
		ows_error verr;
		ows_error_clear(&verr);
		char *report = NULL;
		int rc = ows_policy_new(&pol, &verr);
		if (rc == 0)
			rc = ows_policy_set_provider(pol, "account", &verr);
		if (rc == 0)
			rc = ows_policy_set_network(pol, runs[i].net, &verr);
		if (rc == 0 && m->person[0])
			rc = ows_policy_set_run_as(pol, m->person, &verr);
		if (rc == 0)
			rc = ows_verify(pol, m->c, &report, &verr);
		ows_policy_free(pol);
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

/* Chooses the account provider in the machine's config: after the proof, never before. */
static int step_config(mctx *m, bool plan_only)
{
	const char *path = m->config_file;
	char *text = NULL;
	int rc = ows__read_file(path, &text, NULL, NULL);
	bool exists = rc == 0;
	if (rc < 0 && rc != OWS_ENOTFOUND)
		return ows__fail(m->err, OWS_ECONFIG, errno, path, NULL,
				 "cannot read the machine's config");
	char cur[64] = "";
	bool has = exists && ows__ini_get(text, "sandbox", "provider", cur, sizeof(cur));
	if (has && strcmp(cur, "account") == 0) {
		free(text);
		return 0;
	}
	change(m, "config", "after the proof passes, choose the account provider: [sandbox] "
			    "provider = account in %s", path);
	if (plan_only || !m->apply) {
		free(text);
		return 0;
	}
	json_t *cf = obj(m->rec, "config");
	if (!json_object_get(cf, "path")) {
		/* First change to the file: keep what was there, to put it back on remove. */
		json_object_set_new(cf, "path", json_string(path));
		json_object_set_new(cf, "existed", json_boolean(exists));
		json_object_set_new(cf, "previous", exists ? json_string(text) : json_null());
		json_object_set_new(cf, "previous_provider", has ? json_string(cur) : json_null());
	}
	char *next = NULL;
	struct stat st;
	unsigned mode = exists && stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if ((rc = mkdir_p(dir, arr(cf, "created_dirs"), m->err)) < 0)
			goto out;
	}
	if ((rc = save(m)) < 0 ||
	    (rc = ows__ini_set(text, "sandbox", "provider", "account", &next, m->err)) < 0 ||
	    (rc = ows__write_file(path, next, strlen(next), mode, m->err)) < 0)
		goto out;
	char sha[65];
	ows__sha256_hex(next, strlen(next), sha);
	json_object_set_new(cf, "written_sha256", json_string(sha));
	rc = save(m);
out:
	free(text);
	free(next);
	return rc;
}

/* Runs every step; stops at the first failure. */
static int run_steps(mctx *m)
{
	int rc;
	if ((rc = step_state_dir(m)) < 0 || (rc = step_account(m, "closed", m->c->closed_user)) < 0 ||
	    (rc = step_account(m, "open", m->c->open_user)) < 0 || (rc = step_group(m)) < 0 ||
	    (rc = step_subdir(m, "sandboxes", MODE_SANDBOXES, "per-session private folders")) < 0 ||
	    (rc = step_subdir(m, "journal", MODE_JOURNAL, "the grant journal")) < 0 ||
	    (rc = step_launcher(m)) < 0 || (rc = step_launcher_conf(m)) < 0 ||
	    (rc = step_nft(m)) < 0)
		return rc;
	if (!m->apply)
		return step_config(m, true);
	if ((rc = step_proof(m)) != 0)
		return rc;
	return step_config(m, false);
}

/* ---------------------------------------------------------------- plan */

int ows_machine_plan(const ows_config *c, const ows_setup_options *o, char **plan, ows_error *err)
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

int ows_machine_setup(const ows_config *c, const ows_setup_options *o, ows_error *err)
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

static void status_account(rows *r, json_t *rec, const char *role, const char *name,
			   const char *fix)
{
	char item[64];
	snprintf(item, sizeof(item), "%s account", role);
	json_t *acc = json_object_get(json_object_get(rec, "accounts"), role);
	struct passwd *pw = getpwnam(name);
	if (!pw) {
		row(r, item, "fail", fix, "%s does not exist", name);
		return;
	}
	json_t *uid = json_object_get(acc, "uid");
	if (rec && (!uid || json_integer_value(uid) != (json_int_t)pw->pw_uid)) {
		row(r, item, "fail", fix, "%s has uid %u, the record says %lld", name,
		    (unsigned)pw->pw_uid, uid ? (long long)json_integer_value(uid) : -1LL);
		return;
	}
	if (!is_nologin(pw->pw_shell)) {
		row(r, item, "fail", fix, "%s has a login shell (%s)", name, pw->pw_shell);
		return;
	}
	int locked = is_locked(name);
	if (locked == 0) {
		row(r, item, "fail", fix, "%s has a usable password", name);
		return;
	}
	row(r, item, rec ? "ok" : "fail", fix, "%s, uid %u, no login%s", name, (unsigned)pw->pw_uid,
	    locked < 0 ? " (lock not checked without root)" : ", locked");
}

static void status_dir(rows *r, const char *item, const char *path, unsigned mode, gid_t gid,
		       const char *gname, const char *fix)
{
	struct stat st;
	if (lstat(path, &st) < 0) {
		row(r, item, "fail", fix, "%s is missing", path);
		return;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || st.st_gid != gid ||
	    (st.st_mode & 07777) != mode) {
		row(r, item, "fail", fix, "%s is %04o %u:%u, want %04o root:%s", path,
		    st.st_mode & 07777, (unsigned)st.st_uid, (unsigned)st.st_gid, mode, gname);
		return;
	}
	row(r, item, "ok", fix, "%s %04o root:%s", path, mode, gname);
}

int ows_machine_status(const ows_config *c, char **status, ows_error *err)
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

	status_account(&r, rec, "closed", c->closed_user, fix);
	status_account(&r, rec, "open", c->open_user, fix);

	struct group *gr = getgrnam(c->group);
	gid_t gid = gr ? gr->gr_gid : (gid_t)-1;
	json_t *g = json_object_get(rec, "group");
	if (!gr)
		row(&r, "group", "fail", fix, "%s does not exist", c->group);
	else if (rec && json_integer_value(json_object_get(g, "gid")) != (json_int_t)gid)
		row(&r, "group", "fail", fix, "%s has gid %u, the record says %lld", c->group,
		    (unsigned)gid, (long long)json_integer_value(json_object_get(g, "gid")));
	else
		row(&r, "group", rec ? "ok" : "fail", fix, "%s, gid %u", c->group, (unsigned)gid);

	if (!person[0])
		row(&r, "membership", "ok", NULL, "root needs no membership");
	else if (gr && in_group(person, gid))
		row(&r, "membership", "ok", fix_person, "%s is in %s", person, c->group);
	else
		row(&r, "membership", "fail", fix_person, "%s is not in %s", person, c->group);

	/* The launcher: root-owned, the group's, setuid, and the file setup installed. */
	json_t *l = json_object_get(rec, "launcher");
	struct stat st;
	char sha[65];
	if (lstat(c->launcher, &st) < 0)
		row(&r, "launcher", "fail", fix, "%s is missing", c->launcher);
	else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_gid != gid ||
		 (st.st_mode & 07777) != MODE_LAUNCHER)
		row(&r, "launcher", "fail", fix, "%s is %04o %u:%u, want 4750 root:%s", c->launcher,
		    st.st_mode & 07777, (unsigned)st.st_uid, (unsigned)st.st_gid, c->group);
	else if (ows__sha256_file(c->launcher, sha, NULL) < 0)
		row(&r, "launcher", "ok", fix, "%s 4750 root:%s (content not checked: cannot read it)",
		    c->launcher, c->group);
	else if (!jstr(l, "sha256") || strcmp(sha, jstr(l, "sha256")) != 0)
		row(&r, "launcher", "fail", fix, "%s is not the file setup installed (sha256 %.12s)",
		    c->launcher, sha);
	else
		row(&r, "launcher", "ok", fix, "%s 4750 root:%s, sha256 %.12s as recorded",
		    c->launcher, c->group, sha);

	/* The launcher's own record: what it trusts, as setup wrote it for today's ids. */
	{
		char cpath[PATH_MAX + 8];
		conf_path(cpath, sizeof(cpath), c->launcher);
		json_t *lc = json_object_get(rec, "launcher_conf");
		char *want = NULL, *have = NULL;
		char wsha[65] = "";
		if (render_conf(c, &want, NULL) == 0)
			ows__sha256_hex(want, strlen(want), wsha);
		if (lstat(cpath, &st) < 0)
			row(&r, "launcher record", "fail", fix, "%s is missing", cpath);
		else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_gid != 0 ||
			 (st.st_mode & 07777) != MODE_LAUNCHER_CONF)
			row(&r, "launcher record", "fail", fix, "%s is %04o %u:%u, want 0644 root:root",
			    cpath, st.st_mode & 07777, (unsigned)st.st_uid, (unsigned)st.st_gid);
		else if (ows__read_file(cpath, &have, NULL, NULL) < 0 || !want ||
			 strcmp(have, want) != 0)
			row(&r, "launcher record", "fail", fix,
			    "%s does not hold today's account, group and state folder", cpath);
		else if (!jstr(lc, "sha256") || strcmp(wsha, jstr(lc, "sha256")) != 0)
			row(&r, "launcher record", "fail", fix, "%s is not the one setup recorded",
			    cpath);
		else
			row(&r, "launcher record", "ok", fix, "%s 0644 root:root, as recorded", cpath);
		free(want);
		free(have);
	}

	/* The firewall, compared with the table rendered for the recorded uid. */
	json_t *n = json_object_get(rec, "nft");
	if (geteuid() != 0) {
		row(&r, "firewall", "skipped", fix_status,
		    "table inet %s: cannot check without root (sessions prove it from inside)",
		    c->nft_table);
	} else if (!rec || !json_object_get(n, "closed_uid")) {
		row(&r, "firewall", "fail", fix, "table inet %s: nothing recorded", c->nft_table);
	} else {
		char *want = NULL, *have = NULL;
		uid_t uid = (uid_t)json_integer_value(json_object_get(n, "closed_uid"));
		int lrc = ows__nft_render(c->nft_table, uid, &want, NULL);
		char wsha[65] = "";
		if (want)
			ows__sha256_hex(want, strlen(want), wsha);
		if (lrc == 0)
			lrc = ows__nft_list(c->nft_table, &have, NULL);
		struct passwd *cpw = getpwnam(c->closed_user);
		if (lrc == OWS_ENOTFOUND)
			row(&r, "firewall", "fail", fix, "table inet %s is missing", c->nft_table);
		else if (lrc < 0)
			row(&r, "firewall", "fail", fix, "cannot list table inet %s", c->nft_table);
		else if (!same_table(have, want) || !jstr(n, "ruleset_sha256") ||
			 strcmp(wsha, jstr(n, "ruleset_sha256")) != 0)
			row(&r, "firewall", "fail", fix, "table inet %s differs from the one setup loaded",
			    c->nft_table);
		else if (!cpw || cpw->pw_uid != uid)
			row(&r, "firewall", "fail", fix, "table inet %s is for uid %u, not the closed "
			    "account's", c->nft_table, (unsigned)uid);
		else
			row(&r, "firewall", "ok", fix, "table inet %s as loaded, for uid %u",
			    c->nft_table, (unsigned)uid);
		free(want);
		free(have);
	}

	/* The state folder and what lives in it. */
	status_dir(&r, "state folder", c->state_dir, MODE_STATE, 0, "root", fix);
	char sub[PATH_MAX];
	snprintf(sub, sizeof(sub), "%s/sandboxes", c->state_dir);
	status_dir(&r, "private folders", sub, MODE_SANDBOXES, gid, c->group, fix);
	snprintf(sub, sizeof(sub), "%s/journal", c->state_dir);
	status_dir(&r, "grant journal", sub, MODE_JOURNAL, gid, c->group, fix);

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

static int remove_config(mctx *m, json_t *cf)
{
	const char *path = jstr(cf, "path");
	if (!path)
		return 0;
	char *text = NULL;
	int rc = ows__read_file(path, &text, NULL, NULL);
	bool exists = rc == 0;
	char sha[65] = "";
	if (exists)
		ows__sha256_hex(text, strlen(text), sha);
	const char *written = jstr(cf, "written_sha256");
	json_t *prev = json_object_get(cf, "previous");
	rc = 0;
	if (exists && written && strcmp(sha, written) == 0) {
		/* Untouched since setup wrote it: put back exactly what was there. */
		progress(m, "config: %s %s", json_is_string(prev) ? "restore" : "remove", path);
		if (json_is_string(prev)) {
			struct stat st;
			unsigned mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
			rc = ows__write_file(path, json_string_value(prev),
					     json_string_length(prev), mode, m->err);
		} else if (unlink(path) < 0 && errno != ENOENT) {
			rc = ows__fail_sys(m->err, path, NULL, "cannot remove the config file");
		}
	} else if (exists) {
		/* Edited since: undo only the provider line, keep the rest of their edits. */
		const char *pp = jstr(cf, "previous_provider");
		char cur[64] = "";
		if (ows__ini_get(text, "sandbox", "provider", cur, sizeof(cur)) &&
		    strcmp(cur, "account") == 0) {
			progress(m, "config: %s has changed since setup: only the provider line is put "
				    "back", path);
			char *next = NULL;
			struct stat st;
			unsigned mode = stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
			rc = ows__ini_set(text, "sandbox", "provider", pp, &next, m->err);
			if (rc == 0)
				rc = ows__write_file(path, next, strlen(next), mode, m->err);
			free(next);
		}
	}
	free(text);
	if (rc < 0)
		return rc;
	rmdir_created(json_object_get(cf, "created_dirs"));
	json_object_del(m->rec, "config");
	return save(m);
}

static int remove_nft(mctx *m, json_t *n)
{
	const char *table = jstr(n, "table");
	if (!table)
		return 0;
	int rc;
	if (!ows__name_is_safe(table))
		return ows__fail(m->err, OWS_ESETUP, 0, table, NULL, "the record names an unsafe table");
	if (json_is_string(json_object_get(n, "previous"))) {
		progress(m, "firewall: put back the table inet %s that was there before setup", table);
		rc = ows__nft_load(table, jstr(n, "previous"), m->err);
	} else {
		progress(m, "firewall: delete table inet %s", table);
		rc = ows__nft_delete(table, m->err);
	}
	if (rc < 0)
		return rc;
	json_object_del(m->rec, "nft");
	return save(m);
}

static int remove_launcher_conf(mctx *m, json_t *lc)
{
	const char *path = jstr(lc, "path");
	if (path && jtrue(lc, "created")) {
		progress(m, "launcher record: remove %s", path);
		if (unlink(path) < 0 && errno != ENOENT)
			return ows__fail_sys(m->err, path, NULL, "cannot remove the launcher's record");
	}
	json_object_del(m->rec, "launcher_conf");
	return save(m);
}

static int remove_launcher(mctx *m, json_t *l)
{
	const char *path = jstr(l, "path");
	if (path && jtrue(l, "installed")) {
		progress(m, "launcher: remove %s", path);
		if (unlink(path) < 0 && errno != ENOENT)
			return ows__fail_sys(m->err, path, NULL, "cannot remove the launcher");
	}
	rmdir_created(json_object_get(l, "created_dirs"));
	json_object_del(m->rec, "launcher");
	return save(m);
}

static int remove_group(mctx *m, json_t *g)
{
	const char *name = jstr(g, "name");
	if (!name)
		return 0;
	if (!ows__name_is_safe(name))
		return ows__fail(m->err, OWS_ESETUP, 0, name, NULL, "the record names an unsafe group");
	struct group *gr = getgrnam(name);
	int rc = 0;
	if (gr && jtrue(g, "created")) {
		progress(m, "group: delete %s (groupdel %s)", name, name);
		const char *argv[] = {GROUPDEL, name, NULL};
		rc = ows__cmd_run(argv, NULL, NULL, m->err);
	} else if (gr) {
		json_t *added = json_object_get(g, "members_added");
		size_t i;
		json_t *v;
		json_array_foreach(added, i, v) {
			const char *who = json_string_value(v);
			if (!who || !ows__name_is_safe(who) || !in_group(who, gr->gr_gid))
				continue;
			progress(m, "group: take %s out of %s, which was there before setup", who, name);
			const char *argv[] = {GPASSWD, "-d", who, name, NULL};
			if ((rc = ows__cmd_run(argv, NULL, NULL, m->err)) < 0)
				break;
			gr = getgrnam(name);
			if (!gr)
				break;
		}
	}
	if (rc < 0)
		return rc;
	json_object_del(m->rec, "group");
	return save(m);
}

static int remove_account(mctx *m, const char *role)
{
	json_t *accs = json_object_get(m->rec, "accounts");
	json_t *acc = json_object_get(accs, role);
	const char *name = jstr(acc, "name");
	if (!name)
		return 0;
	if (!ows__name_is_safe(name))
		return ows__fail(m->err, OWS_ESETUP, 0, name, NULL, "the record names an unsafe account");
	struct passwd *pw = getpwnam(name);
	if (pw && jtrue(acc, "created")) {
		if (json_integer_value(json_object_get(acc, "uid")) != (json_int_t)pw->pw_uid) {
			note(m, "account %s now has uid %u, not the recorded one: left alone", name,
			     (unsigned)pw->pw_uid);
			progress(m, "%s account: %s has another uid than recorded: left alone", role, name);
		} else {
			progress(m, "%s account: delete %s (userdel %s)", role, name, name);
			const char *argv[] = {USERDEL, name, NULL};
			int rc = ows__cmd_run(argv, NULL, NULL, m->err);
			if (rc < 0)
				return rc;
		}
	}
	json_object_del(accs, role);
	return save(m);
}

static int remove_state(mctx *m, json_t *sd)
{
	static const char *const subs[] = {"sandboxes", "journal"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(subs); i++) {
		json_t *d = json_object_get(sd, subs[i]);
		const char *path = jstr(d, "path");
		if (!path || !jtrue(d, "created"))
			continue;
		progress(m, "state folder: remove %s", path);
		int dfd = open(m->c->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dfd >= 0) {
			ows__rmtree_at(dfd, subs[i]);
			close(dfd);
		}
	}
	char rpath[PATH_MAX];
	snprintf(rpath, sizeof(rpath), "%s/%s", m->c->state_dir, OWS__RECORD_FILE);
	progress(m, "state folder: remove %s", rpath);
	if (unlink(rpath) < 0 && errno != ENOENT)
		return ows__fail_sys(m->err, rpath, NULL, "cannot remove the setup record");
	json_t *created = json_object_get(sd, "created_dirs");
	if (json_array_size(created))
		progress(m, "state folder: remove %s",
			 json_string_value(json_array_get(created, 0)));
	rmdir_created(created);
	if (json_array_size(created))
		note(m, "%s is not empty and was left in place",
		     json_string_value(json_array_get(created, json_array_size(created) - 1)));
	return 0;
}

int ows_machine_remove(const ows_config *c, const ows_setup_options *o, ows_error *err)
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
	json_t *rec = m.rec;
	if ((rc = remove_config(&m, json_object_get(rec, "config"))) < 0 ||
	    (rc = remove_nft(&m, json_object_get(rec, "nft"))) < 0 ||
	    (rc = remove_launcher_conf(&m, json_object_get(rec, "launcher_conf"))) < 0 ||
	    (rc = remove_launcher(&m, json_object_get(rec, "launcher"))) < 0 ||
	    (rc = remove_group(&m, json_object_get(rec, "group"))) < 0 ||
	    (rc = remove_account(&m, "closed")) < 0 || (rc = remove_account(&m, "open")) < 0)
		goto out;
	rc = remove_state(&m, json_object_get(rec, "state_dir"));
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
	/* Only root may have written what the record says, or it says nothing. */
	struct stat st;
	char rpath[PATH_MAX];
	snprintf(rpath, sizeof(rpath), "%s/%s", c->state_dir, OWS__RECORD_FILE);
	if (lstat(c->state_dir, &st) == 0 &&
	    (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)))
		return broken(err, c->state_dir, fix, "the state folder is not root's alone");
	if (lstat(rpath, &st) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022)))
		return broken(err, rpath, fix, "the setup record is not root's alone");
	json_t *rec = NULL;
	ows_error lerr;
	ows_error_clear(&lerr);
	int rc = ows__record_load(c->state_dir, &rec, &lerr);
	if (rc < 0)
		return broken(err, lerr.where, fix,
			      rc == OWS_ENOTFOUND ? "there is no setup record" : lerr.what);
	struct ows__machine m;
	memset(&m, 0, sizeof(m));
	json_t *accs = json_object_get(rec, "accounts");
	struct {
		const char *role, *name;
		uid_t *uid;
		gid_t *gid;
		char *dst;
	} want[] = {{"closed", c->closed_user, &m.closed_uid, &m.closed_gid, m.closed_user},
		    {"open", c->open_user, &m.open_uid, &m.open_gid, m.open_user}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(want); i++) {
		json_t *acc = json_object_get(accs, want[i].role);
		const char *name = jstr(acc, "name");
		struct passwd *pw = name ? getpwnam(name) : NULL;
		if (!name || strcmp(name, want[i].name) != 0) {
			rc = broken(err, want[i].name, fix, "the config names another account than setup made");
			goto out;
		}
		if (!pw || json_integer_value(json_object_get(acc, "uid")) != (json_int_t)pw->pw_uid ||
		    pw->pw_uid == 0) {
			char what[160];
			snprintf(what, sizeof(what), "the %s account %s is %s", want[i].role, name,
				 pw ? "not the one setup recorded" : "missing");
			rc = broken(err, name, fix, what);
			goto out;
		}
		*want[i].uid = pw->pw_uid;
		*want[i].gid = pw->pw_gid;
		snprintf(want[i].dst, 32, "%s", name);
	}
	json_t *g = json_object_get(rec, "group");
	struct group *gr = getgrnam(c->group);
	if (!gr || json_integer_value(json_object_get(g, "gid")) != (json_int_t)gr->gr_gid) {
		rc = broken(err, c->group, fix, gr ? "the group is not the one setup recorded"
						    : "the group is missing");
		goto out;
	}
	m.group_gid = gr->gr_gid;
	snprintf(m.group, sizeof(m.group), "%s", c->group);

	json_t *l = json_object_get(rec, "launcher");
	if (!jstr(l, "path") || strcmp(jstr(l, "path"), c->launcher) != 0 ||
	    lstat(c->launcher, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    st.st_gid != m.group_gid || (st.st_mode & 07777) != MODE_LAUNCHER) {
		rc = broken(err, c->launcher, fix,
			    "the launcher is missing or not root-owned, the group's and mode 4750");
		goto out;
	}
	/* What the launcher will trust: it must say what the record says, for today's ids. */
	{
		char cpath[PATH_MAX + 8], sha[65] = "";
		conf_path(cpath, sizeof(cpath), c->launcher);
		const char *recorded = jstr(json_object_get(rec, "launcher_conf"), "sha256");
		if (lstat(cpath, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
		    (st.st_mode & 022) || ows__sha256_file(cpath, sha, NULL) < 0 || !recorded ||
		    strcmp(sha, recorded) != 0) {
			rc = broken(err, cpath, fix,
				    "the launcher's record is missing, changed or not root's alone");
			goto out;
		}
	}
	snprintf(m.launcher, sizeof(m.launcher), "%s", c->launcher);
	snprintf(m.state_dir, sizeof(m.state_dir), "%s", c->state_dir);
	snprintf(m.sandboxes_dir, sizeof(m.sandboxes_dir), "%s/sandboxes", c->state_dir);
	snprintf(m.journal_dir, sizeof(m.journal_dir), "%s/journal", c->state_dir);
	const struct { const char *p; unsigned mode; } dirs[] = {
		{m.sandboxes_dir, MODE_SANDBOXES}, {m.journal_dir, MODE_JOURNAL}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(dirs); i++) {
		if (lstat(dirs[i].p, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
		    st.st_gid != m.group_gid || (st.st_mode & 07777) != dirs[i].mode) {
			rc = broken(err, dirs[i].p, fix, "a state folder is missing or has the wrong owner or mode");
			goto out;
		}
	}
	json_t *n = json_object_get(rec, "nft");
	if (!jstr(n, "table") || strcmp(jstr(n, "table"), c->nft_table) != 0 ||
	    json_integer_value(json_object_get(n, "closed_uid")) != (json_int_t)m.closed_uid) {
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
