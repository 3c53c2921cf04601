#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# `open` where Landlock has no scopes (ABI < 6, before Linux 6.12; Debian 12's 6.1 has 2).
# `open` shares the host's network namespace, where the machine's abstract unix sockets
# are, and only the Landlock scope keeps them out. Without it a session in `open` is
# refused, naming the ways out; with open_without_scopes = partial in the config it runs
# and says so: "enforcement": "partial" and the promise not kept on the open and spawn
# events, the proof's abstract socket check recorded as partial (not demanded: the rest
# still is), and `owsbx report`'s network.open "partial". `none` and `allowlist` keep every
# promise with their own network namespace, with or without the setting. On a kernel with
# scopes the setting changes nothing: `open` is full and the abstract socket refused.
. "$(dirname "$0")/../lib.sh"
# Without user namespaces `open` runs in the host's namespaces, where no unix socket can
# be made at all: abstract ones stay out on any ABI (degraded.sh, the attack suite).
need_userns "without them, the landlock provider refuses unix sockets in every mode"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

hx=$(rand_hex 4)
ABI=$(landlock_abi)
diag "Landlock ABI $ABI"
STRICT=$TU_BIN_DIR/strict.ini PARTIAL=$TU_BIN_DIR/partial.ini
printf '[sandbox]\n' >"$STRICT"
printf '[sandbox]\nopen_without_scopes = partial\n' >"$PARTIAL"
chmod 0644 "$STRICT" "$PARTIAL"
EV=$TU_HOME/events.jsonl

unix_server_as_user "@owstest-abs-$hx" "abs-$hx" || fail "abstract socket server started"
probe_out "connect_abstract owstest-abs-$hx"
is "${R[0]}" "OK:abs-$hx" "control: outside, the person reaches its abstract socket"

# events FILE: the open and spawn events' enforcement and partial promises, one a line
EVENTS='
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") in ("open", "spawn"):
        ps = e.get("partial")
        if ps is not None:  # limits.* name what the default caps lack here (limits.sh)
            ps = [p for p in ps if not p["promise"].startswith("limits.")] or None
        print("%s %s %s" % (e["event"], e.get("enforcement"),
                            ",".join(p["promise"] for p in ps) if ps is not None else "-"))
        if ps:
            print("why " + ps[0].get("why", ""))
'
# run_events CONFIG ARGS...: a probe with events; E holds the digest
run_events() {
	local cfg=$1
	shift
	as_user rm -f "$EV"
	probe --config "$cfg" --events "$EV" "$@"
	E=$(as_user "$PY" -c "$EVENTS" "$EV" 2>&1)
}
# report_row CONFIG NAME: "status why" of one row of owsbx report --json
report_row() {
	sbx report --json --config "$1"
	"$PY" -c '
import json, sys
for c in json.load(sys.stdin)["capabilities"]:
    if c["name"] == sys.argv[1]:
        print(c["status"], c["why"])' "$2" <<<"$SBX_OUT"
}

# --------------------------------------------------------- by default
run_events "$STRICT" --net open -- "connect_abstract owstest-abs-$hx"
if have_landlock_abi 6; then
	is "$SBX_RC" 0 "ABI $ABI: open runs by default" || diag "$(sbx_diag)"
	is "${R[0]}" EPERM "ABI $ABI: the person's abstract socket is refused by the scope (EPERM)"
	is "$E" $'open full -\nspawn full -' "ABI $ABI: open and spawn events say full, with no partial"
	row=$(report_row "$STRICT" network.open)
	like "$row" "^enforced " "ABI $ABI: report: network.open enforced ($row)"
