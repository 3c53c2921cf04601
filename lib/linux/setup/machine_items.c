/*
 * The setup items: for each, the one inspect that plan, status and the
 * per-session check judge it by, the step that plans and applies it, and
 * the undo that `remove` runs.  What each item is, and why, is said at the
 * top of machine.c; the table that orders them is there too.
 *
 * An inspect only looks: it changes nothing and saves nothing, so status
 * and the per-session check may run it as anyone.  A step inspects, lists
 * what differs, and (when applying) changes it and saves the record, so a
 * setup cut short leaves a record that says what it did.
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

#include "linux/wall/launch.h"
#include "linux/linux.h"
#include "machine.h"
#include "record.h"

static const char USERADD[] = "/usr/sbin/useradd";
static const char USERDEL[] = "/usr/sbin/userdel";
static const char USERMOD[] = "/usr/sbin/usermod";
static const char GROUPADD[] = "/usr/sbin/groupadd";
static const char GROUPDEL[] = "/usr/sbin/groupdel";
static const char GPASSWD[] = "/usr/bin/gpasswd";
static const char NOLOGIN[] = "/usr/sbin/nologin";

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

static bool same_table(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	while (la && (a[la - 1] == '\n' || a[la - 1] == ' '))
		la--;
	while (lb && (b[lb - 1] == '\n' || b[lb - 1] == ' '))
		lb--;
	return la == lb && memcmp(a, b, la) == 0;
}

/* ------------------------------------------------------------- inspect */

void ows__seen_free(seen *s)
{
	free(s->have);
	free(s->want);
	s->have = s->want = NULL;
}

/*
 * What is at s->path: exists, and its owner, group and mode; kind_ok when it
 * is of `kind` (S_IFDIR, S_IFREG); root_alone when, besides, it is root's
 * and neither group nor others may write it; meta_ok when it is owned
 * root:gid with exactly `mode`.
 */
static void look_at(seen *s, mode_t kind, gid_t gid, unsigned mode)
{
	struct stat st;
	if (lstat(s->path, &st) < 0)
		return;
	s->exists = true;
	s->uid = st.st_uid;
	s->gid = st.st_gid;
	s->mode = st.st_mode & 07777;
	s->kind_ok = (st.st_mode & S_IFMT) == kind;
	s->root_alone = s->kind_ok && st.st_uid == 0 && !(st.st_mode & 022);
	s->meta_ok = s->kind_ok && st.st_uid == 0 && st.st_gid == gid && s->mode == mode;
}

/* The state folder: look_at, wanting it->mode (0755) root:root. */
int ows__inspect_state_dir(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", sc->c->state_dir);
	look_at(s, S_IFDIR, 0, it->mode);
	return 0;
}

static const char *account_name(const ows__item *it, const ows_config *c)
{
	return strcmp(it->key, "closed") == 0 ? c->closed_user : c->open_user;
}

/*
 * An account: exists, its uid, gid and shell, nologin, locked (when deep);
 * recorded when the record holds its uid.
 */
int ows__inspect_account(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	s->locked = -1;
	const char *name = account_name(it, sc->c);
	struct passwd *pw = getpwnam(name);
	if (!pw)
		return 0;
	s->exists = true;
	s->uid = pw->pw_uid;
	s->gid = pw->pw_gid;
	snprintf(s->shell, sizeof(s->shell), "%s", pw->pw_shell);
	s->nologin = is_nologin(s->shell);
	json_t *acc = json_object_get(json_object_get(sc->rec, "accounts"), it->key);
	json_t *uid = json_object_get(acc, "uid");
	s->recorded = uid && json_integer_value(uid) == (json_int_t)s->uid;
	/* Root reads the shadow file for this; each session need not. */
	if (sc->deep)
		s->locked = is_locked(name);
	return 0;
}

/*
 * The group: exists, its gid, member (the scope's person is in it);
 * recorded when the record holds its gid.
 */
int ows__inspect_group(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	struct group *gr = getgrnam(sc->c->group);
	if (!gr)
		return 0;
	s->exists = true;
	s->gid = gr->gr_gid;
	json_t *gid = json_object_get(json_object_get(sc->rec, "group"), "gid");
	s->recorded = json_integer_value(gid) == (json_int_t)s->gid;
	s->member = sc->person && sc->person[0] && in_group(sc->person, s->gid);
	return 0;
}

