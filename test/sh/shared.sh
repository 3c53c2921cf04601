#!/bin/bash
# libowsandbox.so (make shared): its soname is the one the Makefile derives from the header's
# version (libowsandbox.so.0.MINOR before 1.0, .MAJOR after); it exports the functions the
# header declares OWS_API and nothing else (nm -D); every one of them is there, so that a
# host linked against the header finds what it calls; and it loads and runs from a host that
# knows only the header (ctypes does the same).
. "$(dirname "$0")/../lib.sh"

SO=$OWSTEST_ROOT/libowsandbox.so
H=$OWSTEST_ROOT/include/owsandbox.h
[ -f "$SO" ] || skip_all "libowsandbox.so not built (make shared)"
command -v nm >/dev/null || skip_all "no nm (binutils)"
W=$(mktemp -d /tmp/owstest-shared.XXXXXX)
trap 'rm -rf "$W"' EXIT

hv() { sed -n "s/^#define OWS_VERSION_$1 \([0-9]*\)$/\1/p" "$H"; }
if [ "$(hv MAJOR)" = 0 ]; then want_soname=libowsandbox.so.0.$(hv MINOR); else want_soname=libowsandbox.so.$(hv MAJOR); fi
soname=$(readelf -d "$SO" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
is "$soname" "$want_soname" "the soname follows the header's version ($want_soname)"

# What the header declares: every OWS_API function, by name.
sed -n 's/^OWS_API [^(]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' "$H" | sort -u >"$W/declared"
n=$(wc -l <"$W/declared")
ok "the header declares OWS_API functions ($n)" test "$n" -ge 60
nm -D --defined-only "$SO" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -vE '^(_init|_fini|_edata|_end|__bss_start)$' |
	sort -u >"$W/exported"
ok "nm -D lists what the library exports ($(wc -l <"$W/exported"))" test -s "$W/exported"
extra=$(comm -13 "$W/declared" "$W/exported" | tr '\n' ' ')
is "$extra" "" "it exports nothing the header does not declare (no ows__ internals, no dependency's symbols)"
missing=$(comm -23 "$W/declared" "$W/exported" | tr '\n' ' ')
is "$missing" "" "and every function the header declares is there"
# control: the comparison sees an internal name when one is exported
printf 'ows__fail\n' | sort -u - "$W/exported" >"$W/exported+"
isnt "$(comm -13 "$W/declared" "$W/exported+")" "" "control: an exported internal would be seen"
undef=$(nm -D --undefined-only "$SO" | awk '{print $2}' | grep -E '^ows_' | tr '\n' ' ')
is "$undef" "" "it leaves no ows_ name undefined"

# A host that knows only the header, linked against the .so and run with it.
cat >"$W/host.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <owsandbox.h>
int main(void)
{
	char *report = NULL;
	ows_error err;
	ows_error_clear(&err);
	if (ows_report_json(NULL, &report, &err) < 0)
		return 1;
	printf("%s %d\n", ows_version(), strstr(report, "\"capabilities\"") != NULL);
	ows_free(report);
	return 0;
}
C
ln -s "$SO" "$W/$soname"
ok "a host builds against the shared library" cc -I"$OWSTEST_ROOT/include" -o "$W/host" "$W/host.c" -L"$OWSTEST_ROOT" -lowsandbox
needed=$(readelf -d "$W/host" | sed -n 's/.*(NEEDED).*\[\(libowsandbox[^]]*\)\]/\1/p')
is "$needed" "$soname" "it needs the library by its soname"
is "$(LD_LIBRARY_PATH=$W "$W/host" 2>&1)" "$(hv MAJOR).$(hv MINOR).$(hv PATCH) 1" "and runs with it: the version, a report"
done_testing
