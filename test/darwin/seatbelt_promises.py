#!/usr/bin/env python3
"""The promise questions, asked of each rendered Seatbelt profile through the model.

    seatbelt_promises.py DIR    DIR holds seatbelt_NAME.sb and .params for the sessions
                                of test/unit/seatbelt_profile.c (its --emit); prints TAP

Each answer is what the README's promise table says the wall does; the model
(sbpl_model.py) decides it from the profile's text and parameters alone.  The
mutants at the end break one rule each in a copy of a profile: the questions
must then fail, or they would be asking nothing.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sbpl_model import KINDS, UNCONFIRMED, Profile, SbplError, read_params  # noqa: E402

HOME = "/Users/owstest"
PRIV = "/private/tmp/owsandbox-501/s-0123abcd"
OTHER = "/private/tmp/owsandbox-501/s-ffff0000"
ALIVE = PRIV + "/.owsbx-alive-5e1f"
DEAD = PRIV + "/.owsbx-other-77aa"
PORT = 47801
ODD = HOME + '/pro"j\n(e)ct'

YES, NO = True, False


def common(p):
    """What holds in every session."""
    return [
        ("~/.ssh/id_ed25519 cannot be read", NO, p.allows("file-read-data", path=HOME + "/.ssh/id_ed25519")),
        ("~/.ssh/id_ed25519 cannot be stat'ed", NO, p.allows("file-read-metadata", path=HOME + "/.ssh/id_ed25519")),
        ("~/.aws/credentials cannot be read", NO, p.allows("file-read-data", path=HOME + "/.aws/credentials")),
        ("the keychain file cannot be read", NO,
         p.allows("file-read-data", path=HOME + "/Library/Keychains/login.keychain-db")),
        ("~ cannot be listed", NO, p.allows("file-read-data", path=HOME)),
        ("/Users cannot be listed", NO, p.allows("file-read-data", path="/Users")),
        ("~ can be stat'ed (a parent of a session path)", YES, p.allows("file-read-metadata", path=HOME)),
        ("~ cannot be written", NO, p.allows("file-write-create", path=HOME + "/.zshrc")),
        ("the private home can be written", YES, p.allows("file-write-create", path=PRIV + "/home/.npmrc")),
        ("the private home can be read and listed", YES, p.allows("file-read-data", path=PRIV + "/home")),
        ("a tool in the private caches can run", YES, p.allows("process-exec", path=PRIV + "/cache/npm/bin/x")),
        ("/usr/bin/env can be read", YES, p.allows("file-read-data", path="/usr/bin/env")),
        ("/usr/bin/env can be run", YES, p.allows("process-exec", path="/usr/bin/env")),
        ("/usr/lib's libraries can be mapped", YES,
         p.allows("file-map-executable", path="/usr/lib/libSystem.B.dylib")),
        ("/usr/bin/env cannot be written", NO, p.allows("file-write-data", path="/usr/bin/env")),
        ("/etc/passwd (/private/etc) can be read", YES, p.allows("file-read-data", path="/private/etc/passwd")),
        ("/private/etc cannot be written", NO, p.allows("file-write-data", path="/private/etc/hosts")),
        ("the /etc link can be looked up", YES, p.allows("file-read-metadata", path="/etc")),
        ("the time zone can be read", YES,
         p.allows("file-read-data", path="/private/var/db/timezone/zoneinfo/UTC")),
        ("xcrun's developer folder link can be read", YES,
         p.allows("file-read-data", path="/private/var/db/xcode_select_link")),
        ("/private/var/db elsewhere cannot be read", NO,
         p.allows("file-read-data", path="/private/var/db/sudo/ts/owstest")),
        ("another session's private folder cannot be read", NO,
         p.allows("file-read-data", path=OTHER + "/home/.ssh/id_ed25519")),
        ("another session's private folder cannot be written", NO,
         p.allows("file-write-create", path=OTHER + "/x")),
        ("/private/tmp cannot be listed", NO, p.allows("file-read-data", path="/private/tmp")),
        ("the folder of the private folders cannot be listed", NO,
         p.allows("file-read-data", path="/private/tmp/owsandbox-501")),
        ("another file in /private/tmp cannot be read", NO, p.allows("file-read-data", path="/private/tmp/x")),
        ("/dev/null can be written", YES, p.allows("file-write-data", path="/dev/null")),
        ("/dev/urandom can be read", YES, p.allows("file-read-data", path="/dev/urandom")),
        ("/dev/tty can be written", YES, p.allows("file-write-data", path="/dev/tty")),
        ("another terminal cannot be read (a Terminal tab's input)", NO,
         p.allows("file-read-data", path="/dev/ttys003")),
        ("another terminal cannot be written", NO, p.allows("file-write-data", path="/dev/ttys003")),
        ("a pseudo-terminal made inside can be read and written", YES,
         p.allows("file-read-data", path="/dev/ttys009", extension="com.apple.sandbox.pty") and
         p.allows("file-write-data", path="/dev/ttys009", extension="com.apple.sandbox.pty")),
        ("the command's own terminal takes ioctls (isatty, stty)", YES,
         p.allows("file-ioctl", path="/dev/ttys003")),
        ("a new pseudo-terminal can be made (/dev/ptmx)", YES,
         p.allows("file-read-data", path="/dev/ptmx") and p.allows("pseudo-tty")),
        ("a disk cannot be read", NO, p.allows("file-read-data", path="/dev/disk0")),
        ("a set-ID mode is refused in the private folder", NO,
         p.allows("file-write-setugid", path=PRIV + "/x")),
        ("the keychain's Mach service is refused (com.apple.SecurityServer)", NO,
         p.allows("mach-lookup", mach="com.apple.SecurityServer")),
        ("the keychain's Mach service is refused (com.apple.securityd.xpc)", NO,
         p.allows("mach-lookup", mach="com.apple.securityd.xpc")),
        ("the person's preferences (cfprefsd) are refused", NO,
         p.allows("mach-lookup", mach="com.apple.cfprefsd.agent")),
        ("user names can be looked up (opendirectoryd.libinfo)", YES,
         p.allows("mach-lookup", mach="com.apple.system.opendirectoryd.libinfo")),
        ("a signal inside the sandbox is allowed", YES, p.allows("signal", target="same-sandbox")),
        ("a signal to another process is refused", NO, p.allows("signal", target="other")),
        ("another process's information is refused", NO, p.allows("process-info-pidinfo", target="other")),
        ("the process list is refused (ps does not run)", NO, p.allows("sysctl-read", sysctl="kern.proc.all")),
        ("the CPU count can be read", YES, p.allows("sysctl-read", sysctl="hw.ncpu")),
        ("a unix socket can be made", YES, p.allows("system-socket", domain="AF_UNIX")),
        ("a unix socket in the private folder can be bound", YES,
         p.allows("network-bind", local_unix=PRIV + "/runner.sock")),
        ("a unix socket in the private folder can be reached", YES,
         p.allows("network-outbound", remote_unix=PRIV + "/runner.sock")),
        ("the person's ssh-agent is out of reach", NO,
         p.allows("network-outbound", remote_unix="/private/tmp/com.apple.launchd.AbCd/Listeners")),
        ("docker's socket is out of reach", NO,
         p.allows("network-outbound", remote_unix=HOME + "/.docker/run/docker.sock")),
        ("another session's socket is out of reach", NO,
         p.allows("network-outbound", remote_unix=OTHER + "/runner.sock")),
        ("marker_allow can be looked up", YES, p.allows("file-read-metadata", path=ALIVE)),
        ("marker_deny cannot be looked up (inside the private folder, still refused)", NO,
         p.allows("file-read-metadata", path=DEAD)),
        ("marker_deny cannot be tested for", NO, p.allows("file-test-existence", path=DEAD)),
    ]


def rw_folder(p, folder):
    return [
        ("the rw folder can be written", YES, p.allows("file-write-create", path=folder + "/new.txt")),
        ("the rw folder can be listed", YES, p.allows("file-read-data", path=folder)),
        ("a file in the rw folder can be removed", YES, p.allows("file-write-unlink", path=folder + "/a/b")),
        ("a set-ID mode is refused in the rw folder", NO, p.allows("file-write-setugid", path=folder + "/x")),
        ("a sibling sharing the folder's prefix cannot be read", NO,
         p.allows("file-read-data", path=folder + "2/secret")),
        ("a sibling sharing the folder's prefix cannot be written", NO,
         p.allows("file-write-create", path=folder + "2/x")),
        ("a sibling sharing the folder's prefix is not the folder's socket space", NO,
         p.allows("network-outbound", remote_unix=folder + "2/s.sock")),
        ("a unix socket in the rw folder can be reached", YES,
         p.allows("network-outbound", remote_unix=folder + "/s.sock")),
    ]


def no_network(p):
    return [
        ("port 443 on 1.2.3.4 is refused", NO, p.allows("network-outbound", remote_ip=("tcp", "1.2.3.4", 443))),
        ("the proxy port on localhost is refused", NO,
         p.allows("network-outbound", remote_ip=("tcp", "localhost", PORT))),
        ("DNS over UDP is refused", NO, p.allows("network-outbound", remote_ip=("udp", "8.8.8.8", 53))),
        ("mDNSResponder (DNS) is refused", NO,
         p.allows("network-outbound", remote_unix="/private/var/run/mDNSResponder")),
        ("no port can be bound", NO, p.allows("network-bind", local_ip=("tcp", "localhost", 8080))),
        ("trustd is refused", NO, p.allows("mach-lookup", mach="com.apple.trustd.agent")),
        ("configd is refused", NO, p.allows("mach-lookup", mach="com.apple.SystemConfiguration.configd")),
        ("resolv.conf is not read (no DNS)", NO, p.allows("file-read-data", path="/private/var/run/resolv.conf")),
    ]


def none_session(p):
    return common(p) + rw_folder(p, HOME + "/project") + no_network(p)


def quote_session(p):
    return common(p) + rw_folder(p, ODD) + no_network(p) + [
        ("the name cut at its quote is not the folder", NO,
         p.allows("file-write-create", path=HOME + '/pro"j')),
        ("the name cut at its newline is not the folder", NO,
         p.allows("file-write-create", path=HOME + '/pro"j\n')),
        ("the plain folder of the other session is not this one", NO,
         p.allows("file-write-create", path=HOME + "/project/x")),
    ]


def allowlist_session(p):
    proj, docs = HOME + "/project", HOME + "/docs"
    return common(p) + rw_folder(p, proj) + [
        ("a ro folder can be read", YES, p.allows("file-read-data", path=docs + "/a.md")),
        ("a ro folder can be listed", YES, p.allows("file-read-data", path=docs)),
        ("a ro folder cannot be written", NO, p.allows("file-write-data", path=docs + "/a.md")),
        ("a ro folder cannot be added to", NO, p.allows("file-write-create", path=docs + "/new")),
        ("a socket in a ro folder is out of reach", NO,
         p.allows("network-outbound", remote_unix=docs + "/s.sock")),
        ("a ro folder inside the rw one is read only", NO,
         p.allows("file-write-data", path=proj + "/vendor/lib.c")),
        ("... and readable", YES, p.allows("file-read-data", path=proj + "/vendor/lib.c")),
        ("the rw folder beside it stays writable", YES, p.allows("file-write-data", path=proj + "/src/main.c")),
        ("a toolchain (~/.nvm) can be read", YES, p.allows("file-read-data", path=HOME + "/.nvm/nvm.sh")),
        ("a toolchain's program can run", YES,
         p.allows("process-exec", path=HOME + "/.nvm/versions/node/v22/bin/node")),
        ("a toolchain cannot be written", NO, p.allows("file-write-data", path=HOME + "/.nvm/nvm.sh")),
        ("~/.cargo cannot be written (cargo cannot download: a known limit)", NO,
         p.allows("file-write-create", path=HOME + "/.cargo/registry/x")),
        ("~/.gitconfig can be read", YES, p.allows("file-read-data", path=HOME + "/.gitconfig")),
        ("~/.gitconfig cannot be written", NO, p.allows("file-write-data", path=HOME + "/.gitconfig")),
        ("a name sharing ~/.gitconfig's prefix cannot be read", NO,
         p.allows("file-read-data", path=HOME + "/.gitconfig.bak")),
        ("~/.config/git can be read", YES, p.allows("file-read-data", path=HOME + "/.config/git/ignore")),
        ("~/.config cannot be listed", NO, p.allows("file-read-data", path=HOME + "/.config")),
        ("~/.config/gh beside it cannot be read", NO,
         p.allows("file-read-data", path=HOME + "/.config/gh/hosts.yml")),
        ("~/.local/share beside ~/.local/bin cannot be read", NO,
         p.allows("file-read-data", path=HOME + "/.local/share/x")),
        ("the runner can run", YES,
         p.allows("process-exec", path="/Applications/OpenWorker.app/Contents/Resources/runner/bin/run")),
        ("the guard: .git/config cannot be written", NO, p.allows("file-write-data", path=proj + "/.git/config")),
        ("the guard: no hook can be made", NO,
         p.allows("file-write-create", path=proj + "/.git/hooks/pre-commit")),
        ("the guard: .git cannot be renamed or removed", NO, p.allows("file-write-unlink", path=proj + "/.git")),
        ("the guard: .bashrc cannot be written", NO, p.allows("file-write-data", path=proj + "/.bashrc")),
        ("git can still write its objects", YES,
         p.allows("file-write-create", path=proj + "/.git/objects/ab/cdef")),
        ("git can still write its index", YES, p.allows("file-write-data", path=proj + "/.git/index")),
        ("the proxy port on localhost is reachable", YES,
         p.allows("network-outbound", remote_ip=("tcp", "localhost", PORT))),
        ("the proxy port on 127.0.0.1 is reachable", YES,
         p.allows("network-outbound", remote_ip=("tcp", "127.0.0.1", PORT))),
        ("port 443 on 1.2.3.4 is refused", NO, p.allows("network-outbound", remote_ip=("tcp", "1.2.3.4", 443))),
        ("the proxy's port on another host is refused", NO,
         p.allows("network-outbound", remote_ip=("tcp", "1.2.3.4", PORT))),
        ("another local port (another session's proxy) is refused", NO,
         p.allows("network-outbound", remote_ip=("tcp", "localhost", PORT + 1))),
        ("the person's local services (localhost:5432) are refused", NO,
         p.allows("network-outbound", remote_ip=("tcp", "localhost", 5432))),
        ("UDP to the proxy port is refused", NO,
         p.allows("network-outbound", remote_ip=("udp", "localhost", PORT))),
        ("DNS over UDP is refused", NO, p.allows("network-outbound", remote_ip=("udp", "8.8.8.8", 53))),
        ("mDNSResponder (DNS) is refused", NO,
         p.allows("network-outbound", remote_unix="/private/var/run/mDNSResponder")),
        ("no port can be bound", NO, p.allows("network-bind", local_ip=("tcp", "localhost", PORT))),
        ("TLS trust (trustd) is granted", YES, p.allows("mach-lookup", mach="com.apple.trustd.agent")),
        ("configd is refused", NO, p.allows("mach-lookup", mach="com.apple.SystemConfiguration.configd")),
    ]


def open_session(p):
    return common(p) + rw_folder(p, HOME + "/project") + [
        ("a rw file can be written", YES, p.allows("file-write-data", path=HOME + "/notes.txt")),
        ("nothing below the rw file is granted", NO,
         p.allows("file-write-create", path=HOME + "/notes.txt/x")),
        ("a name sharing the rw file's prefix cannot be written", NO,
         p.allows("file-write-create", path=HOME + "/notes.txt.bak")),
        ("a ro folder cannot be written", NO, p.allows("file-write-data", path=HOME + "/docs/a")),
        ("port 443 on 1.2.3.4 is reachable", YES,
         p.allows("network-outbound", remote_ip=("tcp", "1.2.3.4", 443))),
        ("the proxy port on localhost is reachable", YES,
         p.allows("network-outbound", remote_ip=("tcp", "localhost", PORT))),
        ("UDP out is allowed", YES, p.allows("network-outbound", remote_ip=("udp", "8.8.8.8", 53))),
        ("a port can be bound", YES, p.allows("network-bind", local_ip=("tcp", "localhost", 8080))),
        ("mDNSResponder (DNS) is reachable", YES,
         p.allows("network-outbound", remote_unix="/private/var/run/mDNSResponder")),
        ("resolv.conf can be read", YES, p.allows("file-read-data", path="/private/var/run/resolv.conf")),
        ("configd (the resolver's settings) is granted", YES,
         p.allows("mach-lookup", mach="com.apple.SystemConfiguration.configd")),
        ("TLS trust (trustd) is granted", YES, p.allows("mach-lookup", mach="com.apple.trustd.agent")),
    ]


SESSIONS = {
    "none": none_session,
    "quote": quote_session,
    "allowlist": allowlist_session,
    "open": open_session,
}

# One rule broken in a copy of a profile; the questions must catch each.
MUTANTS = [
    ("allowlist", "the default allows", "(deny default)", "(allow default)"),
    ("allowlist", "the proxy's allow turned into a deny",
     '(allow network-outbound (remote tcp "localhost:%d"))' % PORT,
     '(deny network-outbound (remote tcp "localhost:%d"))' % PORT),
    ("allowlist", "a ro folder's write deny turned into an allow",
     '(deny file-write* (subpath (param "PATH_1")))', '(allow file-write* (subpath (param "PATH_1")))'),
    ("none", "the deny marker's rule moved before the private folder's grant",
     '(deny file-read* file-test-existence (literal (param "MARKER_DENY")))\n', ""),
    ("none", "the folders above listable",
     "(allow file-read-metadata file-test-existence\n\t(literal (param \"ABOVE_0\"))",
     "(allow file-read* file-test-existence\n\t(literal (param \"ABOVE_0\"))"),
    ("none", "every pseudo-terminal readable, as before (not only those made inside)",
     '\t\t(extension "com.apple.sandbox.pty")))', '\t\t(regex #"^/dev/ttys[0-9]+$")))'),
    ("open", "subpath for a rw file",
     '(literal (param "PATH_2"))', '(subpath (param "PATH_2"))'),
]


def load(d, name, text=None):
    with open(os.path.join(d, "seatbelt_%s.params" % name), encoding="utf-8") as f:
        params = read_params(f.read())
    if text is None:
        with open(os.path.join(d, "seatbelt_%s.sb" % name), encoding="utf-8") as f:
            text = f.read()
    return Profile(text, params), text


def failures(answers):
    return [(desc, want, got) for desc, want, got in answers if want != got]


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: seatbelt_promises.py DIR")
    d = argv[1]
    out, n, failed = [], 0, 0

    def emit(good, desc):
        nonlocal n, failed
        n += 1
        failed += not good
        out.append("%s %d - %s" % ("ok" if good else "not ok", n, desc))

    texts = {}
    for name, questions in SESSIONS.items():
        try:
            p, texts[name] = load(d, name)
        except (OSError, SbplError) as e:
            emit(False, "%s: the model reads the profile (%s)" % (name, e))
            continue
        emit(True, "%s: the model reads the profile (%d rules)" % (name, len(p.rules)))
        for desc, want, got in questions(p):
            emit(want == got, "%s: %s" % (name, desc))
            if want != got:
                out.append("# the profile says %s" % ("allow" if got else "deny"))

    for name, desc, old, new in MUTANTS:
        text = texts.get(name)
        if text is None or old not in text:
            emit(False, "mutant %s: %s (the rule to break is not in the profile)" % (name, desc))
            continue
        broken = text.replace(old, new, 1)
        if not new:  # moved, not dropped: right after (deny default), where grants follow it
            broken = broken.replace("(deny default)\n", "(deny default)\n" + old, 1)
        try:
            p, _ = load(d, name, broken)
            caught = failures(SESSIONS[name](p))
        except SbplError as e:
            caught = [(str(e), None, None)]
        emit(bool(caught), "mutant %s: %s is caught (%d questions fail, first: %s)"
             % (name, desc, len(caught), caught[0][0] if caught else "none"))

    # The model refuses what it does not know, rather than guessing.
    for desc, extra in [("an unknown operation", "(allow file-read-everything)"),
                        ("an unknown filter", '(allow file-read* (vnode-type "REGULAR"))'),
                        ("a host other than * or localhost", '(allow network-outbound (remote ip "1.2.3.4:443"))'),
                        ("a parameter not given", '(allow file-read* (subpath (param "NOPE")))'),
                        ("a (with ...) modifier", '(allow file-read* (with report))'),
                        ("an invented operation", "(allow process-teleport)"),
                        ("an invented wildcard", "(allow file-everything*)"),
                        ("an invented filter", '(allow file-read* (home-anything "/x"))'),
                        ("an invented sysctl", '(allow sysctl-read (sysctl-name "kern.owstest_invented"))'),
                        ("an invented sysctl prefix", '(allow sysctl-read (sysctl-name-prefix "kern.proc."))'),
                        ("an invented Mach service",
                         '(allow mach-lookup (global-name "com.apple.owstest.invented"))')]:
        try:
            load(d, "none", (texts.get("none") or "") + extra + "\n")
            emit(False, "the model refuses %s" % desc)
        except SbplError:
            emit(True, "the model refuses %s" % desc)

    # What no Apple copy read here shows, by name: the list shrinks only knowingly.
    for kind in KINDS:
        for name in sorted(UNCONFIRMED[kind]):
            out.append("# unconfirmed by Apple's profiles read here (a Mac compiles it): %s %s"
                       % (kind, name))

    print("1..%d" % n)
    print("\n".join(out))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
