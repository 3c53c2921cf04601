#!/bin/bash
# Everyday tools inside the account provider with --net allowlist, on a machine set up by
# `owsbx machine sandbox setup`: commands run as the closed account, whose firewall lets
# it reach only the session's proxy. The outside world is played by root servers on
# 127.0.0.1 (test/tools_lib.sh), listed exactly as localhost:PORT: git in the person's
# repository, make and cc, git clone and push over smart HTTP, curl over HTTPS, pip from
# a local index, npm from a local registry. Each result is checked as the person too.
# And git clone and push over SSH through `owsbx connect`, with the person's ssh shared
# and owsbx shared as a toolchain (~/.local/bin), so that the account can run it.
. "$(dirname "$0")/../account_lib.sh"
PY=/usr/bin/python3
S=$T/srv
mkdir -m 0755 "$S"
. "$ROOT/test/tools_lib.sh"
trap 'tools_stop; teardown' EXIT

W=$PHOME/work R=$PHOME/ref
TOKEN=OWSTEST_TOOLS_$HEX
OUT=
run() { # run ARGS...: owsbx run --provider account --net allowlist ARGS; OUT, RC
	OUT=$(owsbx run --provider account --net allowlist "$@" 2>&1 </dev/null)
	RC=$?
}
kv() { sed -n "s/^$1=//p" <<<"$OUT"; }
is() { # is GOT EXPECTED DESC
	if [ "$1" = "$2" ]; then ok "$3"; else
		not_ok "$3"
		printf '     got: %s\nexpected: %s\n' "$1" "$2" | diag
	fi
}
ran() { if [ "$RC" = 0 ]; then ok "$1"; else not_ok "$1"; diag <<<"$OUT"; fi; }
GITC=(git -c user.name=Owner -c user.email=owner@owstest.invalid)

# --- 1. git in the person's repository -----------------------------------------------------
as_person sh -c "cd $W && echo file > hello.txt && git init -q -b main &&
	git add hello.txt && git -c user.name=Owner -c user.email=o@owstest.invalid commit -q -m first" ||
	{ echo "Bail out! the person's repository"; exit 255; }
run --rw "$W" -- /bin/sh -c "
	cd $W || exit 9
	echo changed >> hello.txt; echo new > new.txt
	echo status=\$(git status --porcelain | tr '\n' ,)
	git add -A && git -c user.name='Sandbox Agent' -c user.email=agent@owstest.invalid \
		commit -q -m 'from inside' && echo commit=ok
	echo after=\$(git status --porcelain | wc -l)"
ran "git: a session in the person's repository runs"
is "$(kv status)" " M hello.txt,?? new.txt," "git status inside sees the change and the new file"
is "$(kv commit)" ok "git add and commit inside, as the closed account"
is "$(kv after)" 0 "the tree is clean after the commit"
is "$(as_person git -C "$W" log -1 --format='%an %s')" "Sandbox Agent from inside" \
	"as the person: the commit is in the history"
check "as the person: git fsck passes" as_person git -C "$W" fsck --strict --no-progress
check "as the person: git status works and is clean" \
	test "$(as_person git -C "$W" status --porcelain 2>&1)" = ""

# --- 2. make and cc -------------------------------------------------------------------------
B=$W/build
as_person sh -c "mkdir $B && cd $B && printf 'hello: main.c\n\t\$(CC) -O2 -Wall -Werror -o \$@ main.c\n' > Makefile &&
	printf '#include <stdio.h>\nint main(void) { int s = 0; for (int i = 1; i <= 100; i++) s += i; printf(\"sum=%%d\\\\n\", s); return 0; }\n' > main.c"
run --rw "$W" -- /bin/sh -c "cd $B && make -s && ./hello && make"
ran "make and cc: the build runs"
is "$(kv sum)" 5050 "the program built inside runs inside"
check "a second make has nothing to do" grep -Eq "up to date|Nothing to be done" <<<"$OUT"
is "$(as_person "$B/hello" 2>&1)" "sum=5050" "the person runs what was built inside"

# --- 3. git clone and push over smart HTTP --------------------------------------------------
G=$S/git
mkdir -p "$G/seed"
git init -q --bare -b main "$G/shared.git" &&
	git -C "$G/shared.git" config http.receivepack true &&
	git -C "$G/seed" init -q -b main &&
	echo "$TOKEN" >"$G/seed/seed.txt" &&
	git -C "$G/seed" add seed.txt &&
	"${GITC[@]}" -C "$G/seed" commit -q -m seed &&
	git -C "$G/seed" push -q "$G/shared.git" main ||
	{ echo "Bail out! the bare repository"; exit 255; }
