# AppArmor profile written by `owsbx apparmor-profile /opt/owstest/bin/owsbx`.
#
# Ubuntu (kernel.apparmor_restrict_unprivileged_userns = 1) gives programs it does
# not know user namespaces without capabilities, and the sandbox builds its root,
# network and PID namespaces in one.  This profile lets the one program below
# create user namespaces and confines nothing else, as Ubuntu's own profiles for
# programs that sandbox themselves do.  Commands it runs in a sandbox inherit the
# profile; the sandbox's seccomp filter refuses them namespaces of their own.
#
# Install: save as /etc/apparmor.d/owsbx; load: sudo apparmor_parser -r /etc/apparmor.d/owsbx
abi <abi/4.0>,
include <tunables/global>

profile owsbx /opt/owstest/bin/owsbx flags=(unconfined) {
  userns,

  # Site-specific additions and overrides. See local/README for details.
  include if exists <local/owsbx>
}
