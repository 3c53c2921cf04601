/*
 * Machine setup's parts, shared by the files of lib/linux/setup/machine*.c:
 *   machine_items.c   the setup items: for each, the one inspect that says
 *                     what is there and how it stands against what setup
 *                     wants, the step that plans and applies it, and its undo
 *   machine.c         the item table, the machine's own setup for lib/machine.c
 *                     (plan, setup, status, remove) and the per-session check,
 *                     all of which judge an item by its inspect
 * The setup record is lib/record.c's, the firewall's text nft.c's.  See
 * machine.c for what setup makes.
 */
#ifndef OWS_LINUX_MACHINE_H
#define OWS_LINUX_MACHINE_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <jansson.h>

#include "linux/linux.h"
#include "record.h"

#define MODE_STATE 0755
#define MODE_SANDBOXES 0711
#define MODE_JOURNAL 01770
#define MODE_LAUNCHER 04750
#define MODE_LAUNCHER_CONF 0644

/* One plan, setup or remove: the config, the record as it stands, what is said. */
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

/* What an inspect looks at besides the machine. */
typedef struct scope {
	const ows_config *c;
	json_t *rec;          /* the record, or NULL when there is none */
	const char *person;   /* whose group membership counts; "" for nobody */
	const char *config_file; /* the machine's config, where setup chooses the provider */
	gid_t group_gid;      /* the folders' and the launcher's group; (gid_t)-1 unknown */
	uid_t closed_uid;     /* the uid the firewall is for; (uid_t)-1 unknown */
	bool root;            /* may read what only root may (shadow, nft) */
	bool deep;            /* read contents too; the per-session check does not */
} scope;

/*
 * What an inspect found of one item, and how it stands against what setup
 * wants.  Plan, status and the per-session check each judge from these
 * alone; which facts an item fills is said at its inspect.  Free it with
 * ows__seen_free().
 */
typedef struct seen {
	bool exists;          /* there is something at the item's name or path */
	bool kind_ok;         /* it is what setup makes there: a folder, a regular file */
	bool root_alone;      /* root's, and neither group nor others may write it */
	bool meta_ok;         /* kind, owner, group and mode exactly as setup makes them */
	bool read;            /* its content was read: sha256 (and have) are set */
	bool content_ok;      /* its content is what setup would put there today */
	bool recorded;        /* the record says setup made or found this one */
	bool recorded_content; /* its content is the one the record holds the sha256 of */
	bool nologin;         /* an account: no login shell */
	int locked;           /* an account: 1 locked, 0 not, -1 cannot tell or not deep */
	bool member;          /* the group: the scope's person is in it */
	bool listed;          /* the firewall: the kernel's table was asked for */
	bool has_provider;    /* the config: it names a provider (in provider) */
	uid_t uid;            /* a file's owner, an account's uid */
	gid_t gid;            /* a file's group, an account's or the group's gid */
	unsigned mode;        /* a file's mode, 07777 */
	char path[PATH_MAX + 8];  /* what was looked at: a path, the firewall table's name */
	char shell[256];      /* an account's */
	char provider[64];    /* the config's [sandbox] provider */
	char sha256[65];      /* of what is there, when read */
	char *have;           /* the content as found (owned), when read */
	char *want;           /* the content setup would write today (owned), or NULL */
} seen;

/* One setup item.  `key` and `why` serve the items that share code. */
typedef struct ows__item {
	const char *name;     /* as the plan lists it */
	const char *row;      /* as status names its row */
	const char *key;      /* the account's role, the state subfolder's name */
	unsigned mode;        /* what setup makes it: a folder's or a file's mode */
	const char *why;      /* what a state subfolder is for, as the plan says */
	/* Fills `s`; < 0 only when it cannot look (out of memory, nft fails). */
	int (*inspect)(const struct ows__item *it, const scope *sc, seen *s, ows_error *err);
	/* Lists what setup would change; when m->apply, changes it and saves the record. */
	int (*apply)(const struct ows__item *it, mctx *m);
	/* Undoes what the record says setup did, and drops it from the record. */
	int (*undo)(const struct ows__item *it, mctx *m);
} ows__item;

