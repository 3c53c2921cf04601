#!/bin/bash
# shellcheck disable=SC2016,SC2088 # single-quoted programs run inside; "~/" in descriptions is text
# Network. "none": socket() for anything but AF_UNIX fails with EPERM (TCP, UDP, raw, IPv6,
# MPTCP, vsock, packet, netlink; with SOCK_NONBLOCK/SOCK_CLOEXEC flags too), io_uring_setup
# fails, the sandbox has its own network namespace, and a server on the machine's 127.0.0.1
# sees no connection from curl, bash's /dev/tcp or python. "open": TCP to that server works,
# vsock and io_uring are still refused. The default is "none".
. "$(dirname "$0")/../lib.sh"
. "$OWSTEST_DIR/user.sh"
owstest_user_setup

TOKEN=owstest-tcp-$(rand_hex 4)
tcp_server "$TOKEN" || bail_out "could not start a local TCP server"
PORT=$SRV_PORT
uring_enabled=$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)

# controls, outside the sandbox, as the person
probe_out "connect_tcp 127.0.0.1 $PORT" "socket inet dgram" "socket inet6 stream" \
	"socket inet stream 262" "socket vsock stream" "uring"
like "${R[0]}" "^OK:HTTP/1.0 200 OK.*$TOKEN" "control: outside, the person reaches the local server"
is "${R[1]}" OK "control: outside, UDP sockets can be made"
is "${R[2]}" OK "control: outside, IPv6 sockets can be made"
is "${R[3]}" OK "control: outside, MPTCP sockets can be made"
is_one_of "${R[4]}" "OK EAFNOSUPPORT" "control: outside, vsock is available or not built (${R[4]})"
vsock_out=${R[4]}
if [ "$uring_enabled" = 0 ]; then
	is "${R[5]}" OK "control: outside, io_uring_setup works"
fi
# The i386 and x32 system call tables, outside: some machines of this kind have neither
# (int 0x80 faults with SIGSEGV even for getpid; x32 is off in Debian's kernels).  Where a
# table is absent, the checks that go through it inside could not fail: they skip.
probe_out "int80 20" "x32 39"
i386_absent='' x32_absent=''
case ${R[0]} in OK) ;; *) i386_absent="int 0x80 is absent here: getpid through it gets ${R[0]} outside" ;; esac
case ${R[1]} in OK) ;; *) x32_absent="the x32 ABI is absent here: getpid through it gets ${R[1]} outside" ;; esac
if [ -z "$i386_absent" ]; then
	probe_out "int80 359 2 1 0" "int80 359 2 2 0"
	is "${R[0]}" OK "control: outside, an i386 socket() through int 0x80 works (IA32 emulation is on)"
else
	skip "control: outside, an i386 socket() through int 0x80: $i386_absent"
fi
conns_before=$(tcp_conns "$PORT")
is "$conns_before" 1 "control: the server counted that one connection"

SOCKS=(
	"socket inet stream" "socket inet stream 6" "socket inet dgram" "socket inet dgram 17"
	"socket inet raw 1" "socket inet raw 255" "socket inet6 stream" "socket inet6 dgram"
	"socket inet stream 262" "socket inet6 stream 262" "socket vsock stream" "socket vsock dgram"
	"socket packet raw 768" "socket packet dgram 768" "socket netlink raw 0"
	"socket inet dgram|cloexec" "socket inet dgram|nonblock|cloexec" "socket inet stream|nonblock"
	"socket inet6 dgram|cloexec" "socket inet seqpacket 132" "socket inet stream 132"
	"socket inet dgram 136" "socket inet6 raw 58" "socket vsock stream|cloexec"
)
probe -- "${SOCKS[@]}" "uring" "socket unix stream" "socket unix dgram" \
	"connect_tcp 127.0.0.1 $PORT" "send_udp 127.0.0.1 $PORT" "connect_tcp6 ::1 $PORT"
