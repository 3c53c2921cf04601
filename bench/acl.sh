#!/bin/bash
# bench/acl.sh [RUNS]: ACL grant + revoke on 100,000 small files (1000 folders x 100),
# owsandbox against `setfacl -R`, side by side, medians of RUNS (default 3).
#
#   ours     ows_acl_grant (rw: rwX + default entries for the account and the person)
#            and the revoke at session close
#   regrant  a second session granting the same folder while the first holds it
#   setfacl  setfacl -R -m u:ACCT:rwX,d:u:ACCT:rwX,d:u:PERSON:rwX  then
#            setfacl -R -x u:ACCT,d:u:ACCT,d:u:PERSON
#
# Run as root from the repository after `make`.  The account is `nobody`; the tree, the
# state folder and the bench program live in one temp folder, removed at exit.
set -eu
RUNS=${1:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ACCT=nobody
PERSON=$(id -un)
[ -f "$ROOT/libowsandbox.a" ] || { echo "bench/acl.sh: run make first" >&2; exit 2; }
command -v setfacl >/dev/null || { echo "bench/acl.sh: setfacl is missing (apt-get install acl)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/owstest-aclbench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -std=c11 -O2 -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/lib" -o "$WORK/acl_bench" \
	"$ROOT/bench/acl_bench.c" "$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto -lpthread
mkdir -p "$WORK/state/journal"
chmod 1733 "$WORK/state/journal"
printf '[sandbox]\nstate_dir = %s/state\n' "$WORK" >"$WORK/config.ini"

TREE=$WORK/tree
echo "creating 1000 folders x 100 files under $TREE ..."
python3 - "$TREE" <<'PY'
import os, sys
root = sys.argv[1]
os.mkdir(root)
for d in range(1000):
    p = os.path.join(root, "d%04d" % d)
    os.mkdir(p)
    for f in range(100):
        fd = os.open(os.path.join(p, "f%03d" % f), os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, b"x\n")
        os.close(fd)
PY
sync

ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : int((v[NR/2]+v[NR/2+1])/2)}'; }

sf_m=() sf_x=()
for _ in $(seq "$RUNS"); do
	t=$(date +%s%N)
	setfacl -R -m "u:$ACCT:rwX,d:u:$ACCT:rwX,d:u:$PERSON:rwX" "$TREE"
	sf_m+=("$(ms "$t")")
	t=$(date +%s%N)
	setfacl -R -x "u:$ACCT,d:u:$ACCT,d:u:$PERSON" "$TREE"
	sf_x+=("$(ms "$t")")
done
# setfacl -x leaves a mask and empty default ACLs behind: start ours from a clean tree.
setfacl -R -b "$TREE"
find "$TREE" -type f -exec chmod 644 {} +
find "$TREE" -type d -exec chmod 755 {} +

out=$("$WORK/acl_bench" "$WORK/config.ini" "$ACCT" "$TREE" "$RUNS")
g=$(echo "$out" | awk '$1=="grant"{print $2}')
r=$(echo "$out" | awk '$1=="revoke"{print $2}')
x=$(echo "$out" | awk '$1=="regrant"{print $2}')
sm=$(printf '%s\n' "${sf_m[@]}" | median)
sx=$(printf '%s\n' "${sf_x[@]}" | median)

printf '\nACL grant + revoke, 100,000 files in 1000 folders, median of %s runs (ms)\n' "$RUNS"
printf '%-34s %8s %8s %8s\n' "" grant revoke total
printf '%-34s %8s %8s %8s\n' "owsandbox (raw xattr, fd walk)" "$g" "$r" "$((g + r))"
printf '%-34s %8s %8s %8s\n' "setfacl -R -m / -x" "$sm" "$sx" "$((sm + sx))"
printf '%-34s %8s\n' "owsandbox re-grant, unchanged tree" "$x"
awk -v a=$((g + r)) -v b=$((sm + sx)) 'BEGIN {printf "ratio owsandbox / setfacl: %.2f (goal: at most 0.70)\n", a / b}'
