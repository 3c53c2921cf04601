#!/usr/bin/env python3
"""Checks an OpenShell sandbox policy and `openshell sandbox create` arguments rendered by
lib/openshell/policy.c against our reading of OpenShell's schema, and against the promises
of the session they were rendered from.

    validate_policy.py POLICY.yaml ARGS EXPECT.json     exit 0: valid; 1: the reasons, one a line

ARGS holds one argument a line, escaped ("\\\\", "\\n", "\\xHH"); EXPECT.json is the session
(folders with "ro"/"rw", uid, gid, profile, extra hosts, runner, name, image, policy file).

What it encodes, and from where (NVIDIA/OpenShell at 2f7fb65591ee5746217ace154afc0aa6bf1afc6d;
test/openshell/README.md says the same):
  crates/openshell-policy/src/lib.rs   the serde types PolicyFile, FilesystemDef, LandlockDef,
                                       ProcessDef, NetworkPolicyRuleDef, NetworkEndpointDef,
                                       NetworkBinaryDef (all deny_unknown_fields), and
                                       validate_sandbox_policy, is_valid_sandbox_identity,
                                       host_wildcard_shape_invalid, MAX_FILESYSTEM_PATHS,
                                       MAX_PATH_LENGTH
  docs/reference/policy-schema.mdx     the enums (landlock.compatibility, endpoint protocol,
                                       tls, enforcement, access)
  crates/openshell-cli/src/main.rs     SandboxCommands::Create's flags
  crates/openshell-driver-docker/src/lib.rs, crates/openshell-core/src/driver_mounts.rs,
  crates/openshell-driver-docker/README.md
                                       the --driver-config-json docker block and its mounts
"""
import json
import posixpath
import re
import sys

try:
    import yaml
except ImportError:  # scripts/install-deps.sh installs python3-yaml
    yaml = None

# ---------------------------------------------------------------- the schema, as read

U16, U32 = (0, 65535), (0, 4294967295)
# key: (type, enum or range or sub-schema).  "str", "int", "bool", "list:T", "map:T", "obj".
POLICY_FILE = {
    "version": ("int", None),
    "filesystem_policy": ("obj", "FilesystemDef"),
    "landlock": ("obj", "LandlockDef"),
    "process": ("obj", "ProcessDef"),
    "network_policies": ("map", "NetworkPolicyRuleDef"),
    "network_middlewares": ("map", None),  # not emitted by us: its content is not encoded
}
SCHEMA = {
    "FilesystemDef": {
        "include_workdir": ("bool", None),
        "read_only": ("list", "str"),
        "read_write": ("list", "str"),
    },
    "LandlockDef": {"compatibility": ("str", {"best_effort", "hard_requirement"})},
    "ProcessDef": {"run_as_user": ("str", None), "run_as_group": ("str", None)},
    "NetworkPolicyRuleDef": {
        "name": ("str", None),
        "endpoints": ("list", "NetworkEndpointDef"),
        "binaries": ("list", "NetworkBinaryDef"),
    },
    "NetworkEndpointDef": {
        "host": ("str", None),
        "path": ("str", None),
        "port": ("int", U16),
        "ports": ("list", "u16"),
        "protocol": ("str", {"rest", "websocket", "graphql", "mcp", "json-rpc", "tcp", "sql"}),
        "tls": ("str", {"skip", "terminate", "passthrough"}),
        "enforcement": ("str", {"enforce", "audit"}),
        "access": ("str", {"read-only", "read-write", "full"}),
        "rules": ("list", None),
        "allowed_ips": ("list", "str"),
        "deny_rules": ("list", None),
        "allow_encoded_slash": ("bool", None),
        "websocket_credential_rewrite": ("bool", None),
        "request_body_credential_rewrite": ("bool", None),
        "allow_uninspected_credentials": ("bool", None),
        "persisted_queries": ("str", None),
        "graphql_persisted_queries": ("map", None),
        "graphql_max_body_bytes": ("int", U32),
        "credential_signing": ("str", None),
        "signing_service": ("str", None),
        "signing_region": ("str", None),
        "credential_binding": ("obj", None),
        "json_rpc": ("obj", None),
        "mcp": ("obj", None),
    },
    "NetworkBinaryDef": {"path": ("str", None), "harness": ("bool", None)},
}
REQUIRED = {"PolicyFile": {"version"}, "NetworkBinaryDef": {"path"}}
MAX_FILESYSTEM_PATHS, MAX_PATH_LENGTH = 256, 4096

