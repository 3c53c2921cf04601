#!/bin/bash
# Everyday tools inside the landlock provider with --net allowlist, as the throwaway person.
# The outside world is played by servers this test starts on 127.0.0.1 (as root), each
# reached through the session's proxy as localhost:PORT, listed exactly with --allow-site:
# git in the person's repository (status, add, commit), make and cc, git clone and push
# over smart HTTP, curl over HTTPS (a throwaway CA), pip from a local index, npm from a
# local registry, git clone and push over SSH (a throwaway sshd, `owsbx connect`).
# Each tool's result is checked outside the sandbox too.
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

H=$TU_HOME
W=$TU_WORK
S=$(mktemp -d /tmp/owstest-tools.XXXXXX) || bail_out "mktemp"
owstest_remove_at_exit "$S"
chmod 0755 "$S"
kv() { sed -n "s/^$1=//p" <<<"$SBX_OUT"; }
. "$OWSTEST_DIR/tools_lib.sh"
TOKEN=OWSTEST_TOOLS_$(rand_hex 4)


GITC=(git -c user.name=Owner -c user.email=owner@owstest.invalid)

# --- 1. git in the person's repository, in an --rw folder ----------------------------------
as_user "${GITC[@]}" -C "$W" init -q -b main &&
	as_user git -C "$W" add hello.txt &&
	as_user "${GITC[@]}" -C "$W" commit -q -m "first" || bail_out "the person's repository"
sbx run --net allowlist --rw "$W" -- /bin/sh -c "
	cd $W || exit 9
	echo changed >> hello.txt; echo new > new.txt
	echo status=\$(git status --porcelain | tr '\n' ,)
	git add -A && git -c user.name='Sandbox Agent' -c user.email=agent@owstest.invalid \
		commit -q -m 'from inside' && echo commit=ok
	echo after=\$(git status --porcelain | wc -l)
	echo hook=\$(touch .git/hooks/owstest 2>/dev/null && echo written || echo refused)"
is "$SBX_RC" 0 "git: a session in the person's repository runs" || diag "$(sbx_diag)"
is "$(kv status)" " M hello.txt,?? new.txt," "git status inside sees the change and the new file"
is "$(kv commit)" ok "git add and commit inside"
is "$(kv after)" 0 "the tree is clean after the commit"
is "$(as_user git -C "$W" log -1 --format='%an <%ae> %s')" \
	"Sandbox Agent <agent@owstest.invalid> from inside" "outside: the commit is in the person's history"
is "$(as_user git -C "$W" status --porcelain)" "" "outside: the tree is clean"
ok "outside: git fsck passes" as_user git -C "$W" fsck --strict --no-progress
is "$(kv hook)" refused ".git/hooks stays read-only inside (by design)"

# --- 2. make and cc -------------------------------------------------------------------------
B=$H/build
as_user mkdir "$B"
as_user /bin/sh -c "cd $B && cat > Makefile <<'EOF'
CFLAGS = -O2 -Wall -Werror
hello: main.o sum.o
	\$(CC) -o \$@ main.o sum.o
%.o: %.c sum.h
	\$(CC) \$(CFLAGS) -c -o \$@ \$<
EOF
printf 'int sum(int n);\n' > sum.h
printf '#include \"sum.h\"\nint sum(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i; return s; }\n' > sum.c
printf '#include <stdio.h>\n#include \"sum.h\"\nint main(void) { printf(\"sum=%%d\\\\n\", sum(100)); return 0; }\n' > main.c"
sbx run --net allowlist --rw "$B" -- /bin/sh -c "cd $B && make -s && ./hello && make"
is "$SBX_RC" 0 "make and cc: the build runs" || diag "$(sbx_diag)"
is "$(kv sum)" 5050 "the program built inside runs inside"
like "$SBX_OUT" "up to date|Nothing to be done" "a second make has nothing to do"
is "$(as_user "$B/hello")" "sum=5050" "outside: the person runs what was built inside"
is "$(stat -c %U "$B/hello")" "$TU" "outside: the binary belongs to the person"

# --- 3. git clone and push over smart HTTP, through the proxy -------------------------------
G=$S/git
mkdir -p "$G/seed"
git init -q --bare -b main "$G/shared.git" &&
	git -C "$G/shared.git" config http.receivepack true &&
	git -C "$G/seed" init -q -b main &&
	echo "$TOKEN" >"$G/seed/seed.txt" &&
	git -C "$G/seed" add seed.txt &&
	"${GITC[@]}" -C "$G/seed" commit -q -m seed &&
	git -C "$G/seed" push -q "$G/shared.git" main || bail_out "the bare repository"
