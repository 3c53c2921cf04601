# What owsbx prints is owsbx's: a name the agent chose must not reach the person's
# terminal raw, where an OSC 52 would write the clipboard, an OSC 0 set the title, a C1
# CSI (U+009B) act, or a newline start a forged `owsbx:` line.  The agent plants such
# names (a link the person later gives as a session folder, a folder with a guarded name
# in it) and asks the proxy for such a site; owsbx's stdout, stderr and events must hold
# none of the raw bytes, and say the names escaped (lib/error.c ows_text_escape).
ATTACKS="$ATTACKS ttyesc"

# The bytes: OSC 52 clipboard write, OSC 0 title, a C1 CSI in UTF-8, a raw C1 byte, a
# newline with a forged line after it.
TTYESC_NAME=$'x\e]52;c;b3dzdGVzdA==\a\e]0;owned\a\xc2\x9b31m\x9b\nowsbx: forged'

# Fails when FILE holds ESC, BEL, a C1 control (raw or UTF-8) or a forged line.
ttyesc_clean() { # FILE
	"$PY" - "$1" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
bad = [m.group(0) for m in re.finditer(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|(?<![\xc2-\xf4])[\x80-\x9f]", data)]
forged = [l for l in data.split(b"\n") if l.startswith(b"owsbx: forged")]
if bad or forged:
    print("raw bytes %r, forged lines %d" % (bad[:6], len(forged)))
    sys.exit(1)
PY
}

attack_ttyesc() {
	local out=$OUT/ttyesc.out ev=$OUT/ttyesc.ev why rc
	as_person rm -rf "$RW/ttyesc"
	check "$(tag) control: the agent plants a link to a folder named with terminal controls" \
		sbx -- /bin/bash -c 'mkdir -p "$1/ttyesc/$2" && ln -s "$1/ttyesc/$2" "$1/ttyesc/door"' \
		_ "$RW" "$TTYESC_NAME"
	owsbx run --provider "$P" --net "$NET" --rw "$RW/ttyesc/door" -- true >"$out" 2>&1
	rc=$?
	check "$(tag) control: a session folder given through the link is refused" test "$rc" != 0
	if why=$(ttyesc_clean "$out"); then
		ok "$(tag) the refusal shows the link's target escaped, no raw control reaches the terminal"
	else
		not_ok "$(tag) the refusal shows the link's target escaped, no raw control reaches the terminal"
		diag <<<"$why"
	fi
	check "$(tag) ... and says it legibly (\\x1b]52)" grep -q 'x\\x1b\]52;c;' "$out"

	# A folder the person shares whose name the agent chose (it made it in a session
	# folder), with a guarded name the agent then makes in it: moved aside at close.
	as_person rm -f "$ev"
	owsbx run --provider "$P" --net "$NET" --events "$ev" --rw "$RW/ttyesc/$TTYESC_NAME" -- \
		sh -c 'echo "export X=1" > .envrc' >"$out" 2>&1
	check "$(tag) the events name the folder and the .envrc moved aside, escaped" \
		grep -q 'x\\\\x1b\]52;c;[^"]*/\.envrc\.owsbx-moved' "$ev"
	check "$(tag) the spawn event still says its enforcement (a cwd not in UTF-8 lost it)" \
		grep -q '"event":"spawn".*"enforcement":"' "$ev"
	if why=$(ttyesc_clean "$out") && why=$(ttyesc_clean "$ev"); then
		ok "$(tag) the moved-aside list and every event hold the name escaped"
	else
		not_ok "$(tag) the moved-aside list and every event hold the name escaped"
		diag <<<"$why"
	fi
	if [ "$NET" = allowlist ]; then
		sbx -- "$PY" -c '
import os, socket, sys
s = socket.create_connection(("127.0.0.1", int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1].strip("/"))))
s.sendall(b"CONNECT " + sys.argv[1].encode("utf-8", "surrogateescape") + b":443 HTTP/1.1\r\n\r\n")
print(s.recv(200).split(b"\r\n")[0].decode())' "$TTYESC_NAME" >"$out" 2>&1
		check "$(tag) control: the proxy refuses a CONNECT to such a name" grep -q ' 40[03] ' "$out"
		if why=$(ttyesc_clean "$out"); then
			ok "$(tag) the refused site reaches owsbx's output escaped or not at all"
		else
			not_ok "$(tag) the refused site reaches owsbx's output escaped or not at all"
			diag <<<"$why"
		fi
	fi
	as_person rm -rf "$RW/ttyesc"
	rm -f "$out" "$ev"
}
