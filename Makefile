.POSIX:
.SUFFIXES:
.SUFFIXES: .c .o

CC = cc
CFLAGS = -std=c99 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2
LDFLAGS = -static
LDLIBS = -lpthread
PREFIX = /usr/local
DESTDIR =

OBJ = sbx.o alloc.o util.o proc.o shim.o capture.o result.o policy.o bwrap.o \
	seccomp.o landlock.o notify.o seatbelt.o proxy.o tty.o limits.o \
	tmp.o cache.o netns.o gitcfg.o timing.o

# musl-gcc where installed and CC is not set (a small static binary), else
# cc; -static except on macOS, which has no static libc. Plain POSIX make.
all:
	@cc='$(CC)'; ldflags='$(LDFLAGS)'; \
	if [ "$$cc" = cc ] && command -v musl-gcc >/dev/null 2>&1; then \
		cc=musl-gcc; fi; \
	if [ "$$(uname -s)" = Darwin ] && [ "$$ldflags" = -static ]; then \
		ldflags=; fi; \
	$(MAKE) CC="$$cc" LDFLAGS="$$ldflags" sbx

sbx: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

$(OBJ): sbx.h

.c.o:
	$(CC) $(CFLAGS) -c $<

check: all
	./t/run

install: all
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	cp sbx $(DESTDIR)$(PREFIX)/bin/sbx
	chmod 755 $(DESTDIR)$(PREFIX)/bin/sbx
	cp man/sbx.1 $(DESTDIR)$(PREFIX)/share/man/man1/sbx.1
	chmod 644 $(DESTDIR)$(PREFIX)/share/man/man1/sbx.1

clean:
	rm -f sbx $(OBJ) fuzz/fuzz_proxy

.PHONY: all check install clean
