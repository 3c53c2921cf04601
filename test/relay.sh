# shellcheck shell=bash
# test/relay.sh: a C test host's TAP lines (test/sh/run_host.c) counted as the sourcing
# test file's own, through that file's helpers (test/lib.sh: pass fail skip;
# test/account_lib.sh: ok not_ok skip).  The host's numbering and plan are its own.
#
#   relay_tap FILE PASS FAIL SKIP   each host line through PASS/FAIL/SKIP DESC; then one
#                                   more through PASS or FAIL: the host ran its whole plan
relay_tap() {
	local file=$1 pass=$2 fail=$3 skip=$4 line planned="" ran=0 desc
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP "*) "$skip" "${line#*# SKIP }"; ran=$((ran + 1)) ;;
		"ok "*) desc=${line#ok }; "$pass" "${desc#* - }"; ran=$((ran + 1)) ;;
		"not ok "*) desc=${line#not ok }; "$fail" "${desc#* - }"; ran=$((ran + 1)) ;;
		"1.."*) planned=${line#1..} ;;
		"Bail out!"*) "$fail" "the host: $line" ;;
		"#"*) printf '%s\n' "$line" ;;
		esac
	done <"$file"
	if [ -n "$planned" ] && [ "$planned" = "$ran" ]; then
		"$pass" "the host ran its whole plan ($ran)"
	else
		"$fail" "the host ran its whole plan (planned '${planned}', ran $ran)"
	fi
}