# The flags of `openshell sandbox create` (crates/openshell-cli/src/main.rs), with a value or not.
CREATE_FLAGS = {
    "--name": True, "--from": True, "--upload": True, "--no-git-ignore": False,
    "--keep": False, "--no-keep": False, "--editor": True, "--gpu": True, "--cpu": True,
    "--memory": True, "--driver-config-json": True, "--provider": True, "--policy": True,
    "--forward": True, "--tty": False, "--no-tty": False, "--detach": False,
    "--auto-providers": False, "--no-auto-providers": False, "--label": True, "--env": True,
    "--no-credential-warnings": False, "--approval-mode": True, "--output": True,
}
# The Docker driver's mount entries (DockerDriverMountConfig, tag "type", deny_unknown_fields).
BIND_MOUNT = {"type": str, "source": str, "target": str, "read_only": bool,
              "selinux_label": str}
RESERVED_ROOTS = ["/opt/openshell", "/etc/openshell", "/etc/openshell-tls", "/run/openshell",
                  "/run/openshell-sidecar"]
WORKSPACE_ROOT = "/sandbox"

# ---------------------------------------------------------------- the promises, our own copy

# The image's own paths the policy may list besides the session's (never mounted).
IMAGE_READ_ONLY = {"/usr", "/lib", "/proc", "/dev/urandom", "/etc"}
IMAGE_READ_WRITE = {"/tmp", "/dev/null"}
STRICT = {
    # GitHub
    "github.com:443", "api.github.com:443", "codeload.github.com:443",
    "uploads.github.com:443", "objects.githubusercontent.com:443",
    "raw.githubusercontent.com:443",
    # GitLab
    "gitlab.com:443", "registry.gitlab.com:443",
    # PyPI: index and files
    "pypi.org:443", "files.pythonhosted.org:443",
    # npm
    "registry.npmjs.org:443",
    # crates.io: API, sparse index, crates
    "crates.io:443", "index.crates.io:443", "static.crates.io:443",
    # the Go module proxy and checksum database
    "proxy.golang.org:443", "sum.golang.org:443",
}
SEARCH = {
    "api.search.brave.com:443",  # Brave
    "api.tavily.com:443",        # Tavily
    "duckduckgo.com:443", "html.duckduckgo.com:443", "lite.duckduckgo.com:443",
    "api.duckduckgo.com:443",    # DuckDuckGo
}


class Invalid(Exception):
    pass


def check_obj(value, schema_name, where, errors):
    schema = POLICY_FILE if schema_name == "PolicyFile" else SCHEMA[schema_name]
    if not isinstance(value, dict):
        errors.append(f"{where}: an object is wanted")
        return
    for key in REQUIRED.get(schema_name, ()):
        if key not in value:
            errors.append(f"{where}: {key} is required")
    for key, v in value.items():
        if key not in schema:
            errors.append(f"{where}: unknown key {key!r} ({schema_name} denies unknown fields)")
            continue
        check_value(v, schema[key], f"{where}.{key}", errors)


def check_value(v, spec, where, errors):
    kind, arg = spec
    if kind == "int":
        if not isinstance(v, int) or isinstance(v, bool):
            errors.append(f"{where}: an integer is wanted, not {v!r}")
        elif arg and not arg[0] <= v <= arg[1]:
            errors.append(f"{where}: {v} is out of range")
    elif kind == "bool":
        if not isinstance(v, bool):
            errors.append(f"{where}: a boolean is wanted, not {v!r}")
    elif kind == "str":
        if not isinstance(v, str):
            errors.append(f"{where}: a string is wanted, not {v!r}")
        elif isinstance(arg, set) and v and v not in arg:
            errors.append(f"{where}: {v!r} is not one of {sorted(arg)}")
    elif kind == "list":
        if not isinstance(v, list):
            errors.append(f"{where}: a list is wanted")
            return
        for i, item in enumerate(v):
            if arg == "str":
                check_value(item, ("str", None), f"{where}[{i}]", errors)
            elif arg == "u16":
                check_value(item, ("int", U16), f"{where}[{i}]", errors)
            elif arg:
                check_obj(item, arg, f"{where}[{i}]", errors)
    elif kind == "map":
        if not isinstance(v, dict):
            errors.append(f"{where}: a map is wanted")
            return
        for k, item in v.items():
            if not isinstance(k, str):
                errors.append(f"{where}: key {k!r} is not a string")
            if arg:
                check_obj(item, arg, f"{where}.{k}", errors)
    elif kind == "obj":
        if arg:
            check_obj(v, arg, where, errors)
        elif not isinstance(v, dict):
            errors.append(f"{where}: an object is wanted")