serve git "$G" || bail_out "no git server"
GP=$SRV_PORT
C=$H/clones
as_user mkdir "$C"
sbx run --net allowlist --allow-site "localhost:$GP" --rw "$C" -- /bin/sh -c "
	cd $C && git clone -q http://localhost:$GP/shared.git http && cd http || exit 9
	echo seed=\$(cat seed.txt)
	echo pushed > pushed.txt && git add pushed.txt &&
	git -c user.name=Agent -c user.email=agent@owstest.invalid commit -q -m 'pushed over http' &&
	git push -q origin main && echo push=ok"
is "$SBX_RC" 0 "git over HTTP: the session runs" || diag "$(sbx_diag)"
is "$(kv seed)" "$TOKEN" "git clone over HTTP through the proxy"
is "$(kv push)" ok "git push over HTTP through the proxy"
is "$(git -C "$G/shared.git" log -1 --format=%s main)" "pushed over http" "outside: the server's repository has the pushed commit"
is "$(git -C "$G/shared.git" show main:pushed.txt)" pushed "outside: with its file"
like "$(requests "$GP")" "POST /shared.git/git-receive-pack" "the server saw the push (smart HTTP)"
# control: the same clone without the site listed is refused by the proxy
sbx run --net allowlist --rw "$C" -- git clone -q "http://localhost:$GP/shared.git" "$C/refused"
isnt "$SBX_RC" 0 "git clone of an unlisted site fails"
like "$SBX_ERR" "refused localhost:$GP" "and owsbx names the refused site"

