#!/bin/sh
# Golden-file tests for what machine setup renders: the closed account's
# nftables table and the edit of the machine's config.  Needs no root.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GOLDEN=$ROOT/test/golden
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

TMP=$(mktemp -d /tmp/owstest-render-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
BIN=$TMP/machine_render
if ! cc -Iinclude -Ilib -D_GNU_SOURCE -I"$ROOT/include" -I"$ROOT/lib" -o "$BIN" \
	"$ROOT/test/helpers/machine_render.c" "$ROOT/libowsandbox.a" -ljansson -linih -lmbedtls -lmbedx509 -lmbedcrypto; then
	echo "1..0 # SKIP cannot build the render helper (run make first)"
	exit 0
fi

golden() { # desc golden-file command...
	desc=$1 file=$2
	shift 2
	if "$@" > "$TMP/out" 2> "$TMP/err" && cmp -s "$TMP/out" "$GOLDEN/$file"; then
		ok "$desc"
	else
		not_ok "$desc"
		diff -u "$GOLDEN/$file" "$TMP/out" | sed 's/^/# /'
		sed 's/^/# /' "$TMP/err"
	fi
}

golden "nft table for the closed account (uid 999)" machine_nft_owsandbox_999.nft \
	"$BIN" nft owsandbox 999
if command -v nft > /dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
	if { echo "table inet owstest_render_check {}"; echo "delete table inet owstest_render_check"; \
	     "$BIN" nft owstest_render_check 999; } | nft -c -f - 2> "$TMP/err"; then
		ok "nft -c accepts the rendered table"
	else
		not_ok "nft -c accepts the rendered table"
		sed 's/^/# /' "$TMP/err"
	fi
else
	ok "nft -c accepts the rendered table # SKIP needs root and nft"
fi
if "$BIN" nft 'bad;name' 999 > /dev/null 2>&1; then
	not_ok "an unsafe table name is refused"
else
	ok "an unsafe table name is refused"
fi
golden "config: provider replaced where it stands" machine_ini_out_replace.ini \
	"$BIN" ini-set "$GOLDEN/machine_ini_in_replace.ini" sandbox provider account
golden "config: provider line removed, the rest kept" machine_ini_out_remove.ini \
	"$BIN" ini-set "$GOLDEN/machine_ini_in_replace.ini" sandbox provider -
golden "config: [sandbox] appended when missing" machine_ini_out_nosection.ini \
	"$BIN" ini-set "$GOLDEN/machine_ini_in_nosection.ini" sandbox provider account
golden "config: key inserted under its section header" machine_ini_out_insert.ini \
	"$BIN" ini-set "$GOLDEN/machine_ini_in_insert.ini" sandbox provider account

echo "1..$n"
[ "$failed" = 0 ]