def identity_valid(value):
    """is_valid_sandbox_identity: "sandbox" or 1..4294967294."""
    return value == "sandbox" or (value.isdigit() and 1 <= int(value) <= 4294967294)


def host_wildcard_shape_invalid(host):
    if host in ("*", "**"):
        return True
    if "*" not in host:
        return False
    labels = host.split(".")
    if "**" in labels[0] and labels[0] != "**":
        return True
    return any("**" in l or ("*" in l and l != "*") for l in labels[1:])


def check_rules(policy, errors):
    """validate_sandbox_policy's checks on what we emit."""
    if policy.get("version") != 1:
        errors.append("version must be 1")
    proc = policy.get("process") or {}
    for key in ("run_as_user", "run_as_group"):
        if isinstance(proc.get(key), str) and proc[key] and not identity_valid(proc[key]):
            errors.append(f"process.{key}: {proc[key]!r} is not 'sandbox' or 1..4294967294")
    fs = policy.get("filesystem_policy") or {}
    ro, rw = fs.get("read_only") or [], fs.get("read_write") or []
    if len(ro) + len(rw) > MAX_FILESYSTEM_PATHS:
        errors.append("more than 256 filesystem paths")
    for p in ro + rw:
        if not isinstance(p, str):
            continue
        if len(p.encode()) > MAX_PATH_LENGTH:
            errors.append(f"path longer than 4096: {p[:40]!r}")
        if not p.startswith("/"):
            errors.append(f"relative path {p!r}")
        if ".." in p.split("/"):
            errors.append(f"path traversal in {p!r}")
    for p in rw:
        if isinstance(p, str) and not p.rstrip("/"):
            errors.append(f"read_write {p!r} is overly broad")
    for key, rule in (policy.get("network_policies") or {}).items():
        for ep in (rule or {}).get("endpoints") or []:
            host = ep.get("host", "")
            if not str(host).strip() and not ep.get("allowed_ips"):
                errors.append(f"{key}: endpoint without host")
            ports = ep.get("ports") or ([ep["port"]] if ep.get("port") else [])
            if not ports:
                errors.append(f"{key}: endpoint {host!r} without a port")
            if isinstance(host, str) and "*" in host and (
                    host.startswith("*.") or host.startswith("**.")) and host.count(".") < 2:
                errors.append(f"{key}: top-level-domain wildcard {host!r}")
            if isinstance(host, str) and host_wildcard_shape_invalid(host):
                errors.append(f"{key}: invalid host wildcard {host!r}")
        if not (rule or {}).get("endpoints"):
            errors.append(f"{key}: no endpoints")
        if not (rule or {}).get("binaries"):
            errors.append(f"{key}: no binaries")


# ---------------------------------------------------------------- the arguments

def unescape(line):
    out, i = [], 0
    while i < len(line):
        c = line[i]
        if c == "\\" and line[i + 1:i + 2] == "\\":
            out.append("\\"); i += 2
        elif c == "\\" and line[i + 1:i + 2] == "n":
            out.append("\n"); i += 2
        elif c == "\\" and line[i + 1:i + 2] == "x":
            out.append(chr(int(line[i + 2:i + 4], 16))); i += 4
        else:
            out.append(c); i += 1
    return "".join(out)


