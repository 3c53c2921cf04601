/*
 * Masks: what the landlock provider's view covers up inside the folders it
 * binds read-only, found by the host before init starts.
 *
 * Channels.  A read-only mount stops writes to files, but not a write into
 * a FIFO nor a connect() to a listening unix socket: both reach a process
 * outside, and Landlock has no right for connecting to a pathname socket.
 * Every FIFO and socket in a read-only folder is covered inside with an
 * empty read-only file.
 *
 * Groups.  Under an unprivileged host the command keeps the person's
 * supplementary groups (a user namespace cannot drop them: setgroups is
 * denied), so what the person reads only as a member of a group (the
 * ssl-cert group's /etc/ssl/private) would be readable inside.  Such entries
 * of the system folders are covered: a folder with an empty read-only
 * tmpfs, anything else with the empty file.
 *
 * Both walks work on descriptors: each folder is opened with O_NOFOLLOW
 * relative to its parent's descriptor, so a link is never followed; a name
 * that vanishes or cannot be opened during the walk is skipped (what the
 * host cannot open, the command cannot either).  Mount points below are
 * walked too: the view binds every folder with what is mounted beneath it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "linux.h"
#include "linux/wall/view.h"

/* Deeper than this, a walk gives up rather than miss what lies below. */
#define MASK_MAX_DEPTH 128

struct mask_walk {
	bool groups_only;      /* the group walk; else the channel walk */
	uid_t uid;             /* whose access is judged */
	const gid_t *groups;   /* the supplementary groups that must not count */
	int ngroups;
	ows__strv *out;
	size_t max;            /* how many paths may be added */
	size_t added;
	char path[PATH_MAX];
	ows_error *err;
};

static bool in_groups(const struct mask_walk *w, gid_t gid)
{
	for (int i = 0; i < w->ngroups; i++)
		if (w->groups[i] == gid)
			return true;
	return false;
}

/*
 * True when the walk's account reads or searches `path` only through the
 * group class of its mode: as a member of the owning group, or through a
 * named entry of an access ACL (whose mask the group bits are).  An ACL
 * entry is not evaluated: any ACL that grants beyond "other" masks the
 * entry, which hides at worst something that was readable by name.
 */
static bool group_only(const struct mask_walk *w, const struct stat *st)
{
	if (st->st_uid == w->uid)
		return false; /* the owner bits apply, never the group's */
	unsigned grp = (st->st_mode >> 3) & 05, other = st->st_mode & 05;
	if (!(grp & ~other))
		return false;
	if (in_groups(w, st->st_gid))
		return true;
	return lgetxattr(w->path, "system.posix_acl_access", NULL, 0) > 0;
}

static int add(struct mask_walk *w)
{
	if (w->added >= w->max)
		return ows__fail(w->err, OWS_EINVAL, 0, w->path,
				 w->groups_only ? "report this machine's layout as a bug"
						: "move FIFOs and sockets out of the read-only folder, "
						  "or share it read-write",
				 w->groups_only ? "too many group-only entries in the system folders"
						: "too many FIFOs and sockets in a read-only folder");
	w->added++;
	return ows__strv_push(w->out, w->path, w->err);
}