serve git "$G" || { echo "Bail out! no git server"; exit 255; }
GP=$SRV_PORT
run --allow-site "localhost:$GP" --rw "$W" -- /bin/sh -c "
	cd $W && git clone -q http://localhost:$GP/shared.git http && cd http || exit 9
	echo seed=\$(cat seed.txt)
	echo pushed > pushed.txt && git add pushed.txt &&
	git -c user.name=Agent -c user.email=agent@owstest.invalid commit -q -m 'pushed over http' &&
	git push -q origin main && echo push=ok"
ran "git over HTTP: the session runs"
is "$(kv seed)" "$TOKEN" "git clone over HTTP through the proxy"
is "$(kv push)" ok "git push over HTTP through the proxy"
is "$(git -C "$G/shared.git" log -1 --format=%s main)" "pushed over http" \
	"the server's repository has the pushed commit"
check "the server saw the push (smart HTTP)" grep -q "POST /shared.git/git-receive-pack" <<<"$(requests "$GP")"
run --rw "$W" -- git clone -q "http://localhost:$GP/shared.git" "$W/refused"
check "control: the clone of an unlisted site fails, the site named" \
	test "$RC" != 0 -a -n "$(grep "refused localhost:$GP" <<<"$OUT")"

# --- 4. curl over HTTPS (CONNECT) -----------------------------------------------------------
TL=$S/tls
mkdir -p "$TL/www"
echo "$TOKEN-tls" >"$TL/www/index.html"
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj "/CN=owstest throwaway CA" -keyout "$TL/ca.key" -out "$TL/ca.pem" &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj "/CN=localhost" -keyout "$TL/srv.key" -out "$TL/srv.csr" &&
		printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$TL/ext" &&
		openssl x509 -req -in "$TL/srv.csr" -CA "$TL/ca.pem" -CAkey "$TL/ca.key" -CAcreateserial \
			-days 1 -extfile "$TL/ext" -out "$TL/srv.pem"
} >"$TL/openssl.log" 2>&1 || { echo "Bail out! openssl"; exit 255; }
serve tls "$TL/www" "$TL/srv.pem" "$TL/srv.key" || { echo "Bail out! no TLS server"; exit 255; }
TP=$SRV_PORT
install -m 0644 -o "$PERSON" "$TL/ca.pem" "$R/ca.pem"
run --allow-site "localhost:$TP" --ro "$R" -- /bin/sh -c "
	echo body=\$(curl -sS -m 10 --cacert $R/ca.pem https://localhost:$TP/)
	curl -s -m 10 -o /dev/null https://localhost:$TP/; echo untrusted=\$?"
ran "curl over HTTPS: the session runs"
is "$(kv body)" "$TOKEN-tls" "curl --cacert https://localhost:PORT/ through the proxy's CONNECT"
is "$(kv untrusted)" 60 "control: without the CA curl refuses the certificate"

# --- 5. pip from a local package index ------------------------------------------------------
if ! "$PY" -m pip --version >/dev/null 2>&1; then
	skip "no pip for $PY (apt-get install python3-pip)"
else
	P=$S/pypi
	mkdir -p "$P/simple/owstest-pkg" "$P/files"
	"$PY" - "$P/files" "$TOKEN" <<-'EOF' || { echo "Bail out! the wheel"; exit 255; }
	import base64, hashlib, sys, zipfile
	out, token = sys.argv[1], sys.argv[2]
	files = {
	    "owstest_pkg/__init__.py": "TOKEN = %r\n" % token,
	    "owstest_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: owstest-pkg\nVersion: 1.0\n",
	    "owstest_pkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: owstest\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	record = ""
	for p, d in files.items():
	    h = base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode()
	    record += "%s,sha256=%s,%d\n" % (p, h, len(d.encode()))
	files["owstest_pkg-1.0.dist-info/RECORD"] = record + "owstest_pkg-1.0.dist-info/RECORD,,\n"
	with zipfile.ZipFile(out + "/owstest_pkg-1.0-py3-none-any.whl", "w") as z:
	    for p, d in files.items():
	        z.writestr(p, d)
	EOF
	whl=owstest_pkg-1.0-py3-none-any.whl
	printf '<a href="../../files/%s#sha256=%s">%s</a>\n' "$whl" \
		"$(sha256sum "$P/files/$whl" | cut -d' ' -f1)" "$whl" >"$P/simple/owstest-pkg/index.html"
	serve static "$P" || { echo "Bail out! no package index"; exit 255; }
	PP=$SRV_PORT
	run --allow-site "localhost:$PP" --rw "$W" -- /bin/sh -c "
		$PY -m pip install -q --disable-pip-version-check --no-cache-dir \
			--index-url http://localhost:$PP/simple/ --target $W/pylib owstest-pkg && echo pip=ok
		echo token=\$(PYTHONPATH=$W/pylib $PY -c 'import owstest_pkg; print(owstest_pkg.TOKEN)')"
	ran "pip: the session runs"
	is "$(kv pip)" ok "pip install from a local index through the proxy"
	is "$(kv token)" "$TOKEN" "the installed package imports inside"
	is "$(as_person env PYTHONPATH="$W/pylib" "$PY" -c 'import owstest_pkg; print(owstest_pkg.TOKEN)' 2>&1)" \
		"$TOKEN" "the person imports what pip installed"
fi

# --- 6. npm from a local registry -----------------------------------------------------------
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	skip "no node and npm"
else
	NPD=$S/npm NAME=owstest-npm-pkg
	mkdir -p "$NPD/pkg/package" "$NPD/www/$NAME/-"
	printf '{"name":"%s","version":"1.0.0","main":"index.js"}\n' "$NAME" >"$NPD/pkg/package/package.json"
	printf 'module.exports = "%s-npm";\n' "$TOKEN" >"$NPD/pkg/package/index.js"
	tgz=$NPD/www/$NAME/-/$NAME-1.0.0.tgz
	tar -C "$NPD/pkg" --owner=0 --group=0 -czf "$tgz" package
	serve static "$NPD/www" || { echo "Bail out! no npm registry"; exit 255; }
	NP=$SRV_PORT
	"$PY" - "$NPD/www/$NAME/index.json" "$NAME" "$tgz" "http://localhost:$NP/$NAME/-/$NAME-1.0.0.tgz" <<-'EOF'
	import base64, hashlib, json, sys
	out, name, tgz, url = sys.argv[1:]
	data = open(tgz, "rb").read()
	v = {"name": name, "version": "1.0.0", "main": "index.js",
	     "dist": {"tarball": url, "shasum": hashlib.sha1(data).hexdigest(),
	              "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}}
	json.dump({"name": name, "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": v}}, open(out, "w"))
	EOF
	as_person mkdir "$W/npmproj"
	run --allow-site "localhost:$NP" --rw "$W" -- /bin/sh -c "
		cd $W/npmproj && npm install --registry http://localhost:$NP/ --no-audit --no-fund \
			--no-update-notifier $NAME >npm.log 2>&1 && echo npm=ok || cat npm.log
		echo got=\$(node -e 'console.log(require(\"$NAME\"))')"
	ran "npm: the session runs"
	is "$(kv npm)" ok "npm install from a local registry through the proxy"
	is "$(kv got)" "$TOKEN-npm" "node requires the installed package inside"
	is "$(as_person sh -c "cd $W/npmproj && node -e 'console.log(require(\"$NAME\"))'" 2>&1)" \
		"$TOKEN-npm" "the person requires it too"
fi

# --- 7. git clone and push over SSH through the proxy (owsbx connect) -----------------------
if [ ! -x /usr/sbin/sshd ]; then
	skip "no sshd (apt-get install openssh-server)"
else
	K=$S/ssh
	mkdir -p "$K"
	ssh-keygen -q -t ed25519 -N '' -C owstest-host -f "$K/host_key" </dev/null
	# A real key for this test (the fixture's is a fake), and owsbx in the person's
	# ~/.local/bin, shared read-only: the closed account runs it as ssh's ProxyCommand.
	as_person sh -c 'rm -f ~/.ssh/id_ed25519 ~/.ssh/id_ed25519.pub &&
		ssh-keygen -q -t ed25519 -N "" -C owstest -f ~/.ssh/id_ed25519 &&
		mkdir -p ~/.local/bin' </dev/null
	install -o "$PERSON" -m 0755 "$ROOT/owsbx" "$PHOME/.local/bin/owsbx"
	chmod 0755 "$PHOME/.local"
	cp "$PHOME/.ssh/id_ed25519.pub" "$K/authorized_keys"
	chmod 0644 "$K/authorized_keys"
	as_person sh -c "cd $W && git init -q --bare -b main $W/ssh.git && git init -q -b main $W/seed &&
		cd $W/seed && echo $TOKEN-ssh > seed.txt && git add seed.txt &&
		git -c user.name=Owner -c user.email=o@owstest.invalid commit -q -m seed &&
		git push -q $W/ssh.git main" </dev/null
	if getent shadow "$PERSON" | cut -d: -f2 | grep -q '^!'; then usermod -p '*' "$PERSON"; fi
	made_run_sshd=
	if [ ! -d /run/sshd ]; then mkdir -m 0755 /run/sshd; made_run_sshd=1; fi
	SP=
	for _ in 1 2 3 4 5; do
		SP=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		cat >"$K/sshd_config" <<-EOF
			Port $SP
			ListenAddress 127.0.0.1
			HostKey $K/host_key
			PidFile none
			AuthorizedKeysFile $K/authorized_keys
			AllowUsers $PERSON
			UsePAM no
			StrictModes no
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			PermitRootLogin no
			AllowTcpForwarding no
			X11Forwarding no
		EOF
		/usr/sbin/sshd -D -e -f "$K/sshd_config" </dev/null >>"$K/sshd.log" 2>&1 &
		SSHD=$!
		for _ in $(seq 50); do ss -Htln "sport = :$SP" | grep -q . && break 2; sleep 0.1; done
	done
	printf '[localhost]:%s %s\n' "$SP" "$(cut -d' ' -f1,2 "$K/host_key.pub")" >"$PHOME/.ssh/known_hosts"
	chown "$PERSON:" "$PHOME/.ssh/known_hosts"
	cp -p "$CONF" "$T/config.before-ssh"
	printf '[credentials]\nenable = ssh\n[toolchains]\nenable = .local/bin\n' >>"$CONF"
	URL="ssh://$PERSON@localhost:$SP$W/ssh.git"
	OUT=$(as_person "$PHOME/.local/bin/owsbx" run --provider account --net allowlist \
		--allow-site "localhost:$SP" --rw "$W" -- /bin/sh -c "
		cd $W && git clone -q $URL ssh-clone && cd ssh-clone || exit 9
		echo seed=\$(cat seed.txt)
		echo pushed-ssh > ssh.txt && git add ssh.txt &&
		git -c user.name=Agent -c user.email=agent@owstest.invalid commit -q -m 'pushed over ssh' &&
		git push -q origin main && echo push=ok" 2>&1 </dev/null)
	RC=$?
	ran "git over SSH: the session runs as the closed account"
	is "$(kv seed)" "$TOKEN-ssh" "git clone over SSH through owsbx connect"
	is "$(kv push)" ok "git push over SSH through owsbx connect"
	is "$(as_person git -C "$W/ssh.git" log -1 --format=%s main)" "pushed over ssh" \
		"as the person: the server's repository has the pushed commit"
	check "sshd saw the person's key, from the proxy on the host's loopback" \
		grep -q "Accepted publickey for $PERSON from 127.0.0.1" "$K/sshd.log"
	kill "$SSHD" 2>/dev/null
	wait "$SSHD" 2>/dev/null
	[ -n "$made_run_sshd" ] && rmdir /run/sshd
	cp -p "$T/config.before-ssh" "$CONF"
	as_person rm -rf "$W/ssh.git" "$W/seed" "$W/ssh-clone" "$PHOME/.local/bin/owsbx"
fi

# What the closed account made in the person's folder goes with the person's files.
# Known limit: pip --target copies its tree in with chmod (shutil.copystat), which narrows
# each copied entry's ACL mask to its group bits (r-x): the person's grant there becomes
# read-only, so the person can import the package but not remove it. Root removes it.
if [ -d "$W/pylib" ]; then
	if as_person rm -rf "$W/pylib" 2>/dev/null; then
		ok "the person can remove what pip --target installed"
	else
		skip "known limit: what pip --target copied in (chmod narrows the ACL mask) is read-only for the person"
		getfacl -p "$W/pylib/owstest_pkg" 2>&1 | grep -E 'mask|owstest_p' | diag
		rm -rf "$W/pylib"
	fi
fi
as_person rm -rf "$W/.git" "$W/hello.txt" "$W/new.txt" "$W/build" "$W/http" "$W/npmproj"
check "the person can remove everything else the sessions made" test -z "$(ls -A "$W")"
tools_stop
done_testing