def parse_args(args, errors):
    """`sandbox create` FLAGS -- COMMAND...: the flags as a list of (flag, value)."""
    if args[:2] != ["sandbox", "create"]:
        errors.append("the arguments do not start with `sandbox create`")
        return [], []
    flags, i = [], 2
    while i < len(args) and args[i] != "--":
        flag = args[i]
        if flag not in CREATE_FLAGS:
            errors.append(f"unknown sandbox create flag {flag!r}")
            i += 1
            continue
        if CREATE_FLAGS[flag]:
            if i + 1 >= len(args):
                errors.append(f"{flag} has no value")
                break
            flags.append((flag, args[i + 1]))
            i += 2
        else:
            flags.append((flag, None))
            i += 1
    command = args[i + 1:] if i < len(args) else []
    if not command:
        errors.append("no main command after --")
    return flags, command


def within(inner, outer):
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def check_mounts(config_json, errors):
    try:
        config = json.loads(config_json)
    except ValueError as e:
        errors.append(f"--driver-config-json is not JSON: {e}")
        return []
    if not isinstance(config, dict) or set(config) != {"docker"}:
        errors.append("--driver-config-json holds more than the docker block")
        return []
    docker = config["docker"]
    if not isinstance(docker, dict) or set(docker) - {"cdi_devices", "mounts"}:
        errors.append("unknown key in the docker driver config (deny_unknown_fields)")
        return []
    mounts = []
    for m in docker.get("mounts", []):
        if not isinstance(m, dict) or m.get("type") != "bind":
            errors.append(f"a mount other than a bind mount: {m!r}")
            continue
        for k, v in m.items():
            if k not in BIND_MOUNT:
                errors.append(f"unknown bind mount key {k!r}")
            elif not isinstance(v, BIND_MOUNT[k]):
                errors.append(f"bind mount {k} is not a {BIND_MOUNT[k].__name__}")
        src, dst = m.get("source"), m.get("target")
        if not isinstance(src, str) or not isinstance(dst, str):
            errors.append("a bind mount without source or target")
            continue
        if not src.startswith("/") or src != src.strip() or "\0" in src:
            errors.append(f"bind source {src!r} is not an absolute path without blanks")
        if not dst.startswith("/") or dst != dst.strip() or any(ord(c) < 32 or c == "\x7f"
                                                                 for c in dst):
            errors.append(f"bind target {dst!r} is not absolute or has a control character")
        if ":" in src or ":" in dst:
            errors.append(f"a ':' in {src!r} would split Docker's SRC:DST:ro")
        for root in RESERVED_ROOTS:
            if within(dst, root) or within(root, dst):
                errors.append(f"bind target {dst!r} overlaps OpenShell's {root}")
        if within(WORKSPACE_ROOT, dst):
            errors.append(f"bind target {dst!r} replaces or contains {WORKSPACE_ROOT}")
        mounts.append((src, dst, m.get("read_only", True)))  # read_only defaults to true
    return mounts


# ---------------------------------------------------------------- the promises

def host_set(policy):
    hosts = set()
    for rule in (policy.get("network_policies") or {}).values():
        for ep in rule.get("endpoints") or []:
            for port in ep.get("ports") or [ep.get("port")]:
                hosts.add(f"{ep.get('host')}:{port}")
    return hosts


