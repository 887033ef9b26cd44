.POSIX:
.SUFFIXES:
.SUFFIXES: .c .o

# musl-gcc where installed (a small static binary), else the system cc.
CC != command -v musl-gcc >/dev/null 2>&1 && echo musl-gcc || echo cc
CFLAGS = -std=c99 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2
LDFLAGS = -static
LDLIBS = -lpthread
PREFIX = /usr/local
DESTDIR =

OBJ = sbx.o util.o proc.o shim.o capture.o result.o policy.o bwrap.o \
	seccomp.o landlock.o seatbelt.o proxy.o

all: sbx

sbx: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $(OBJ) $(LDLIBS)

$(OBJ): sbx.h

.c.o:
	$(CC) $(CFLAGS) -c $<

check: sbx
	./t/run

install: sbx
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	cp sbx $(DESTDIR)$(PREFIX)/bin/sbx
	chmod 755 $(DESTDIR)$(PREFIX)/bin/sbx
	cp man/sbx.1 $(DESTDIR)$(PREFIX)/share/man/man1/sbx.1
	chmod 644 $(DESTDIR)$(PREFIX)/share/man/man1/sbx.1

clean:
	rm -f sbx $(OBJ) fuzz/fuzz_proxy

.PHONY: all check install clean
