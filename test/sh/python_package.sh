#!/bin/bash
# The Python package (examples/python) under pytest, as an agent server drives it: the
# tests are test/python/*.py; this runs them as root with the landlock provider (a root
# host's commands run as nobody) over the build tree's libowsandbox.so, and passes their
# results on as TAP (test/python/conftest.py writes it). pytest's own temp folders live
# under one owstest- folder, removed at exit; no bytecode or cache is left in the checkout.
# --tb=native: Debian 12's Python 3.11.2 can die in pytest's own traceback rendering
# (SystemError: AST constructor recursion depth mismatch) and lose every later result.
. "$(dirname "$0")/../lib.sh"
[ -f "$OWSTEST_ROOT/libowsandbox.so" ] || skip_all "libowsandbox.so not built (make shared)"
"$PY" -c 'import pytest' 2>/dev/null || skip_all "no pytest for $PY (make test-deps installs python3-pytest)"
[ "$(id -u)" = 0 ] || skip_all "needs root: the tests run a root host, whose commands run as nobody"

T=$(mktemp -d /tmp/owstest-pytest.XXXXXX) || bail_out "no temp folder"
trap 'rm -rf "$T"' EXIT
OWSTEST_TAP=$T/tap OWSANDBOX_LIB=$OWSTEST_ROOT/libowsandbox.so PYTHONDONTWRITEBYTECODE=1 \
	"$PY" -m pytest -p no:cacheprovider --tb=native --basetemp "$T/tmp" -q -rs "$OWSTEST_ROOT/test/python" \
	>"$T/out" 2>&1
rc=$?
[ -s "$T/tap" ] || bail_out "pytest wrote no results (exit $rc): $(tail -n 5 "$T/out" | tr '\n' ' ')"
cat "$T/tap"
diag "pytest: $(tail -n 1 "$T/out")"
exit "$rc"
