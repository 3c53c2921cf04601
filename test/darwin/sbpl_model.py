"""A test-side model of Seatbelt's rule matching, for the profiles lib/darwin/profile.c renders.

It reads SBPL text (the S-expressions of sandbox-exec(1) profiles) with its
parameters, and decides an operation the way Seatbelt does: the last rule whose
operation and filters match decides; when none matches, the (deny default) or
(allow default) rule does.

It understands only what the renderer emits, and raises SbplError on anything
else (an unknown form, operation, filter, address or parameter), so that the
renderer cannot drift past it silently: a new construct must be taught here,
and so be thought about, before the promise tests pass again.

Not modelled (and so never emitted without teaching it here): (with ...)
modifiers, vnode-type, entitlement and signing filters, Scheme
beyond (param "NAME").  Paths are taken as the kernel would check them:
absolute, canonical, symbolic links already resolved.
"""

import os
import re


class SbplError(Exception):
    """A construct the model does not understand."""


class Sym(str):
    """A bare symbol: allow, file-read*, same-sandbox."""


class Str(str):
    """A string literal."""


class Regex(str):
    """A #"..." regular expression literal."""


# The names Seatbelt has, from Apple's own shipped profiles (seatbelt_names.txt says
# which and where), plus the "unconfirmed" ones the renderer uses that those copies do
# not show.  A name outside both is refused: an invented operation, filter, sysctl or
# Mach service cannot pass the model.
NAMES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seatbelt_names.txt")
KINDS = ("operation", "filter", "sysctl", "sysctl-prefix", "mach")


def read_names(path=NAMES_FILE):
    """{kind: set of names} accepted, and {kind: set} of those only unconfirmed."""
    known = {k: set() for k in KINDS}
    unconfirmed = {k: set() for k in KINDS}
    with open(path, encoding="utf-8") as f:
        for ln in f:
            words = ln.split("#", 1)[0].split()
            if not words:
                continue
            weak = words[0] == "unconfirmed"
            if weak:
                words = words[1:]
            if len(words) < 2 or words[0] not in KINDS:
                raise SbplError("seatbelt_names.txt: bad line %r" % ln)
            (unconfirmed if weak else known)[words[0]].add(words[1])
            if not weak and len(words) < 3:
                raise SbplError("seatbelt_names.txt: %s has no source" % words[1])
    accepted = {k: known[k] | unconfirmed[k] for k in KINDS}
    return accepted, unconfirmed


ACCEPTED, UNCONFIRMED = read_names()
# A wildcard (file-read*) is a name of its own; the concrete names decide questions.
OPERATIONS = {o for o in ACCEPTED["operation"] if not o.endswith("*")}
WILDCARDS = {o for o in ACCEPTED["operation"] if o.endswith("*")}


def _known(kind, name):
    if name not in ACCEPTED[kind]:
        raise SbplError("%s %s is in none of Apple's profiles the model knows "
                        "(test/darwin/seatbelt_names.txt)" % (kind, name))


_TOKEN = re.compile(r'''
    (?P<ws>\s+) | (?P<comment>;[^\n]*) | (?P<open>\() | (?P<close>\)) |
    (?P<regex>\#"(?:[^"\\]|\\.)*") | (?P<str>"(?:[^"\\]|\\.)*") |
    (?P<sym>[A-Za-z0-9_*.:/+-]+) | (?P<bad>.)
''', re.X | re.S)

_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def _unescape(body):
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            nxt = body[i + 1]
            if nxt not in _ESCAPES:
                raise SbplError("unknown string escape \\" + nxt)
            out.append(_ESCAPES[nxt])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def parse(text):
    """The profile's top-level forms, as nested lists of Sym, Str and Regex."""
    stack, top = [], []
    cur = top
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        tok = m.group()
        if kind in ("ws", "comment"):
            continue
        if kind == "bad":
            raise SbplError("unexpected character %r" % tok)
        if kind == "open":
            stack.append(cur)
            cur.append([])
            cur = cur[-1]
        elif kind == "close":
            if not stack:
                raise SbplError("unbalanced )")
            cur = stack.pop()
        elif kind == "regex":
            cur.append(Regex(_unescape(tok[2:-1])))
        elif kind == "str":
            cur.append(Str(_unescape(tok[1:-1])))
        else:
            cur.append(Sym(tok))
    if stack:
        raise SbplError("unbalanced (")
    return top