def check_promises(policy, flags, command, mounts, want, errors):
    folders = {p: a for p, a in want["folders"]}
    runner, target = want["runner"], want["runner_target"]
    runner_dir = posixpath.dirname(target)
    # Only the session's folders are mounted, at their own paths, and the runner file alone,
    # read only, at a path of its own: a folder of the image it hid would be gone inside.
    want_mounts = {(p, p, a == "ro") for p, a in folders.items()} | {(runner, target, True)}
    for p in folders:
        if within(p, runner_dir) or within(runner_dir, p):
            errors.append(f"folder {p!r} overlaps the runner's {runner_dir!r}")
    for hidden in IMAGE_READ_ONLY | {"/usr/local/bin", "/bin", "/sbin", "/usr/bin"}:
        if within(hidden, runner_dir):
            errors.append(f"the runner's folder {runner_dir!r} hides the image's {hidden!r}")
    if set(mounts) != want_mounts or len(mounts) != len(want_mounts):
        errors.append(f"the mounts are {sorted(mounts)}, not {sorted(want_mounts)}")
    fs = policy.get("filesystem_policy") or {}
    if fs.get("include_workdir", False):
        errors.append("include_workdir adds a folder the session did not share")
    ro, rw = set(fs.get("read_only") or []), set(fs.get("read_write") or [])
    want_rw = {p for p, a in folders.items() if a == "rw"}
    want_ro = {p for p, a in folders.items() if a == "ro"} | {runner_dir}
    if rw - IMAGE_READ_WRITE != want_rw:
        errors.append(f"read_write beyond the image's is {sorted(rw - IMAGE_READ_WRITE)}, "
                      f"not {sorted(want_rw)}")
    if ro - IMAGE_READ_ONLY != want_ro:
        errors.append(f"read_only beyond the image's is {sorted(ro - IMAGE_READ_ONLY)}, "
                      f"not {sorted(want_ro)}")
    if (policy.get("landlock") or {}).get("compatibility") != "hard_requirement":
        errors.append("Landlock is not a hard requirement")
    proc = policy.get("process") or {}
    if proc.get("run_as_user") != str(want["uid"]) or proc.get("run_as_group") != str(want["gid"]):
        errors.append(f"the process runs as {proc.get('run_as_user')}:{proc.get('run_as_group')}, "
                      f"not {want['uid']}:{want['gid']}")
    extra = {h if re.search(r":\d+$", h) else h + ":443" for h in want["hosts"]}
    want_hosts = STRICT | (SEARCH if want["profile"] == "standard" else set()) | extra
    if want["profile"] == "none":
        # network none: not one endpoint, so that OpenShell's proxy allows nothing
        want_hosts = set()
        if policy.get("network_policies"):
            errors.append("network none has network_policies")
    got = host_set(policy)
    if got != want_hosts:
        errors.append(f"hosts: more {sorted(got - want_hosts)}, missing {sorted(want_hosts - got)}")
    for key, rule in (policy.get("network_policies") or {}).items():
        for ep in rule.get("endpoints") or []:
            if set(ep) - {"host", "port"}:
                errors.append(f"{key}: endpoint {ep.get('host')!r} has {sorted(set(ep) - {'host', 'port'})}")
    # No OpenShell credential provider, none created from the host's credentials.
    names = [f for f, _ in flags]
    if "--provider" in names:
        errors.append("a credential provider is attached (--provider)")
    if "--no-auto-providers" not in names or "--auto-providers" in names:
        errors.append("providers may be created from local credentials (no --no-auto-providers)")
    for flag, value in (("--name", want["name"]), ("--from", want["image"]),
                        ("--policy", want["policy_path"])):
        got_v = [v for f, v in flags if f == flag]
        if got_v != [value]:
            errors.append(f"{flag} is {got_v}, not [{value!r}]")
    if [f for f in names if f == "--driver-config-json"] != ["--driver-config-json"]:
        errors.append("not exactly one --driver-config-json")
    if command != [target, "runner"]:
        errors.append(f"the main command is {command}, not the runner {[target, 'runner']!r}")


def validate(policy_text, args, want):
    errors = []
    if yaml is None:
        raise Invalid("PyYAML is missing: install python3-yaml (scripts/install-deps.sh --test)")
    try:
        policy = yaml.safe_load(policy_text)
    except yaml.YAMLError as e:
        return [f"not YAML: {e}"]
    check_obj(policy, "PolicyFile", "policy", errors)
    if errors:
        return errors
    check_rules(policy, errors)
    flags, command = parse_args(args, errors)
    configs = [v for f, v in flags if f == "--driver-config-json"]
    mounts = check_mounts(configs[0], errors) if configs else []
    check_promises(policy, flags, command, mounts, want, errors)
    return errors


def main(argv):
    if len(argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        policy_text = f.read()
    with open(argv[2], encoding="utf-8") as f:
        args = [unescape(l) for l in f.read().split("\n")[:-1]]
    with open(argv[3], encoding="utf-8") as f:
        want = json.load(f)
    try:
        errors = validate(policy_text, args, want)
    except Invalid as e:
        print(e, file=sys.stderr)
        return 2
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