/* A folder of ours under the state folder: look_at, wanting it->mode root:group. */
int ows__inspect_subdir(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s/%s", sc->c->state_dir, it->key);
	look_at(s, S_IFDIR, sc->group_gid, it->mode);
	return 0;
}

/*
 * The launcher: look_at, wanting it->mode (4750) root:group; when deep, read (its
 * sha256) and recorded_content; recorded when the record names its path.
 */
int ows__inspect_launcher(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	const char *path = sc->c->launcher;
	snprintf(s->path, sizeof(s->path), "%s", path);
	look_at(s, S_IFREG, sc->group_gid, it->mode);
	json_t *l = json_object_get(sc->rec, "launcher");
	s->recorded = jstr(l, "path") && strcmp(jstr(l, "path"), path) == 0;
	if (sc->deep && s->kind_ok)
		s->read = ows__sha256_file(path, s->sha256, NULL) == 0;
	const char *recorded = jstr(l, "sha256");
	s->recorded_content = s->read && recorded && strcmp(s->sha256, recorded) == 0;
	return 0;
}

/*
 * The launcher's record: look_at, wanting it->mode (0644) root:root; read (have and
 * its sha256) and recorded_content; when deep, want (rendered for today's
 * ids, NULL while an account or the group is missing) and content_ok.
 */
int ows__inspect_launcher_conf(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	conf_path(s->path, sizeof(s->path), sc->c->launcher);
	look_at(s, S_IFREG, 0, it->mode);
	size_t len = 0;
	if (s->kind_ok && ows__read_file(s->path, &s->have, &len, NULL) == 0) {
		s->read = true;
		ows__sha256_hex(s->have, len, s->sha256);
	}
	const char *recorded = jstr(json_object_get(sc->rec, "launcher_conf"), "sha256");
	s->recorded_content = s->read && recorded && strcmp(s->sha256, recorded) == 0;
	if (!sc->deep)
		return 0;
	int rc = render_conf(sc->c, &s->want, err);
	if (rc < 0 && rc != OWS_ENOTFOUND)
		return rc;
	s->content_ok = s->read && s->want && len == strlen(s->want) &&
			strcmp(s->have, s->want) == 0;
	return 0;
}

/*
 * The firewall, for sc->closed_uid: recorded when the record names this
 * table for that uid; when deep and that uid is known, want (the table
 * rendered for it) and recorded_content (the record holds its sha256); with
 * root besides, listed, exists, have and content_ok.
 */
int ows__inspect_nft(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	const char *table = sc->c->nft_table;
	snprintf(s->path, sizeof(s->path), "%s", table);
	json_t *n = json_object_get(sc->rec, "nft");
	json_t *uid = json_object_get(n, "closed_uid");
	s->recorded = jstr(n, "table") && strcmp(jstr(n, "table"), table) == 0 &&
		      json_integer_value(uid) == (json_int_t)sc->closed_uid;
	if (!sc->deep || sc->closed_uid == (uid_t)-1)
		return 0;
	int rc = ows__nft_render(table, sc->closed_uid, &s->want, err);
	if (rc < 0)
		return rc;
	char sha[65];
	ows__sha256_hex(s->want, strlen(s->want), sha);
	const char *recorded = jstr(n, "ruleset_sha256");
	s->recorded_content = recorded && strcmp(sha, recorded) == 0;
	if (!sc->root)
		return 0;
	s->listed = true;
	rc = ows__nft_list(table, &s->have, err);
	if (rc < 0 && rc != OWS_ENOTFOUND)
		return rc;
	s->exists = rc == 0;
	s->content_ok = s->exists && same_table(s->have, s->want);
	return 0;
}

/*
 * The machine's config: exists, have (its text), has_provider and provider;
 * content_ok when the provider is "account".
 */
int ows__inspect_config(const ows__item *it, const scope *sc, seen *s, ows_error *err)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", sc->config_file);
	int rc = ows__read_file(s->path, &s->have, NULL, NULL);
	if (rc < 0 && rc != OWS_ENOTFOUND)
		return ows__fail(err, OWS_ECONFIG, errno, s->path, NULL,
				 "cannot read the machine's config");
	s->exists = s->read = rc == 0;
	s->has_provider = s->exists && ows__ini_get(s->have, "sandbox", "provider", s->provider,
						    sizeof(s->provider));
	s->content_ok = s->has_provider && strcmp(s->provider, "account") == 0;
	return 0;
}

/* --------------------------------------------------------------- apply */

