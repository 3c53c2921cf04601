# owsandbox: libowsandbox.a, the owsbx CLI, tests and benchmarks.
#
#   make              build the library and the CLI
#   make deps         install the Debian packages the build and tests need (root)
#   make check        run every test (root: the tests create throwaway users)
#   make bench        run the benchmarks, side by side with bwrap and friends
#   make install      PREFIX=/usr/local DESTDIR= : library, header, CLI, pkg-config

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
PCDIR   ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

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
DEP_LIBS = -ljansson -linih -lmbedcrypto
# owsbx links its dependencies statically: one file to install, and no
# dynamic loading on the path of every sandboxed command.
CLI_LIBS = -Wl,-Bstatic $(DEP_LIBS) -Wl,-Bdynamic

LIB_SRCS = $(sort $(wildcard lib/*.c) $(wildcard lib/$(OS)/*.c))
LIB_OBJS = $(LIB_SRCS:%.c=build/%.o)
CLI_SRCS = $(sort $(wildcard cli/*.c))
CLI_OBJS = $(CLI_SRCS:%.c=build/%.o)
UNIT_SRCS = $(sort $(wildcard test/unit/*.c))
UNIT_BINS = $(UNIT_SRCS:test/unit/%.c=build/test/%)
EXAMPLE_BINS = $(patsubst examples/%.c,build/examples/%,$(wildcard examples/*.c))

.PHONY: all deps check bench install uninstall clean shared fuzz
all: libowsandbox.a owsbx

# For hosts that load the library at run time (Python's ctypes): the same
# objects, only the public ows_* names exported.
shared: libowsandbox.so
libowsandbox.so: $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libowsandbox.so.0 -o $@ $^ $(DEP_LIBS)

build/%.o: %.c include/owsandbox.h $(wildcard lib/*.h) $(wildcard lib/$(OS)/*.h) $(wildcard cli/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

libowsandbox.a: $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

owsbx: $(CLI_OBJS) libowsandbox.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJS) libowsandbox.a $(CLI_LIBS)

build/test/%: test/unit/%.c test/unit/tap.h libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itest/unit $(ALL_CFLAGS) -o $@ $< libowsandbox.a $(DEP_LIBS)

build/examples/%: examples/%.c libowsandbox.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $< libowsandbox.a $(DEP_LIBS)

deps:
	scripts/install-deps.sh

check: all shared $(UNIT_BINS) $(EXAMPLE_BINS) build/fuzz/proxy_fuzz
	test/run.sh

# The proxy's request parser and pattern matcher under libFuzzer (clang), or
# under a plain random-mutation driver where libFuzzer is missing.  `make
# check` runs it for a few seconds (test/sh/proxy_fuzz.sh); `make fuzz` for
# FUZZ_SECONDS.
FUZZ_SECONDS ?= 300
FUZZ_SRCS = test/fuzz/proxy_fuzz.c lib/http.c lib/hostpat.c lib/sites.c lib/error.c lib/util.c
build/fuzz/proxy_fuzz: $(FUZZ_SRCS) test/fuzz/driver.c lib/proxy.h lib/internal.h
	@mkdir -p build/fuzz
	@if clang $(CPPFLAGS) -g -O1 -fsanitize=fuzzer,address,undefined -o $@ $(FUZZ_SRCS) 2>/dev/null; \
	then echo libfuzzer > $@.kind; echo "  FUZZ    $@ (libFuzzer)"; \
	else $(CC) $(CPPFLAGS) -g -O1 -fsanitize=address,undefined -o $@ $(FUZZ_SRCS) test/fuzz/driver.c && \
	     echo driver > $@.kind && echo "  FUZZ    $@ (random-mutation driver)"; fi

fuzz: build/fuzz/proxy_fuzz
	test/fuzz/run.sh $(FUZZ_SECONDS)

bench: all
	bench/run.sh
	bench/proxy.sh

# The pkg-config file is written for the PREFIX of this install, never cached.
install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(PCDIR)
	install -m 0644 libowsandbox.a $(DESTDIR)$(LIBDIR)/
	install -m 0644 include/owsandbox.h $(DESTDIR)$(INCDIR)/
	install -m 0755 owsbx $(DESTDIR)$(BINDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	    -e 's|@VERSION@|$(shell sed -n 's/^#define OWS_VERSION "\(.*\)"/\1/p' include/owsandbox.h)|' \
	    -e 's|@LIBS@|$(DEP_LIBS)|' owsandbox.pc.in > $(DESTDIR)$(PCDIR)/owsandbox.pc
	chmod 0644 $(DESTDIR)$(PCDIR)/owsandbox.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libowsandbox.a $(DESTDIR)$(INCDIR)/owsandbox.h \
	      $(DESTDIR)$(BINDIR)/owsbx $(DESTDIR)$(PCDIR)/owsandbox.pc

clean:
	rm -rf build libowsandbox.a libowsandbox.so owsbx
