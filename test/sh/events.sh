#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Audit events (--events FILE): JSON lines open, proof, spawn (provider, enforcement),
# exit (exit_code), close, all with the same session id and ts_ms; "refused" for a session
# that could not open. The session id is the private folder's name. --provider direct runs
# with no wall (the person's home is readable: the control that the wall is what stops it
# elsewhere) and its spawn event says "enforcement":"none".
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

EVD=$(mktemp -d /tmp/owstest-ev.XXXX)
owstest_remove_at_exit "$EVD"
chown "$TU_UID:$TU_GID" "$EVD"
chmod 0700 "$EVD"

# check_events FILE: prints a digest of the events, one "key=value" a line
# shellcheck disable=SC2016
DIGEST='
import json, sys
evs, bad = [], 0
for line in open(sys.argv[1]):
    line = line.strip()
    if not line:
        continue
    try:
        evs.append(json.loads(line))
    except ValueError:
        bad += 1
print("bad=%d" % bad)
print("events=" + ",".join(str(e.get("event")) for e in evs))
print("sessions=" + ",".join(sorted(set(str(e.get("session")) for e in evs))))
ts = [e.get("ts_ms") for e in evs]
print("ts_ok=%s" % (all(isinstance(t, int) and t > 1500000000000 for t in ts) and ts == sorted(ts)))
for e in evs:
    if e.get("event") == "spawn":
        print("spawn_provider=%s" % e.get("provider"))
        print("spawn_enforcement=%s" % e.get("enforcement"))
    if e.get("event") == "exit":
        print("exit_code=%s" % e.get("exit_code"))
'
kv() { sed -n "s/^$1=//p" <<<"$D"; }

sbx run --events "$EVD/a.jsonl" -- /bin/sh -c 'echo "$HOME"; exit 3'
is "$SBX_RC" 3 "the session exits 3"
home=$SBX_OUT
D=$("$PY" -c "$DIGEST" "$EVD/a.jsonl" 2>&1)
is "$(kv bad)" 0 "every line is a JSON object"
is "$(kv events)" "open,proof,spawn,exit,close" "events: open, proof, spawn, exit, close, in order"
sid=$(kv sessions)
like "$sid" '^[^,]+$' "all events carry the same session id ($sid)"
isnt "$sid" None "the session id is there"
is "$(basename "$(dirname "$home")")" "$sid" "the session id names the private folder"
is "$(kv ts_ok)" True "ts_ms are epoch milliseconds, in order"
is "$(kv spawn_provider)" landlock "spawn says provider landlock"
is "$(kv spawn_enforcement)" full "spawn says enforcement full"
is "$(kv exit_code)" 3 "exit says exit_code 3"
is "$(stat -c %U "$EVD/a.jsonl")" "$TU" "the events file is the person's"

# a second session appends or rewrites, but its own id differs
sbx run --events "$EVD/b.jsonl" -- /bin/true
D=$("$PY" -c "$DIGEST" "$EVD/b.jsonl" 2>&1)
isnt "$(kv sessions)" "$sid" "another session has another id"

# a folder name that needs escaping keeps every event line valid JSON
WEIRD=$TU_HOME/$'ev"il\\dir\nz\001'
as_user mkdir "$WEIRD"
sbx run --rw "$WEIRD" --events "$EVD/w.jsonl" -- /bin/true
D=$("$PY" -c "$DIGEST" "$EVD/w.jsonl" 2>&1)
is "$(kv bad)" 0 "a folder named with quote, backslash, newline: every event line is JSON"
is "$(kv events)" "open,proof,spawn,exit,close" "and all five events are there"

# refused
sbx run --events "$EVD/r.jsonl" --net allowlist -- /bin/true
is "$SBX_RC" 70 "a refused session exits 70"
D=$("$PY" -c "$DIGEST" "$EVD/r.jsonl" 2>&1)
like "$(kv events)" "refused" "a refused session writes a refused event ($(kv events))"
unlike "$(kv events)" "spawn" "a refused session spawns nothing"

# direct: no wall, and it says so
sbx run --provider direct --events "$EVD/d.jsonl" -- /bin/cat "$TU_HOME/.bashrc"
is "$SBX_RC" 0 "--provider direct runs"
like "$SBX_OUT" "$TU_MARKER" "control: with no wall (direct) the home is readable"
D=$("$PY" -c "$DIGEST" "$EVD/d.jsonl" 2>&1)
is "$(kv spawn_provider)" direct "direct: spawn says provider direct"
is "$(kv spawn_enforcement)" none "direct: spawn says enforcement none"
# and the default is never direct
sbx run -- /bin/cat "$TU_HOME/.bashrc"
unlike "$SBX_OUT" "$TU_MARKER" "the default provider is a wall (the home is not readable)"

owstest_check_clean
done_testing
