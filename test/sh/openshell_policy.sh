#!/bin/sh
# The OpenShell provider's policies, checked without OpenShell: every golden
# (test/golden/openshell_*.yaml, .args) and every policy the renderer writes now
# (build/test/openshell_policy --emit) passes our validator of OpenShell's schema and of
# the session's promises (test/openshell/validate_policy.py), and broken copies of them
# (mutants, below) are rejected, so that the validator is seen to catch what it claims.
# Needs no root.  What only a machine with OpenShell can show is in test/openshell/README.md.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/test/openshell_policy
VALIDATE=$ROOT/test/openshell/validate_policy.py
GOLDEN=$ROOT/test/golden
if [ ! -x "$BIN" ]; then
	echo "1..0 # SKIP build/test/openshell_policy is not built (make build/test/openshell_policy)"
	exit 0
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
	echo "1..0 # SKIP no python3-yaml for the validator (make test-deps)"
	exit 0
fi
TMP=$(mktemp -d /tmp/owstest-openshell-XXXXXX) || exit 1
trap 'rm -rf "$TMP"' EXIT

n=0
fails=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }

# validates NAME DIR: DIR/openshell_NAME.{yaml,args,expect.json}
validates() {
	python3 "$VALIDATE" "$2/openshell_$1.yaml" "$2/openshell_$1.args" \
		"$2/openshell_$1.expect.json" >"$TMP/out" 2>&1
}

mkdir "$TMP/fresh"
if "$BIN" --emit "$TMP/fresh"; then
	pass "the renderer writes the sessions' policies"
else
	fail "the renderer writes the sessions' policies"
fi

for f in "$GOLDEN"/openshell_*.yaml; do
	name=$(basename "$f" .yaml)
	name=${name#openshell_}
	for dir in "$GOLDEN" "$TMP/fresh"; do
		what="golden"
		[ "$dir" = "$GOLDEN" ] || what="freshly rendered"
		if validates "$name" "$dir"; then
			pass "$name ($what) is valid and keeps its promises"
		else
			fail "$name ($what) is valid and keeps its promises"
			sed 's/^/# /' "$TMP/out"
		fi
	done
done

# mutant NAME FILE-EXT DESCRIPTION SED-SCRIPT: a copy of golden NAME with FILE-EXT edited
# by SED-SCRIPT must be rejected, and must differ from the golden (else the mutant is void).
mutant() {
	rm -rf "$TMP/m" && mkdir "$TMP/m" && cp "$GOLDEN/openshell_$1".* "$TMP/m/"
	sed -e "$4" "$GOLDEN/openshell_$1.$2" >"$TMP/m/openshell_$1.$2"
	if cmp -s "$GOLDEN/openshell_$1.$2" "$TMP/m/openshell_$1.$2"; then
		fail "mutant \"$3\" changes nothing: fix the test"
	elif validates "$1" "$TMP/m"; then
		fail "rejected: $3"
	else
		pass "rejected: $3 ($(head -n 1 "$TMP/out"))"
	fi
}

mutant strict yaml "Landlock best effort" 's/"hard_requirement"/"best_effort"/'
mutant strict yaml "a compatibility outside the enum" 's/"hard_requirement"/"hard"/'
mutant strict yaml "an unknown key" 's/^landlock:$/landlock:\n  strict: true/'
mutant strict yaml "an unknown top-level key" 's/^version: 1$/version: 1\nmounts: []/'
mutant strict yaml "version 2" 's/^version: 1$/version: 2/'
mutant strict yaml "the workdir included" 's/include_workdir: false/include_workdir: true/'
mutant strict yaml "a read-only folder listed read-write" '/"\/home\/owstest\/docs"/d; s|^  read_write:$|  read_write:\n    - "/home/owstest/docs"|'
mutant strict yaml "the home folder listed" 's|^  read_write:$|  read_write:\n    - "/home/owstest"|'
mutant strict yaml "root as the user" 's/run_as_user: "1000"/run_as_user: "0"/'
mutant strict yaml "another user" 's/run_as_group: "1000"/run_as_group: "1001"/'
mutant strict yaml "a host outside the profile" 's/"pypi.org"/"evil.example.com"/'
mutant strict yaml "a search API in strict" 's/"registry.npmjs.org"/"api.tavily.com"/'
mutant strict yaml "a bare * host" 's/"crates.io"/"*"/'
mutant strict yaml "a top-level-domain wildcard" 's/"crates.io"/"*.io"/'
mutant strict yaml "port 70000" '0,/port: 443/s//port: 70000/'
mutant strict yaml "a port as a string" '0,/port: 443/s//port: "443"/'
mutant strict yaml "an endpoint with a credential binding" 's/^\(        port: 443\)$/\1\n        allow_uninspected_credentials: true/'
mutant strict yaml "no binaries" '/binaries:/d; /- path: "\/\*\*"/d'
mutant standard yaml "an extra host dropped" '/"git.example.com"/,+1d'
mutant standard yaml "a search API dropped" '/"api.tavily.com"/,+1d'
mutant odd yaml "the odd folder unquoted (its '#' starts a comment)" 's|^    - "/home/owstest/it.*$|    - /home/owstest/it'"'"'s q #1|'
mutant strict args "a credential provider attached" 's/^--no-auto-providers$/--provider\ngithub/'
mutant strict args "providers created from local credentials" '/^--no-auto-providers$/d'
mutant strict args "a read-only folder mounted writable" 's|"/home/owstest/docs","read_only":true|"/home/owstest/docs","read_only":false|'
mutant strict args "a writable mount's read_only:false dropped (the default is read only)" 's|,"read_only":false||'
mutant strict args "one more folder mounted" 's|"mounts":\[|"mounts":[{"type":"bind","source":"/home/owstest","target":"/home/owstest","read_only":true},|'
mutant strict args "a folder mounted elsewhere" 's|"target":"/home/owstest/docs"|"target":"/sandbox"|'
mutant strict args "a volume instead of a bind mount" 's|"type":"bind","source":"/home/owstest/docs"|"type":"volume","source":"/home/owstest/docs"|'
mutant strict args "an unknown mount key" 's|"read_only":true}|"read_only":true,"propagation":"shared"}|'
mutant strict args "another main command" 's|^/opt/owsbx/owsbx$|/bin/sh|'
mutant strict args "the runner exits at once (no runner mode)" '/^runner$/d'
mutant strict args "the runner's folder mounted at its own path (hides the image's)" 's|"source":"/usr/local/bin/owsbx-linux-x86_64","target":"/opt/owsbx/owsbx"|"source":"/usr/local/bin","target":"/usr/local/bin"|'
mutant strict yaml "the runner's folder not readable" '/^    - "\/opt\/owsbx"$/d'
mutant none yaml "network none with a registry" '$a network_policies:\n  registries:\n    name: "registries"\n    endpoints:\n      - host: "pypi.org"\n        port: 443\n    binaries:\n      - path: "/**"'
mutant strict args "an unknown flag" 's/^--no-auto-providers$/--no-auto-providers\n--mount\n\/home/'
mutant strict args "another policy file" 's|^/run/owsandbox/s-strict/policy.yaml$|/tmp/other.yaml|'

echo "1..$n"
[ "$fails" = 0 ]