# --- 4. curl over HTTPS through the proxy (CONNECT) -----------------------------------------
T=$S/tls
mkdir -p "$T/www"
echo "$TOKEN-tls" >"$T/www/index.html"
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
		-subj "/CN=owstest throwaway CA" -keyout "$T/ca.key" -out "$T/ca.pem" &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj "/CN=localhost" -keyout "$T/srv.key" -out "$T/srv.csr" &&
		printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$T/ext" &&
		openssl x509 -req -in "$T/srv.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
			-days 1 -extfile "$T/ext" -out "$T/srv.pem"
} >"$T/openssl.log" 2>&1 || bail_out "openssl: $(cat "$T/openssl.log")"
serve tls "$T/www" "$T/srv.pem" "$T/srv.key" || bail_out "no TLS server"
TP=$SRV_PORT
install -m 0644 -o "$TU_UID" -g "$TU_GID" "$T/ca.pem" "$TU_RO/ca.pem"
sbx run --net allowlist --allow-site "localhost:$TP" --ro "$TU_RO" -- /bin/sh -c "
	echo body=\$(curl -sS -m 10 --cacert $TU_RO/ca.pem https://localhost:$TP/)
	curl -s -m 10 -o /dev/null https://localhost:$TP/; echo untrusted=\$?"
is "$SBX_RC" 0 "curl over HTTPS: the session runs" || diag "$(sbx_diag)"
is "$(kv body)" "$TOKEN-tls" "curl --cacert https://localhost:PORT/ through the proxy's CONNECT"
is "$(kv untrusted)" 60 "control: without the CA curl refuses the certificate (it is real TLS)"

# --- 5. pip from a local package index ------------------------------------------------------
if ! "$PY" -m pip --version >/dev/null 2>&1; then
	skip "no pip for $PY (apt-get install python3-pip)" 5
else
	P=$S/pypi
	mkdir -p "$P/simple/owstest-pkg" "$P/files"
	"$PY" - "$P/files" "$TOKEN" <<-'EOF' || bail_out "the wheel"
	import base64, hashlib, sys, zipfile
	out, token = sys.argv[1], sys.argv[2]
	name = "owstest_pkg-1.0-py3-none-any.whl"
	files = {
	    "owstest_pkg/__init__.py": "TOKEN = %r\n" % token,
	    "owstest_pkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: owstest-pkg\nVersion: 1.0\nSummary: owsandbox test\n",
	    "owstest_pkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: owstest\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	record = ""
	for p, d in files.items():
	    h = base64.urlsafe_b64encode(hashlib.sha256(d.encode()).digest()).rstrip(b"=").decode()
	    record += "%s,sha256=%s,%d\n" % (p, h, len(d.encode()))
	record += "owstest_pkg-1.0.dist-info/RECORD,,\n"
	files["owstest_pkg-1.0.dist-info/RECORD"] = record
	with zipfile.ZipFile(out + "/" + name, "w", zipfile.ZIP_DEFLATED) as z:
	    for p, d in files.items():
	        z.writestr(p, d)
EOF
	whl=owstest_pkg-1.0-py3-none-any.whl
	sha=$(sha256sum "$P/files/$whl" | cut -d' ' -f1)
	printf '<!DOCTYPE html><html><body><a href="owstest-pkg/">owstest-pkg</a></body></html>\n' >"$P/simple/index.html"
	printf '<!DOCTYPE html><html><body><a href="../../files/%s#sha256=%s">%s</a></body></html>\n' \
		"$whl" "$sha" "$whl" >"$P/simple/owstest-pkg/index.html"
	serve static "$P" || bail_out "no package index"
	PP=$SRV_PORT
	L=$H/pylib
	as_user mkdir "$L"
	sbx run --net allowlist --allow-site "localhost:$PP" --rw "$L" -- /bin/sh -c "
		$PY -m pip install -q --disable-pip-version-check --no-cache-dir \
			--index-url http://localhost:$PP/simple/ --target $L owstest-pkg && echo pip=ok
		echo token=\$(PYTHONPATH=$L $PY -c 'import owstest_pkg; print(owstest_pkg.TOKEN)')"
	is "$SBX_RC" 0 "pip: the session runs" || diag "$(sbx_diag)"
	is "$(kv pip)" ok "pip install from a local index through the proxy"
	is "$(kv token)" "$TOKEN" "the installed package imports inside"
	like "$(requests "$PP")" "GET /files/$whl" "the index served the wheel"
	AS_USER_ENV=("PYTHONPATH=$L")
	is "$(as_user "$PY" -c 'import owstest_pkg; print(owstest_pkg.TOKEN)')" \
		"$TOKEN" "outside: the person imports what pip installed"
	AS_USER_ENV=()
fi

# --- 6. npm from a local registry -----------------------------------------------------------
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	skip "no node and npm" 5
else
	N=$S/npm
	NAME=owstest-npm-pkg
	mkdir -p "$N/pkg/package" "$N/www/$NAME/-"
	printf '{"name":"%s","version":"1.0.0","main":"index.js"}\n' "$NAME" >"$N/pkg/package/package.json"
	printf 'module.exports = "%s-npm";\n' "$TOKEN" >"$N/pkg/package/index.js"
	tgz=$N/www/$NAME/-/$NAME-1.0.0.tgz
	tar -C "$N/pkg" --owner=0 --group=0 -czf "$tgz" package || bail_out "the npm tarball"
	serve static "$N/www" || bail_out "no npm registry"
	NP=$SRV_PORT
	"$PY" - "$N/www/$NAME/index.json" "$NAME" "$tgz" "http://localhost:$NP/$NAME/-/$NAME-1.0.0.tgz" <<-'EOF' || bail_out "the npm metadata"
	import base64, hashlib, json, sys
	out, name, tgz, url = sys.argv[1:]
	data = open(tgz, "rb").read()
	v = {"name": name, "version": "1.0.0", "main": "index.js",
	     "dist": {"tarball": url, "shasum": hashlib.sha1(data).hexdigest(),
	              "integrity": "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()}}
	json.dump({"name": name, "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": v}}, open(out, "w"))
EOF
	J=$H/npmproj
	as_user mkdir "$J"
	sbx run --net allowlist --allow-site "localhost:$NP" --rw "$J" -- /bin/sh -c "
		cd $J && npm install --registry http://localhost:$NP/ --no-audit --no-fund \
			--no-update-notifier $NAME >npm.log 2>&1 && echo npm=ok || cat npm.log
		echo got=\$(node -e 'console.log(require(\"$NAME\"))')"
	is "$SBX_RC" 0 "npm: the session runs" || diag "$(sbx_diag)"
	is "$(kv npm)" ok "npm install from a local registry through the proxy"
	is "$(kv got)" "$TOKEN-npm" "node requires the installed package inside"
	like "$(requests "$NP")" "GET /$NAME/-/$NAME-1.0.0.tgz" "the registry served the tarball"
	like "$(cat "$J/package.json" 2>/dev/null)" "\"$NAME\": \"\\^1.0.0\"" "outside: package.json records the dependency"
fi

# --- 7. git clone and push over SSH through the proxy (owsbx connect) -----------------------
if [ ! -x /usr/sbin/sshd ]; then
	skip "no sshd (apt-get install openssh-server)" 6
else
	K=$S/ssh
	mkdir -p "$K"
	ssh-keygen -q -t ed25519 -N '' -C owstest-host -f "$K/host_key" </dev/null
	cp "$H/.ssh/id_ed25519.pub" "$K/authorized_keys"
	chmod 0644 "$K/authorized_keys"
	git init -q --bare -b main "$K/repo.git" &&
		git -C "$G/seed" push -q "$K/repo.git" main &&
		chown -R "$TU_UID:$TU_GID" "$K/repo.git" || bail_out "the ssh repository"
	# sshd refuses a locked account ('!' in shadow) without PAM: unlock it for keys only
	if getent shadow "$TU" | cut -d: -f2 | grep -q '^!'; then usermod -p '*' "$TU"; fi
	if [ ! -d /run/sshd ]; then
		mkdir -m 0755 /run/sshd
		owstest_remove_at_exit /run/sshd
	fi
	for ((i = 0; i < 5; i++)); do
		SP=$(rand_port)
		cat >"$K/sshd_config" <<-EOF
			Port $SP
			ListenAddress 127.0.0.1
			HostKey $K/host_key
			PidFile none
			AuthorizedKeysFile $K/authorized_keys
			AllowUsers $TU
			UsePAM no
			StrictModes no
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			PermitRootLogin no
			AllowAgentForwarding no
			AllowTcpForwarding no
			X11Forwarding no
		EOF
		/usr/sbin/sshd -D -e -f "$K/sshd_config" </dev/null >>"$K/sshd.log" 2>&1 &
		owstest_root_pid $!
		poll 5 sh -c "ss -Htln 'sport = :$SP' | grep -q ." && break
	done
	printf '[localhost]:%s %s\n' "$SP" "$(cut -d' ' -f1,2 "$K/host_key.pub")" >"$H/.ssh/known_hosts"
	chown "$TU_UID:$TU_GID" "$H/.ssh/known_hosts"
	cfg=$TU_BIN_DIR/ssh.ini
	printf '[credentials]\nenable = ssh\n' >"$cfg"
	chmod 0644 "$cfg"
	URL="ssh://$TU@localhost:$SP$K/repo.git"
	AS_USER_ENV=("OWSBX_CONFIG=$cfg")
	sbx run --net allowlist --allow-site "localhost:$SP" --rw "$C" -- /bin/sh -c "
		cd $C && git clone -q $URL ssh && cd ssh || exit 9
		echo seed=\$(cat seed.txt)
		echo pushed-ssh > ssh.txt && git add ssh.txt &&
		git -c user.name=Agent -c user.email=agent@owstest.invalid commit -q -m 'pushed over ssh' &&
		git push -q origin main && echo push=ok"
	AS_USER_ENV=()
	is "$SBX_RC" 0 "git over SSH: the session runs" || diag "$(sbx_diag)" "$(cat "$K/sshd.log")"
	is "$(kv seed)" "$TOKEN" "git clone over SSH through owsbx connect"
	is "$(kv push)" ok "git push over SSH through owsbx connect"
	is "$(as_user git -C "$K/repo.git" log -1 --format=%s main)" "pushed over ssh" \
		"outside: the server's repository has the pushed commit"
	like "$(cat "$K/sshd.log")" "Accepted publickey for $TU from 127\.0\.0\.1" \
		"sshd saw the person's key, from the proxy on the host's loopback"
	# control: without the site listed the proxy refuses the tunnel
	AS_USER_ENV=("OWSBX_CONFIG=$cfg")
	sbx run --net allowlist --rw "$C" -- git clone -q "$URL" "$C/refused-ssh"
	AS_USER_ENV=()
	isnt "$SBX_RC" 0 "git clone over SSH of an unlisted site fails"
fi

is "$(owstest_session_dirs)" "" "nothing of the sessions is left"
ok "no process left" poll 5 owstest_no_user_procs
done_testing