is "$SBX_RC" 0 "the probe runs with the default network (none)" || diag "$(sbx_diag)"
n=${#SOCKS[@]}
for ((i = 0; i < n; i++)); do
	is "${R[i]}" EPERM "net none (default): ${SOCKS[i]} refused with EPERM"
done
is_one_of "${R[n]}" "EPERM ENOSYS" "net none: io_uring_setup refused (${R[n]})"
is "${R[n + 1]}" OK "control: net none: AF_UNIX stream sockets work"
is "${R[n + 2]}" EPERM "net none: AF_UNIX datagram sockets are refused: they send to any name (EPERM)"
is "${R[n + 3]}" EPERM "net none: TCP connect to the local server fails at socket() (EPERM)"
is "${R[n + 4]}" EPERM "net none: UDP send fails at socket() (EPERM)"
is "${R[n + 5]}" EPERM "net none: IPv6 connect fails at socket() (EPERM)"

# the seccomp filter cannot be sidestepped through the i386 or x32 system call tables
for net in none open; do
	probe --net "$net" -- "int80 359 2 1 0" "int80 359 2 2 0" "int80 359 10 1 0" "int80 359 40 1 0" \
		"int80 425 1 0 0" "x32 41 2 1 0" "x32 41 40 1 0"
	for ((i = 0; i < 7; i++)); do
		case $i in 0) what="i386 socket(AF_INET, STREAM)" ;; 1) what="i386 socket(AF_INET, DGRAM)" ;;
		2) what="i386 socket(AF_INET6)" ;; 3) what="i386 socket(AF_VSOCK)" ;; 4) what="i386 io_uring_setup" ;;
		5) what="x32 socket(AF_INET)" ;; 6) what="x32 socket(AF_VSOCK)" ;; esac
		if [ "$net" = open ] && { [ $i = 0 ] || [ $i = 1 ] || [ $i = 2 ] || [ $i = 5 ]; }; then
			continue # open allows these sockets anyway
		fi
		if [ $i -lt 5 ] && [ -n "$i386_absent" ]; then
			skip "net $net: $what: $i386_absent"
			continue
		elif [ $i -ge 5 ] && [ -n "$x32_absent" ]; then
			skip "net $net: $what: $x32_absent"
			continue
		fi
		is_one_of "${R[i]}" "EPERM ENOSYS SIG31 SIG9" "net $net: $what refused or killed (${R[i]})"
	done
done

# ordinary programs, end to end; the server must see nothing
sbx run --net none -- /bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT && echo connected"
isnt "$SBX_RC" 0 "net none: bash /dev/tcp fails (rc $SBX_RC)"
unlike "$SBX_OUT" connected "net none: bash /dev/tcp did not connect"
sbx run --net none -- /usr/bin/curl -sS -m 5 "http://127.0.0.1:$PORT/"
isnt "$SBX_RC" 0 "net none: curl fails (rc $SBX_RC)"
unlike "$SBX_OUT" "$TOKEN" "net none: curl got nothing from the server"
is "$(tcp_conns "$PORT")" "$conns_before" "net none: the local server saw no connection from inside"

# its own network namespace
outside_ns=$(as_user readlink /proc/self/ns/net)
sbx run --net none -- /usr/bin/readlink /proc/self/ns/net
like "$SBX_OUT" '^net:\[' "the sandbox can read its network namespace ($SBX_OUT)"
isnt "$SBX_OUT" "$outside_ns" "net none: the sandbox has its own network namespace"
probe --net none -- "unshare 0x40000000" "socket inet stream"
is "${R[1]}" EPERM "net none: no way back to inet sockets after unshare(CLONE_NEWNET) (${R[0]})"

# open
probe --net open -- "connect_tcp 127.0.0.1 $PORT" "socket vsock stream" "socket vsock dgram" "uring" \
	"socket vsock stream|cloexec" "socket unix stream"
is "$SBX_RC" 0 "the probe runs with --net open" || diag "$(sbx_diag)"
like "${R[0]}" "^OK:HTTP/1.0 200 OK.*$TOKEN" "net open: TCP to the machine's 127.0.0.1 works"
is "${R[1]}" EPERM "net open: AF_VSOCK stream refused with EPERM"
is "${R[2]}" EPERM "net open: AF_VSOCK datagram refused with EPERM"
is_one_of "${R[3]}" "EPERM ENOSYS" "net open: io_uring_setup refused (${R[3]})"
is "${R[4]}" EPERM "net open: AF_VSOCK with SOCK_CLOEXEC refused with EPERM"
is "${R[5]}" OK "control: net open: AF_UNIX works"
is "$(tcp_conns "$PORT")" $((conns_before + 1)) "net open: the server saw exactly that connection"
sbx run --net open -- /usr/bin/curl -sS -m 5 "http://127.0.0.1:$PORT/"
is "$SBX_OUT" "$TOKEN" "net open: curl reaches the local server (rc $SBX_RC)"
# the machine's config sets the default network; OWSBX_CONFIG and --config name another file
CFG=$TU_HOME/owsbx-open.ini
printf '[sandbox]\nnetwork = open\n%s\n' "$TU_OPEN_PARTIAL" >"$CFG"
chown "$TU_UID:$TU_GID" "$CFG"
AS_USER_ENV=("OWSBX_CONFIG=$CFG")
probe -- "connect_tcp 127.0.0.1 $PORT"
like "${R[0]}" "^OK:HTTP/1.0 200 OK.*$TOKEN" "OWSBX_CONFIG naming a config with network = open: TCP works"
probe --net none -- "connect_tcp 127.0.0.1 $PORT"
is "${R[0]}" EPERM "--net none on the command line wins over the config (EPERM)"
AS_USER_ENV=()
probe --config "$CFG" -- "connect_tcp 127.0.0.1 $PORT"
like "${R[0]}" "^OK:HTTP/1.0 200 OK.*$TOKEN" "--config naming a config with network = open: TCP works"
probe -- "connect_tcp 127.0.0.1 $PORT"
is "${R[0]}" EPERM "without it, the default stays none (EPERM)"

[ "$vsock_out" = EAFNOSUPPORT ] && diag "vsock is not built in this kernel: the vsock checks prove the filter only"

owstest_check_clean
done_testing