int ows__apply_state_dir(const ows__item *it, mctx *m)
{
	const char *dir = m->c->state_dir;
	json_t *sd = obj(m->rec, "state_dir");
	json_object_set_new(sd, "path", json_string(dir));
	scope sc = setup_scope(m);
	seen s;
	ows__inspect_state_dir(it, &sc, &s, m->err);
	if (!s.exists) {
		change(m, it->name, "create %s (0755 root:root) for the setup record", dir);
		if (!m->apply)
			return 0;
		int rc = mkdir_p(dir, arr(sd, "created_dirs"), m->err);
		if (rc == 0 && (chown(dir, 0, 0) < 0 || chmod(dir, MODE_STATE) < 0))
			rc = ows__fail_sys(m->err, dir, NULL, "cannot set the folder's owner and mode");
		if (rc == 0)
			rc = save(m);
		return rc;
	}
	if (!s.kind_ok)
		return ows__fail(m->err, OWS_ESETUP, 0, dir, "choose another state_dir in [sandbox]",
				 "the state folder is not a folder");
	if (!s.root_alone) {
		if (json_array_size(json_object_get(sd, "created_dirs")) == 0)
			return ows__fail(m->err, OWS_ESETUP, 0, dir,
					 "make it root-owned and not writable by others, or choose "
					 "another state_dir",
					 "the state folder exists and others could change the record");
		change(m, it->name, "set %s back to 0755 root:root", dir);
		if (m->apply && (chown(dir, 0, 0) < 0 || chmod(dir, MODE_STATE) < 0))
			return ows__fail_sys(m->err, dir, NULL, "cannot set the folder's owner and mode");
	}
	return save(m);
}