else
	is "$SBX_RC" 70 "ABI $ABI: open is refused by default (exit 70)" || diag "$(sbx_diag)"
	like "$SBX_ERR" "abstract unix sockets" "ABI $ABI: the refusal says what cannot be kept"
	like "$SBX_ERR" "Landlock ABI $ABI has no scopes" "ABI $ABI: and why (the kernel's ABI)"
	like "$SBX_ERR" "open_without_scopes = partial" "ABI $ABI: and names the setting that runs it partial"
	like "$SBX_ERR" "--net none or allowlist" "ABI $ABI: and the modes that keep it"
	is "$SBX_OUT" "" "ABI $ABI: nothing ran"
	row=$(report_row "$STRICT" network.open)
	like "$row" "^unavailable refused: .*open_without_scopes = partial" \
		"ABI $ABI: report: network.open unavailable, naming the setting ($row)"
fi

# ----------------------------------------------- chosen: open_without_scopes = partial
run_events "$PARTIAL" --net open -- "connect_abstract owstest-abs-$hx" "connect_tcp 127.0.0.1 1"
is "$SBX_RC" 0 "ABI $ABI, partial chosen: open runs" || diag "$(sbx_diag)"
is "${R[1]}" ECONNREFUSED "ABI $ABI, partial chosen: open has the host's network (loopback port 1 refused)"
if have_landlock_abi 6; then
	is "${R[0]}" EPERM "ABI $ABI, partial chosen: the scope still refuses the abstract socket"
	is "$E" $'open full -\nspawn full -' "ABI $ABI, partial chosen: the setting changes nothing (full)"
else
	# The hole is real, and said: the test that it is said must see it.
	is "${R[0]}" "OK:abs-$hx" "ABI $ABI, partial chosen: the person's abstract socket is reachable, as said"
	mapfile -t L <<<"$E"
	is "${L[0]}" "open partial unix_sockets.outside" "ABI $ABI, partial chosen: the open event says partial, and which promise"
	like "${L[1]}" "^why abstract unix sockets outside are reachable.*ABI 6, Linux 6.12" \
		"ABI $ABI, partial chosen: with why and what would keep it"
	is "${L[2]}" "spawn partial unix_sockets.outside" "ABI $ABI, partial chosen: the spawn event says it too"
	row=$(report_row "$PARTIAL" network.open)
	like "$row" "^partial abstract unix sockets outside reachable \(needs Landlock ABI 6, Linux 6.12\)" \
		"ABI $ABI, partial chosen: report: network.open partial, with the reason ($row)"

	sbx verify --config "$PARTIAL" --net open
	is "$SBX_RC" 0 "ABI $ABI, partial chosen: verify --net open passes" || diag "$(sbx_diag)"
	D=$("$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
print(d["passed"])
for c in d["checks"]:
    if c["name"].startswith("abstract socket unreachable "):
        print(c["passed"], c.get("partial"), c["detail"])
print(sum(1 for c in d["checks"] if not c["passed"] and not c.get("partial")))' <<<"$SBX_OUT" 2>&1)
	mapfile -t L <<<"$D"
	is "${L[0]}" True "ABI $ABI, partial chosen: the proof passed"
	like "${L[1]}" "^False True connected: partial" "ABI $ABI, partial chosen: its abstract socket check failed and is marked partial"
	is "${L[2]}" 0 "ABI $ABI, partial chosen: no other check failed"
fi

# ------------------------------------- none and allowlist keep it, the setting aside
for net in none allowlist; do
	for cfg in "$STRICT" "$PARTIAL"; do
		run_events "$cfg" --net "$net" -- "connect_abstract owstest-abs-$hx"
		is "$SBX_RC" 0 "ABI $ABI, $net, $(basename "$cfg" .ini): runs" || diag "$(sbx_diag)"
		is_one_of "${R[0]}" "EPERM ECONNREFUSED" \
			"ABI $ABI, $net, $(basename "$cfg" .ini): the person's abstract socket is unreachable (${R[0]})"
		is "$E" $'open full -\nspawn full -' "ABI $ABI, $net, $(basename "$cfg" .ini): full, no partial"
	done
done

as_user rm -f "$EV"
owstest_check_clean
done_testing
