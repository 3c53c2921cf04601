#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# owsbx verify prints the proof as JSON ({"passed", "provider", "checks": [{name, passed,
# detail}]}) and exits 0 when it passed, 70 when not; owsbx report lists each capability as
# enforced, partial or unavailable with why, also as JSON.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

W=$TU_WORK RO=$TU_RO
# shellcheck disable=SC2016
PROOF='
import json, sys
try:
    d = json.loads(sys.stdin.read())
except ValueError as e:
    print("json=bad"); sys.exit()
print("json=ok")
print("passed=%s" % d.get("passed"))
print("provider=%s" % d.get("provider"))
cs = d.get("checks") or []
print("nchecks=%d" % len(cs))
print("wellformed=%s" % all(isinstance(c.get("name"), str) and isinstance(c.get("passed"), bool) and isinstance(c.get("detail"), str) for c in cs))
print("allpassed=%s" % all(c.get("passed") is True for c in cs))
print("partial=" + " ".join(c["name"].split(" owsandbox-probe-")[0] for c in cs if c.get("partial") is True))
print("allkept=%s" % all(c.get("passed") is True or c.get("partial") is True for c in cs))
print("names=" + " ".join(c.get("name", "?") for c in cs))
'
kv() { sed -n "s/^$1=//p" <<<"$D"; }

for net in none open; do
	sbx verify --rw "$W" --ro "$RO" --net "$net"
	is "$SBX_RC" 0 "verify --net $net passes (exit 0)" || diag "$(sbx_diag)"
	D=$("$PY" -c "$PROOF" <<<"$SBX_OUT")
	is "$(kv json)" ok "verify --net $net prints JSON"
	is "$(kv passed)" True "verify --net $net: passed is true"
	is "$(kv provider)" landlock "verify --net $net: provider landlock"
	ok "verify --net $net: several checks ($(kv nchecks))" test "$(kv nchecks)" -ge 3
	is "$(kv wellformed)" True "verify --net $net: every check has name, passed, detail"
	if [ "$net" = none ] || have_landlock_abi 6; then
		is "$(kv allpassed)" True "verify --net $net: every check passed"
	else
		# Without Landlock scopes `open` runs partial (the person's config chose it).
		is "$(kv allkept)" True "verify --net open: every check passed but the partial ones"
		is "$(kv partial)" "abstract socket unreachable" \
			"verify --net open: the abstract socket check alone is partial (Landlock ABI $(landlock_abi))"
	fi
	diag "checks: $(kv names)"
done
owstest_check_clean "verify"

# a folder whose name needs escaping in JSON: quote, backslash, tab, newline, control char
WEIRD=$TU_HOME/$'we"ird\\dir\tx\ny\001z'
as_user mkdir "$WEIRD"
sbx verify --rw "$WEIRD"
is "$SBX_RC" 0 "verify with a folder named with quote, backslash, tab, newline passes" || diag "$(sbx_diag)"
D=$("$PY" -c "$PROOF" <<<"$SBX_OUT")
is "$(kv json)" ok "and its JSON is still valid"
is "$(kv passed)" True "and says passed"
sbx run --rw "$WEIRD" -- /bin/sh -c 'touch "$1/inside" && echo wrote' sh "$WEIRD"
is "$SBX_OUT" wrote "run writes in that folder"
ok "and the file is there outside" test -e "$WEIRD/inside"

sbx verify --net allowlist
is "$SBX_RC" 0 "verify --net allowlist passes: the proxy is reachable and nothing else"
like "$SBX_OUT" '"name": "proxy reachable on 127.0.0.1 port' "its proof reaches the session's proxy"
MISSING=/nonexistent-$(rand_hex 3)
sbx verify --rw "$MISSING"
is "$SBX_RC" 2 "verify with a missing folder is bad input (2)"
# A refusal prints its report too: passed false, no checks, the error.
REFUSED='
import json, sys
d = json.loads(sys.stdin.read())
e = d.get("error") or {}
print("passed=%s checks=%d name=%s where=%s" % (d.get("passed"), len(d.get("checks", [1])), e.get("name"), e.get("where")))
'
is "$("$PY" -c "$REFUSED" <<<"$SBX_OUT" 2>&1)" "passed=False checks=0 name=OWS_EINVAL where=$MISSING" \
	"and prints a report saying so: passed false, the error and where" || diag "$(sbx_diag)"
like "$SBX_ERR" "^owsbx: session folder does not exist" "the error is on stderr as well"
# refused by the machine, not the input: the account provider where it is not set up
printf '[sandbox]\nstate_dir = /nonexistent-owstest-%s\n' "$(rand_hex 3)" >"$TU_BIN_DIR/nosetup.ini"
chmod 0644 "$TU_BIN_DIR/nosetup.ini"
sbx verify --json --provider account --config "$TU_BIN_DIR/nosetup.ini"
is "$SBX_RC" 70 "verify --provider account without setup: refused (70)"
is "$(wc -l <<<"$SBX_OUT")" 1 "--json: the report on one line"
is "$("$PY" -c "$REFUSED" <<<"$SBX_OUT" 2>&1 | cut -d' ' -f1-3)" "passed=False checks=0 name=OWS_ESETUP" \
	"its report says why: OWS_ESETUP" || diag "$(sbx_diag)"

sbx report
is "$SBX_RC" 0 "report exits 0"
ok "report has one line per capability with a status" grep -qE '(enforced|partial|unavailable)' <<<"$SBX_OUT"
bad=$(grep -vE '(enforced|partial|unavailable)' <<<"$SBX_OUT" | grep -cvE '^\s*$|^[A-Za-z# -]*:?$')
diag "$SBX_OUT"
sbx report --json
is "$SBX_RC" 0 "report --json exits 0"
D=$("$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
caps = d["capabilities"]
print("n=%d" % len(caps))
print("ok=%s" % all(c["status"] in ("enforced", "partial", "unavailable") and isinstance(c["name"], str) and isinstance(c["why"], str) and c["why"] for c in caps))
print("enforced=%d" % sum(c["status"] == "enforced" for c in caps))
' <<<"$SBX_OUT" 2>&1)
ok "report --json lists capabilities ($(kv n))" test "$(kv n)" -ge 3
is "$(kv ok)" True "every capability has name, a known status and a why"
ok "some capability is enforced on this machine (Landlock ABI $(landlock_abi))" test "$(kv enforced)" -ge 1
: "$bad"

owstest_check_clean
done_testing