int ows__apply_account(const ows__item *it, mctx *m)
{
	const char *role = it->key, *name = account_name(it, m->c);
	json_t *acc = obj(obj(m->rec, "accounts"), role);
	json_object_set_new(acc, "name", json_string(name));
	scope sc = setup_scope(m);
	seen s;
	ows__inspect_account(it, &sc, &s, m->err);
	bool ours = jtrue(acc, "created");
	if (!s.exists) {
		change(m, it->name,
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
		ows__inspect_account(it, &sc, &s, m->err);
		if (!s.exists)
			return ows__fail(m->err, OWS_ESYS, 0, name, NULL,
					 "useradd succeeded but the account is not there");
		ours = true;
	} else if (!json_object_get(acc, "created")) {
		/* There before us: usable only if nobody can log in as it. */
		if (s.uid == 0 || !s.nologin || s.locked == 0)
			return ows__fail(m->err, OWS_ESETUP, 0, name,
					 "choose another name in [account] of the machine's config",
					 "the account exists and can log in: it cannot be a sandbox account");
		note(m, "%s account %s exists already (uid %u): it is used and will stay on remove",
		     role, name, (unsigned)s.uid);
		json_object_set_new(acc, "created", json_false());
	} else if (json_object_get(acc, "uid") && !s.recorded) {
		note(m, "%s account %s has a new uid %u (recorded %lld): the firewall follows it",
		     role, name, (unsigned)s.uid,
		     (long long)json_integer_value(json_object_get(acc, "uid")));
	}
	if (ours) {
		if (!s.nologin) {
			change(m, it->name, "give %s no login shell: usermod --shell %s %s", name,
			       NOLOGIN, name);
			const char *argv[] = {USERMOD, "--shell", NOLOGIN, name, NULL};
			int rc = m->apply ? ows__cmd_run(argv, NULL, NULL, m->err) : 0;
			if (rc < 0)
				return rc;
		}
		if (s.locked == 0) {
			change(m, it->name, "lock %s: usermod --lock %s", name, name);
			const char *argv[] = {USERMOD, "--lock", name, NULL};
			int rc = m->apply ? ows__cmd_run(argv, NULL, NULL, m->err) : 0;
			if (rc < 0)
				return rc;
		}
	}
	json_object_set_new(acc, "uid", json_integer(s.uid));
	json_object_set_new(acc, "gid", json_integer(s.gid));
	if (strcmp(role, "closed") == 0)
		m->closed_uid = s.uid;
	return save(m);
}

int ows__apply_group(const ows__item *it, mctx *m)
{
	const char *name = m->c->group;
	json_t *g = obj(m->rec, "group");
	json_object_set_new(g, "name", json_string(name));
	scope sc = setup_scope(m);
	seen s;
	ows__inspect_group(it, &sc, &s, m->err);
	if (!s.exists) {
		bool ours = jtrue(g, "created");
		change(m, it->name, "%s group %s for people allowed to start sandboxes: groupadd --system %s",
		       ours ? "re-create (it was deleted)" : "create", name, name);
		if (m->apply) {
			const char *argv[] = {GROUPADD, "--system", name, NULL};
			int rc = ows__cmd_run(argv, NULL, NULL, m->err);
			if (rc < 0)
				return rc;
			json_object_set_new(g, "created", json_true());
			if (ours) /* members we added went with the group */
				json_object_set_new(g, "members_added", json_array());
			ows__inspect_group(it, &sc, &s, m->err);
			if (!s.exists)
				return ows__fail(m->err, OWS_ESYS, 0, name, NULL,
						 "groupadd succeeded but the group is not there");
		}
	} else if (!json_object_get(g, "created")) {
		note(m, "group %s exists already: it is used and will stay on remove", name);
		json_object_set_new(g, "created", json_false());
	}
	if (s.exists) {
		m->group_gid = s.gid;
		json_object_set_new(g, "gid", json_integer(s.gid));
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
	if (s.member)
		return 0;
	change(m, it->name, "add %s to %s (gpasswd -a %s %s); it takes effect at their next login",
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
int ows__apply_subdir(const ows__item *it, mctx *m)
{
	json_t *sd = obj(m->rec, "state_dir");
	scope sc = setup_scope(m);
	seen s;
	ows__inspect_subdir(it, &sc, &s, m->err);
	const char *path = s.path;
	json_t *d = obj(sd, it->key);
	json_object_set_new(d, "path", json_string(path));
	json_object_set_new(d, "mode", json_sprintf("%04o", it->mode));
	if (s.exists && !s.kind_ok)
		return ows__fail(m->err, OWS_ESETUP, 0, path, "move it away, then run setup again",
				 "not a folder");
	if (s.meta_ok)
		return save(m);
	if (s.exists && !jtrue(d, "created") && m->group_gid != (gid_t)-1)
		return ows__fail(m->err, OWS_ESETUP, 0, path, "move it away, then run setup again",
				 "the folder exists and was not made by setup");
	if (!s.exists)
		change(m, it->name, "create %s (%04o root:%s): %s", path, it->mode, m->c->group,
		       it->why);
	else
		change(m, it->name, "set %s back to %04o root:%s", path, it->mode, m->c->group);
	if (!m->apply)
		return 0;
	if (!s.exists) {
		if (mkdir(path, 0700) < 0)
			return ows__fail_sys(m->err, path, NULL, "cannot create the folder");
		json_object_set_new(d, "created", json_true());
	}
	if (chown(path, 0, m->group_gid) < 0 || chmod(path, it->mode) < 0)
		return ows__fail_sys(m->err, path, NULL, "cannot set the folder's owner and mode");
	return save(m);
}

int ows__apply_launcher(const ows__item *it, mctx *m)
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
	scope sc = setup_scope(m);
	seen s;
	ows__inspect_launcher(it, &sc, &s, m->err);
	if (s.exists && !s.read)
		return ows__fail(m->err, OWS_ESETUP, 0, dst, "move it away, then run setup again",
				 "the launcher's path holds something that is not a readable file");
	if (!want && !s.exists) {
		change(m, it->name, "install the launcher at %s: no launcher given", dst);
		return ows__fail(m->err, OWS_ESETUP, 0, dst,
				 "build owsbx-launch and run setup with --launcher-source PATH",
				 "there is no launcher to install");
	}
	if (s.exists && !ours && !json_object_get(l, "installed")) {
		if (!want || strcmp(want, s.sha256) != 0)
			return ows__fail(m->err, OWS_ESETUP, 0, dst,
					 "move it away, or set another launcher path in [account]",
					 "a different file is already at the launcher's path");
		note(m, "the launcher at %s is there already and identical: it is used and will "
			"stay on remove", dst);
		json_object_set_new(l, "installed", json_false());
	}
	bool content_ok = s.exists && want && strcmp(want, s.sha256) == 0;
	if (content_ok && s.meta_ok) {
		json_object_set_new(l, "sha256", json_string(s.sha256));
		json_object_set_new(l, "mode", json_string("4750"));
		return save(m);
	}
	if (s.exists && !ours)
		return ows__fail(m->err, OWS_ESETUP, 0, dst, "fix its owner and mode by hand",
				 "the launcher that was there before setup has the wrong owner or mode");
	if (content_ok) {
		change(m, it->name, "set %s to root:%s mode 4750", dst, m->c->group);
		if (!m->apply)
			return 0;
		if (chown(dst, 0, m->group_gid) < 0 || chmod(dst, MODE_LAUNCHER) < 0)
			return ows__fail_sys(m->err, dst, NULL, "cannot set the launcher's owner and mode");
		snprintf(dst_sha, sizeof(dst_sha), "%s", s.sha256);
	} else {
		if (!src)
			return ows__fail(m->err, OWS_ESETUP, 0, dst,
					 "run setup with --launcher-source PATH to install it again",
					 "the installed launcher is not the one setup recorded");
		change(m, it->name, "%s %s as %s (setuid root, group %s, mode 4750)",
		       s.exists ? "replace" : "install", src, dst, m->c->group);
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

int ows__apply_launcher_conf(const ows__item *it, mctx *m)
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
	scope sc = setup_scope(m);
	seen s;
	int rc = ows__inspect_launcher_conf(it, &sc, &s, m->err);
	if (rc < 0)
		goto out;
	if (!s.want) {
		change(m, it->name, "write %s (0644 root:root): the accounts' and the "
			  "group's ids and the state folder, for the launcher", path);
		goto out;
	}
	bool ours = jtrue(lc, "created");
	if (s.exists && !s.read) {
		rc = ows__fail(m->err, OWS_ESETUP, 0, path, "move it away, then run setup again",
			       "the launcher record's path holds something that is not a readable file");
		goto out;
	}
	if (s.exists && !ours && !json_object_get(lc, "created")) {
		if (!s.content_ok) {
			rc = ows__fail(m->err, OWS_ESETUP, 0, path,
				       "move it away, or set another launcher path in [account]",
				       "a different launcher record is already there");
			goto out;
		}
		note(m, "the launcher record %s is there already and identical: it is used and "
			"will stay on remove", path);
		json_object_set_new(lc, "created", json_false());
	}
	if (!(s.content_ok && s.meta_ok)) {
		if (s.exists && !ours) {
			rc = ows__fail(m->err, OWS_ESETUP, 0, path, "fix its owner and mode by hand",
				       "the launcher record that was there before setup has the "
				       "wrong owner or mode");
			goto out;
		}
		change(m, it->name, "%s %s (0644 root:root): closed, open and group ids, "
			  "state folder %s", s.exists ? (s.content_ok ? "set the owner and mode of"
							      : "rewrite")
						    : "write", path, m->c->state_dir);
		if (!m->apply)
			goto out;
		if ((rc = ows__write_file(path, s.want, strlen(s.want), MODE_LAUNCHER_CONF, m->err)) < 0)
			goto out;
		if (chown(path, 0, 0) < 0 || chmod(path, MODE_LAUNCHER_CONF) < 0) {
			rc = ows__fail_sys(m->err, path, NULL, "cannot set the record's owner and mode");
			goto out;
		}
		json_object_set_new(lc, "created", json_true());
	}
	char sha[65];
	ows__sha256_hex(s.want, strlen(s.want), sha);
	json_object_set_new(lc, "sha256", json_string(sha));
	rc = save(m);
out:
	ows__seen_free(&s);
	return rc;
}

int ows__apply_nft(const ows__item *it, mctx *m)
{
	const char *table = m->c->nft_table;
	json_t *n = obj(m->rec, "nft");
	json_object_set_new(n, "table", json_string(table));
	if (m->closed_uid == (uid_t)-1) {
		change(m, it->name, "load nftables table inet %s: the closed account (uid given at "
			"creation) reaches only 127.0.0.1 tcp %d-%d, everything else refused at once",
		       table, OWS__PROXY_PORT_FIRST, OWS__PROXY_PORT_LAST);
		return 0;
	}
	scope sc = setup_scope(m);
	seen s;
	int rc = ows__inspect_nft(it, &sc, &s, m->err);
	if (rc < 0)
		goto out;
	if (!s.listed) {
		change(m, it->name, "load nftables table inet %s if it differs (cannot read the "
			"firewall without root)", table);
		goto out;
	}
	if (s.exists && !json_object_get(n, "created")) {
		/* A table of that name from before setup: keep it, to put it back on remove. */
		json_object_set_new(n, "previous", json_string(s.have));
	}
	if (!json_object_get(n, "created"))
		json_object_set_new(n, "created", json_boolean(!s.exists));
	char sha[65];
	ows__sha256_hex(s.want, strlen(s.want), sha);
	if (!s.content_ok) {
		change(m, it->name, "%s nftables table inet %s: uid %u (the closed account) reaches "
			"only 127.0.0.1 tcp %d-%d and may answer connections made to it; tcp is "
			"reset, the rest refused (admin-prohibited)",
		       s.exists ? "replace" : "load", table, (unsigned)m->closed_uid,
		       OWS__PROXY_PORT_FIRST, OWS__PROXY_PORT_LAST);
		if (!m->apply)
			goto out;
		if ((rc = ows__nft_load(table, s.want, m->err)) < 0)
			goto out;
		/* What the kernel holds now must be what was loaded. */
		ows__seen_free(&s);
		if ((rc = ows__inspect_nft(it, &sc, &s, m->err)) < 0 || !s.content_ok) {
			rc = ows__fail(m->err, OWS_ESETUP, 0, table, "report this with `nft list ruleset`",
				       "the firewall table the kernel holds differs from the one loaded");
			goto out;
		}
	}
	json_object_set_new(n, "closed_uid", json_integer(m->closed_uid));
	json_object_set_new(n, "ruleset_sha256", json_string(sha));
	rc = save(m);
out:
	ows__seen_free(&s);
	return rc;
}

/*
 * Chooses the account provider in the machine's config: after the proof,
 * never before.  The plan lists it; setup applies it once the proof passed.
 */
int ows__apply_config(const ows__item *it, mctx *m)
{
	scope sc = setup_scope(m);
	seen s;
	int rc = ows__inspect_config(it, &sc, &s, m->err);
	if (rc < 0 || s.content_ok)
		goto out;
	const char *path = m->config_file;
	change(m, it->name, "after the proof passes, choose the account provider: "
			  "[sandbox] provider = account in %s", path);
	if (!m->apply)
		goto out;
	json_t *cf = obj(m->rec, "config");
	if (!json_object_get(cf, "path")) {
		/* First change to the file: keep what was there, to put it back on remove. */
		json_object_set_new(cf, "path", json_string(path));
		json_object_set_new(cf, "existed", json_boolean(s.exists));
		json_object_set_new(cf, "previous", s.exists ? json_string(s.have) : json_null());
		json_object_set_new(cf, "previous_provider",
				    s.has_provider ? json_string(s.provider) : json_null());
	}
	char *next = NULL;
	struct stat st;
	unsigned mode = s.exists && stat(path, &st) == 0 ? (st.st_mode & 07777) : 0644;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if ((rc = mkdir_p(dir, arr(cf, "created_dirs"), m->err)) < 0)
			goto written;
	}
	if ((rc = save(m)) < 0 ||
	    (rc = ows__ini_set(s.have, "sandbox", "provider", "account", &next, m->err)) < 0 ||
	    (rc = ows__write_file(path, next, strlen(next), mode, m->err)) < 0)
		goto written;
	char sha[65];
	ows__sha256_hex(next, strlen(next), sha);
	json_object_set_new(cf, "written_sha256", json_string(sha));
	rc = save(m);
written:
	free(next);
out:
	ows__seen_free(&s);
	return rc;
}

/* ---------------------------------------------------------------- undo */

int ows__undo_config(const ows__item *it, mctx *m)
{
	json_t *cf = json_object_get(m->rec, "config");
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

int ows__undo_nft(const ows__item *it, mctx *m)
{
	json_t *n = json_object_get(m->rec, "nft");
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

int ows__undo_launcher_conf(const ows__item *it, mctx *m)
{
	json_t *lc = json_object_get(m->rec, "launcher_conf");
	const char *path = jstr(lc, "path");
	if (path && jtrue(lc, "created")) {
		progress(m, "launcher record: remove %s", path);
		if (unlink(path) < 0 && errno != ENOENT)
			return ows__fail_sys(m->err, path, NULL, "cannot remove the launcher's record");
	}
	json_object_del(m->rec, "launcher_conf");
	return save(m);
}

int ows__undo_launcher(const ows__item *it, mctx *m)
{
	json_t *l = json_object_get(m->rec, "launcher");
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

int ows__undo_group(const ows__item *it, mctx *m)
{
	json_t *g = json_object_get(m->rec, "group");
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

int ows__undo_account(const ows__item *it, mctx *m)
{
	const char *role = it->key;
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

/* The state folder, with the subfolders of ours and the record in it: the last undo. */
int ows__undo_state_dir(const ows__item *it, mctx *m)
{
	json_t *sd = json_object_get(m->rec, "state_dir");
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

