#!/bin/bash
# Deny entries in allowlist on the landlock provider, as the throwaway person: a site a
# wildcard, a group or an exact entry allows is refused once a deny entry covers it (a deny
# wins, whatever the order), with a 403 that names the deny entry and suggests no allow
# entry, while an allowed neighbour is still reached; a deny entry without a port covers
# every port; deny entries come from --deny-site, --allow-site '!SITE', an allow-sites file,
# the machine's config (deny = ...) and ows_session_allow_site, and one taken back with
# ows_session_remove_site opens the site again; +private on a deny entry is refused.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

TOKEN=OWSTEST_UPSTREAM_$(rand_hex 4)
tcp_server "$TOKEN" || bail_out "no upstream server"
UP=$SRV_PORT
EV=$(mktemp -d /tmp/owstest-deny.XXXXXX)
owstest_remove_at_exit "$EV"
chown "$TU_UID:$TU_GID" "$EV"
kv() { sed -n "s/^$1=//p" <<<"$SBX_OUT"; }
code() { echo "curl -s -m 5 -o /dev/null -w '%{http_code}' $1"; }

# A wildcard and a group allow what the deny entries cover; the deny entries come first
# for one and last for the other. .invalid names never resolve: a site the list
# lets through but that does not resolve is a 502, one the list refuses a 403.
sbx run --net allowlist --deny-site denied.owstest.invalid --allow-site "*.owstest.invalid:$UP" \
	--allow-site "localhost:$UP" --allow-site @code-hosting --allow-site '!api.github.com' \
	--events "$EV/ev" -- /bin/sh -c "
	echo denied=\$($(code "http://denied.owstest.invalid:$UP/"))
	echo body=\$(curl -s -m 5 http://denied.owstest.invalid:$UP/ | tr '\n' ' ')
	echo wild=\$($(code "http://other.owstest.invalid:$UP/"))
	echo group=\$(curl -s -m 5 -o /dev/null -w '%{http_connect}' https://api.github.com/)
	echo neighbour=\$(curl -s -m 5 http://localhost:$UP/)"
is "$SBX_RC" 0 "an allowlist session with deny entries runs" || diag "$(sbx_diag)"
is "$(kv denied)" 403 "a site a wildcard allows is refused once denied (a 403)"
like "$(kv body)" "denied.owstest.invalid:$UP: the site is denied .*entry !denied.owstest.invalid:\*" \
	"the 403 says it was denied, and by which entry"
unlike "$(kv body)" "allow-site|Allow for this session" "and suggests no allow entry"
is "$(kv wild)" 502 "control: the wildcard covers a neighbour (let through; it does not resolve)"
is "$(kv group)" 403 "a group's host denied after the group: CONNECT refused (a 403)"
is "$(kv neighbour)" "$TOKEN" "an allowed neighbour is still reached"
like "$SBX_ERR" "refused denied.owstest.invalid:$UP while the command ran: denied by !denied.owstest.invalid:\*" \
	"owsbx names the deny entry on stderr"
unlike "$SBX_ERR" "--allow-site owstest-denied|--allow-site api.github" "and suggests no allow entry there"
blocked=$(grep '"event":"exit"' "$EV/ev" | "$PY" -c '
import json, sys
for b in sorted(json.loads(sys.stdin.read()).get("blocked", []), key=lambda b: b["host"]):
    print(b["host"], b["reason"], b.get("denied_by"), b.get("allow"))')
is "$(tr '\n' ';' <<<"$blocked")" \
	"api.github.com denied !api.github.com:* None;denied.owstest.invalid denied !denied.owstest.invalid:* None;" \
	"the exit event's blocked entries say denied, by which entry, with no allow"

# A deny entry without a port covers every port; it matches the name asked for, so the
# address listed on its own is a neighbour that is still reached.
sbx run --net allowlist --allow-site "localhost:$UP" --allow-site "127.0.0.1:$UP" \
	--deny-site localhost -- /bin/sh -c "
	echo name=\$($(code "http://localhost:$UP/"))
	echo addr=\$(curl -s -m 5 http://127.0.0.1:$UP/)"
is "$(kv name)" 403 "!localhost (no port) refuses localhost:$UP"
is "$(kv addr)" "$TOKEN" "127.0.0.1:$UP, listed on its own, is reached"
sbx run --net allowlist --allow-site "localhost:$UP" --deny-site "localhost:$((UP + 1))" -- \
	/bin/sh -c "curl -s -m 5 http://localhost:$UP/"
is "$SBX_OUT" "$TOKEN" "a deny entry with a port leaves the site's other ports alone"

# From an allow-sites file and from the machine's config.
printf '# owstest\nlocalhost:%s\n!localhost\n' "$UP" >"$EV/sites"
chmod 0644 "$EV/sites"
sbx run --net allowlist --allow-sites-file "$EV/sites" -- /bin/sh -c "$(code "http://localhost:$UP/")"
is "$SBX_OUT" 403 "a '!' line of an allow-sites file denies"
cfg=$TU_BIN_DIR/deny.ini
printf '[sandbox]\nhosts = localhost:%s\ndeny = localhost\n' "$UP" >"$cfg"
chmod 0644 "$cfg"
AS_USER_ENV=("OWSBX_CONFIG=$cfg")
sbx run --net allowlist --allow-site "localhost:$UP" -- /bin/sh -c "$(code "http://localhost:$UP/")"
AS_USER_ENV=()
is "$SBX_OUT" 403 "the machine's deny = ... wins over the session's own allow entry"

# While the session runs: a deny entry added, listed with its '!', checked, taken back.
cp "$OWSTEST_ROOT/libowsandbox.so" "$TU_BIN_DIR/"
cp -r "$OWSTEST_ROOT/examples/python/owsandbox" "$TU_BIN_DIR/"
chmod -R u=rwX,go=rX "$TU_BIN_DIR/libowsandbox.so" "$TU_BIN_DIR/owsandbox"
AS_USER_ENV=("OWSANDBOX_LIB=$TU_BIN_DIR/libowsandbox.so" "PYTHONPATH=$TU_BIN_DIR")
out=$(as_user "$PY" -B -c "
import owsandbox
s = owsandbox.Session({'network': 'allowlist', 'hosts': ['localhost:$UP']})
cmd = ['curl', '-s', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', 'http://localhost:$UP/']
print(s.run(cmd).text)
s.allow_site('!localhost')
print(s.run(cmd).text)
c = s.check_site('localhost', $UP)
print(c.allowed, c.reason, c.pattern, c.allow)
print(' '.join(x.pattern + '/' + x.source for x in s.sites()))
print(' '.join(b.reason + '/' + b.denied_by + '/' + b.allow for b in s.blocked()))
s.remove_site('!localhost')
print(s.run(cmd).text)
s.close()" 2>&1)
AS_USER_ENV=()
is "$(tr '\n' ';' <<<"$out")" \
	"200;403;False denied !localhost:* None;localhost:$UP/policy !localhost:*/session;denied/!localhost:*/;200;" \
	"a deny entry added while the session runs closes the site at once, and opens it again"

sbx run --net allowlist --deny-site 'git.example+private' -- true
is "$SBX_RC" 2 "+private on a deny entry: exit status 2"
like "$SBX_ERR" "\+private on a deny entry" "with an error that says so"

is "$(owstest_session_dirs)" "" "nothing of the sessions is left"
ok "no process left" poll 5 owstest_no_user_procs
done_testing