def read_params(text):
    """A .params file (test/unit/seatbelt_profile.c): NAME=VALUE a line, escaped."""
    params = {}
    for ln in text.split("\n"):
        if not ln:
            continue
        name, sep, raw = ln.partition("=")
        if not sep or not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
            raise SbplError("bad parameter line %r" % ln)
        val, i = [], 0
        while i < len(raw):
            if raw[i] != "\\":
                val.append(raw[i])
                i += 1
            elif raw[i + 1] == "\\":
                val.append("\\")
                i += 2
            elif raw[i + 1] == "n":
                val.append("\n")
                i += 2
            elif raw[i + 1] == "x":
                val.append(chr(int(raw[i + 2:i + 4], 16)))
                i += 4
            else:
                raise SbplError("bad escape in parameter %s" % name)
        if name in params:
            raise SbplError("parameter %s given twice" % name)
        params[name] = "".join(val)
    return params


def _path_within(path, base):
    """Seatbelt's subpath: the folder itself and what is below it, by component."""
    if base == "/":
        return path.startswith("/")
    return path == base or path.startswith(base + "/")


def _loopback(host):
    return host in ("localhost", "127.0.0.1", "::1")


class Profile:
    """A parsed profile with its parameters; decide() answers one operation."""

    def __init__(self, text, params):
        self.params = dict(params)
        self.used = set()
        self.default = None
        self.rules = []  # (action, [operation names], filter or None)
        forms = parse(text)
        if not forms or forms[0] != [Sym("version"), Sym("1")]:
            raise SbplError("the profile must start with (version 1)")
        for form in forms[1:]:
            self._rule(form)
        if self.default is None:
            raise SbplError("no (deny default)")
        unused = set(self.params) - self.used
        if unused:
            raise SbplError("parameters never referenced: %s" % sorted(unused))

    # -------------------------------------------------------------- compile

    def _rule(self, form):
        if not isinstance(form, list) or not form or form[0] not in ("allow", "deny"):
            raise SbplError("unknown top-level form %r" % (form,))
        action = str(form[0])
        ops, filters = [], []
        for item in form[1:]:
            if isinstance(item, Sym):
                if filters:
                    raise SbplError("operation %s after a filter" % item)
                ops.append(str(item))
            elif isinstance(item, list):
                filters.append(self._filter(item))
            else:
                raise SbplError("unexpected %r in a rule" % (item,))
        if not ops:
            raise SbplError("a rule without an operation")
        if ops == ["default"]:
            if filters:
                raise SbplError("a filtered default")
            if self.default is not None:
                raise SbplError("two default rules")
            self.default = action
            return
        names = set()
        for op in ops:
            names |= self._expand(op)
        # Several filters in one rule: any of them matches (Seatbelt's implicit require-any).
        flt = None
        if filters:
            flt = (lambda fs: lambda q: any(f(q) for f in fs))(filters)
        self.rules.append((action, names, flt))

    @staticmethod
    def _expand(op):
        if op.endswith("*"):
            if op not in WILDCARDS:
                raise SbplError("unknown operation %s (test/darwin/seatbelt_names.txt)" % op)
            stem = op[:-1]
            return {o for o in OPERATIONS if o.startswith(stem)} | {op}
        if op not in OPERATIONS:
            raise SbplError("unknown operation %s (test/darwin/seatbelt_names.txt)" % op)
        return {op}

    def _string(self, x):
        if isinstance(x, Str):
            return str(x)
        if isinstance(x, list) and len(x) == 2 and x[0] == "param" and isinstance(x[1], Str):
            name = str(x[1])
            if name not in self.params:
                raise SbplError("parameter %s not given" % name)
            self.used.add(name)
            return self.params[name]
        raise SbplError("expected a string or (param \"NAME\"), got %r" % (x,))

    def _path_filter(self, head, args, attr):
        if len(args) != 1:
            raise SbplError("(%s) takes one argument" % head)
        if head == "regex" or head == "path-regex":
            if not isinstance(args[0], Regex):
                raise SbplError("(%s) wants a #\"...\" literal" % head)
            if not re.fullmatch(r"[\^$A-Za-z0-9/_.\[\]+*-]*", args[0]):
                raise SbplError("regex %r uses syntax the model does not know" % args[0])
            rx = re.compile(args[0])
            return lambda q: attr in q and rx.search(q[attr]) is not None
        s = self._string(args[0])
        if not s.startswith("/"):
            raise SbplError("(%s %r): a path filter needs an absolute path" % (head, s))
        if head in ("literal", "path-literal"):
            return lambda q: q.get(attr) == s
        if head == "subpath":
            return lambda q: attr in q and _path_within(q[attr], s)
        if head == "prefix":
            return lambda q: attr in q and q[attr].startswith(s)
        raise SbplError("unknown path filter %s" % head)

    def _address(self, side, args):
        if len(args) != 2 or not isinstance(args[0], Sym):
            raise SbplError("(%s ...) wants a kind and an address" % side)
        kind = str(args[0])
        attr = side + "-" + ("unix" if kind == "unix-socket" else "ip")
        if kind == "unix-socket":
            inner = args[1]
            if isinstance(inner, list) and inner and isinstance(inner[0], Sym):
                _known("filter", str(inner[0]))
            if not isinstance(inner, list) or inner[0] not in ("subpath", "path-literal",
                                                                "path-regex", "literal"):
                raise SbplError("unix-socket wants subpath, path-literal or path-regex")
            return self._path_filter(str(inner[0]), inner[1:], attr)
        if kind not in ("ip", "tcp", "udp"):
            raise SbplError("unknown address kind %s" % kind)
        if not isinstance(args[1], Str):
            raise SbplError("an address must be a literal \"host:port\"")
        host, sep, port = str(args[1]).rpartition(":")
        if not sep or host not in ("*", "localhost"):
            raise SbplError("address %r: host must be * or localhost" % args[1])
        if port != "*" and not (port.isdigit() and 0 < int(port) < 65536):
            raise SbplError("address %r: bad port" % args[1])

        def match(q):
            a = q.get(attr)
            if a is None:
                return False
            proto, qhost, qport = a
            return ((kind == "ip" or kind == proto) and
                    (host == "*" or _loopback(qhost)) and
                    (port == "*" or int(port) == qport))
        return match

    def _filter(self, f):
        if not f or not isinstance(f[0], Sym):
            raise SbplError("bad filter %r" % (f,))
        head, args = str(f[0]), f[1:]
        _known("filter", head)
        if head in ("literal", "subpath", "prefix", "regex"):
            return self._path_filter(head, args, "path")
        if head in ("require-any", "require-all", "require-not"):
            subs = [self._filter(a) for a in args]
            if head == "require-any":
                return lambda q: any(s(q) for s in subs)
            if head == "require-all":
                return lambda q: all(s(q) for s in subs)
            if len(subs) != 1:
                raise SbplError("require-not takes one filter")
            return lambda q: not subs[0](q)
        if head in ("remote", "local"):
            return self._address(head, args)
        if head == "target":
            if args not in ([Sym("same-sandbox")], [Sym("self")]):
                raise SbplError("unknown target %r" % (args,))
            want = {"self"} if args[0] == "self" else {"self", "same-sandbox"}
            return lambda q: q.get("target") in want
        if head in ("global-name", "sysctl-name", "sysctl-name-prefix"):
            s = self._string(args[0]) if len(args) == 1 else None
            if s is None:
                raise SbplError("(%s) takes one string" % head)
            if head == "global-name":
                _known("mach", s)
                return lambda q: q.get("mach") == s
            if head == "sysctl-name":
                _known("sysctl", s)
                return lambda q: q.get("sysctl") == s
            _known("sysctl-prefix", s)
            return lambda q: "sysctl" in q and q["sysctl"].startswith(s)
        if head == "extension":
            if len(args) != 1 or not isinstance(args[0], Str):
                raise SbplError("(extension) takes one string")
            ext = str(args[0])
            return lambda q: q.get("extension") == ext
        if head == "socket-domain":
            if args not in ([Sym("AF_UNIX")], [Sym("AF_INET")], [Sym("AF_INET6")]):
                raise SbplError("unknown socket domain %r" % (args,))
            d = str(args[0])
            return lambda q: q.get("domain") == d
        raise SbplError("unknown filter %s" % head)

    # --------------------------------------------------------------- decide

    def decide(self, op, **q):
        """'allow' or 'deny' for one operation: the last matching rule, else the default.

        q holds what the operation is about: path=..., extension=NAME (a sandbox
        extension the object carries), remote_ip=("tcp", host, port),
        remote_unix=path, local_unix=path, local_ip=(...), mach=name, sysctl=name,
        target="self"|"same-sandbox"|"other", domain="AF_UNIX".
        """
        if op not in OPERATIONS:
            raise SbplError("the question names an unknown operation %s" % op)
        query = {k.replace("_", "-"): v for k, v in q.items()}
        verdict = self.default
        for action, names, flt in self.rules:
            if op in names and (flt is None or flt(query)):
                verdict = action
        return verdict

    def allows(self, op, **q):
        return self.decide(op, **q) == "allow"