/* The table, in the order setup runs them (machine.c). */
enum {
	ITEM_STATE_DIR,
	ITEM_CLOSED,
	ITEM_OPEN,
	ITEM_GROUP,
	ITEM_SANDBOXES,
	ITEM_JOURNAL,
	ITEM_LAUNCHER,
	ITEM_LAUNCHER_CONF,
	ITEM_NFT,
	ITEM_CONFIG,
	ITEM_COUNT
};
OWS__HIDDEN extern const ows__item ows__machine_items[ITEM_COUNT];

/* machine_items.c */
OWS__HIDDEN int ows__inspect_state_dir(const ows__item *it, const scope *sc, seen *s,
				       ows_error *err);
OWS__HIDDEN int ows__inspect_account(const ows__item *it, const scope *sc, seen *s, ows_error *err);
OWS__HIDDEN int ows__inspect_group(const ows__item *it, const scope *sc, seen *s, ows_error *err);
OWS__HIDDEN int ows__inspect_subdir(const ows__item *it, const scope *sc, seen *s, ows_error *err);
OWS__HIDDEN int ows__inspect_launcher(const ows__item *it, const scope *sc, seen *s,
				       ows_error *err);
OWS__HIDDEN int ows__inspect_launcher_conf(const ows__item *it, const scope *sc, seen *s,
					   ows_error *err);
OWS__HIDDEN int ows__inspect_nft(const ows__item *it, const scope *sc, seen *s, ows_error *err);
OWS__HIDDEN int ows__inspect_config(const ows__item *it, const scope *sc, seen *s, ows_error *err);
OWS__HIDDEN void ows__seen_free(seen *s);

OWS__HIDDEN int ows__apply_state_dir(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_account(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_group(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_subdir(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_launcher(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_launcher_conf(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_nft(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__apply_config(const ows__item *it, mctx *m);

OWS__HIDDEN int ows__undo_state_dir(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__undo_account(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__undo_group(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__undo_launcher(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__undo_launcher_conf(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__undo_nft(const ows__item *it, mctx *m);
OWS__HIDDEN int ows__undo_config(const ows__item *it, mctx *m);

/* The record's parts, made when missing. */
static inline json_t *obj(json_t *parent, const char *key)
{
	json_t *o = json_object_get(parent, key);
	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(parent, key, o);
	}
	return o;
}

static inline json_t *arr(json_t *parent, const char *key)
{
	json_t *a = json_object_get(parent, key);
	if (!json_is_array(a)) {
		a = json_array();
		json_object_set_new(parent, key, a);
	}
	return a;
}

static inline const char *jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static inline bool jtrue(json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* What a plan, setup or remove says, and the record saved as it goes. */
static inline void note(mctx *m, const char *fmt, ...) OWS__PRINTF(2, 3);
static inline void note(mctx *m, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	json_array_append_new(m->notes, json_string(line));
}

/* Lists a change; when applying, announces it before it is made. */
static inline void change(mctx *m, const char *item, const char *fmt, ...) OWS__PRINTF(3, 4);
static inline void change(mctx *m, const char *item, const char *fmt, ...)
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

static inline void progress(mctx *m, const char *fmt, ...) OWS__PRINTF(2, 3);
static inline void progress(mctx *m, const char *fmt, ...)
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

static inline int save(mctx *m)
{
	return m->apply ? ows__record_save(m->c->state_dir, m->rec, m->err) : 0;
}

/* What the items see from this plan or setup: the ids found so far. */
static inline scope setup_scope(const mctx *m)
{
	return (scope){.c = m->c, .rec = m->rec, .person = m->person,
		       .config_file = m->config_file, .group_gid = m->group_gid,
		       .closed_uid = m->closed_uid, .root = m->root, .deep = true};
}

#endif /* OWS_LINUX_MACHINE_H */