/* Walks the folder open at `fd` (taken over), whose path is w->path. */
static int walk(struct mask_walk *w, int fd, int depth)
{
	if (depth > MASK_MAX_DEPTH) {
		close(fd);
		return ows__fail(w->err, OWS_EINVAL, ELOOP, w->path,
				 "share a folder with a shallower tree",
				 "the folder is too deep to be checked for FIFOs, sockets and "
				 "group-only entries");
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return ows__fail_sys(w->err, w->path, NULL, "cannot read the folder");
	}
	size_t len = strlen(w->path);
	int rc = 0;
	struct dirent *e;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' &&
		    (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		size_t n = strlen(e->d_name);
		if (len + 1 + n >= sizeof(w->path)) {
			rc = ows__fail(w->err, OWS_EINVAL, ENAMETOOLONG, w->path, NULL,
				       "a path in the folder is too long to be checked");
			break;
		}
		w->path[len] = '/';
		memcpy(w->path + len + 1, e->d_name, n + 1);

		unsigned char type = e->d_type;
		struct stat st;
		if (w->groups_only || type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
				continue; /* gone meanwhile */
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISFIFO(st.st_mode) ? DT_FIFO
			     : S_ISSOCK(st.st_mode) ? DT_SOCK : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type == DT_LNK)
			continue; /* resolved inside to what the view holds */
		if (w->groups_only ? group_only(w, &st) : type == DT_FIFO || type == DT_SOCK) {
			rc = add(w);
			continue; /* a covered folder hides everything below it */
		}
		if (type != DT_DIR)
			continue;
		int sub = openat(dirfd(d), e->d_name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (sub >= 0)
			rc = walk(w, sub, depth + 1);
	}
	w->path[len] = '\0';
	closedir(d);
	return rc;
}

static int mask_walk(struct mask_walk *w, const char *dir)
{
	size_t n = strlen(dir);
	if (n >= sizeof(w->path))
		return ows__fail(w->err, OWS_EINVAL, ENAMETOOLONG, dir, NULL, "the path is too long");
	memcpy(w->path, dir, n + 1);
	if (n == 1) /* "/": children are "/name" */
		w->path[0] = '\0';
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 /* nothing in view */
			: ows__fail_sys(w->err, dir, NULL, "cannot open the folder");
	return walk(w, fd, 0);
}

int ows__mask_channels(const char *dir, size_t max, ows__strv *out, ows_error *err)
{
	struct mask_walk w = {.out = out, .max = max, .err = err};
	return mask_walk(&w, dir);
}

int ows__mask_group_only(const char *dir, size_t max, ows__strv *out, ows_error *err)
{
	int n = getgroups(0, NULL);
	gid_t *groups = n > 0 ? ows__calloc((size_t)n, sizeof(*groups), err) : NULL;
	if (n > 0 && !groups)
		return OWS_ENOMEM;
	if (n > 0 && (n = getgroups(n, groups)) < 0) {
		free(groups);
		return ows__fail_sys(err, "getgroups", NULL, "cannot list the supplementary groups");
	}
	/* The primary group stays the command's own: only the others are masked. */
	gid_t primary = getegid();
	int k = 0;
	for (int i = 0; i < n; i++)
		if (groups[i] != primary)
			groups[k++] = groups[i];
	int rc = 0;
	if (k > 0) {
		struct mask_walk w = {.groups_only = true, .uid = geteuid(), .groups = groups,
				      .ngroups = k, .out = out, .max = max, .err = err};
		rc = mask_walk(&w, dir);
	}
	free(groups);
	return rc;
}

int ows__mask_read_only(const ows__folder *folders, size_t nfolders, const char *const *ro_dirs,
			size_t nro_dirs, size_t max, ows__strv *out, ows_error *err)
{
	size_t start = out->len;
	int rc = 0;
	for (size_t i = 0; i < nfolders && rc == 0; i++) {
		const char *dir = folders[i].path;
		if (folders[i].access == OWS_ACCESS_RW)
			continue;
		size_t first = out->len;
		rc = ows__mask_channels(dir, max - (first - start), out, err);
		/* A read-write folder nested in this one is bound over it: its channels stay. */
		for (size_t j = first; rc == 0 && j < out->len;) {
			bool in_rw = false;
			for (size_t k = 0; k < nfolders && !in_rw; k++)
				in_rw = folders[k].access == OWS_ACCESS_RW &&
					ows__path_under(folders[k].path, dir) &&
					ows__path_under(out->v[j], folders[k].path);
			if (!in_rw) {
				j++;
				continue;
			}
			free(out->v[j]);
			out->v[j] = out->v[--out->len];
			out->v[out->len] = NULL;
		}
	}
	for (size_t i = 0; i < nro_dirs && rc == 0; i++)
		rc = ows__mask_channels(ro_dirs[i], max - (out->len - start), out, err);
	return rc;
}
