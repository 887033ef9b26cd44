#!/usr/bin/env python3
"""t/term.py: drive a command on a pseudo-terminal, as a user at a terminal.

    python3 t/term.py STEP... -- COMMAND [ARG]...

COMMAND runs as the leader of a new session whose controlling terminal is
a fresh pty (24x80); this script holds the master and works through the
steps in order, echoing all output to stdout at the end (and on failure,
to stderr, with the step that failed):

    send:TEXT       write TEXT (Python escapes: \\r, \\x03 for Ctrl-C, ...)
    expect:REGEX    wait (at most 15 s) for REGEX (Python's) in the output,
                    then forget the output up to the match
    sleep:SECONDS
    size:ROWS,COLS  set the window size (the foreground group gets SIGWINCH)
    mode:raw        the terminal's modes, as its foreground process set
    mode:cooked     them: raw (no ICANON, no ECHO) or cooked (both on)
    mode:same       the modes are exactly those the terminal started with
    kill:SIGNAL     send SIGNAL to COMMAND, or to the process named by
    pidfile:PATH    this pid file (written by the command)
    wait:STATUS     wait (at most 15 s) for COMMAND to end with STATUS

Exit 0 when every step passed, 1 otherwise.
"""
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import fcntl
import time

TIMEOUT = 15.0


class Fail(Exception):
    pass


def unescape(s):
    """\\r, \\n, \\t, \\\\ and \\xHH in TEXT; everything else as is."""
    one = {"r": b"\r", "n": b"\n", "t": b"\t", "\\": b"\\"}
    return re.sub(rb"\\(x[0-9a-fA-F]{2}|[rnt\\])", lambda m:
                  one.get(m.group(1).decode()) or bytes([int(m.group(1)[1:], 16)]),
                  s.encode("utf-8"))


class Term:
    def __init__(self, argv):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvp(argv[0], argv)
        self.seen = b""     # everything, for the log
        self.buf = b""      # not yet matched
        self.status = None
        self.pidfile = None
        self.start_modes = termios.tcgetattr(self.fd)

    def pump(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        if not data:
            return False
        self.seen += data
        self.buf += data
        return True

    def reap(self):
        if self.status is None:
            pid, st = os.waitpid(self.pid, os.WNOHANG)
            if pid == self.pid:
                self.status = os.waitstatus_to_exitcode(st)
        return self.status

    def step(self, s):
        kind, _, arg = s.partition(":")
        if kind == "send":
            os.write(self.fd, unescape(arg))
        elif kind == "expect":
            rx = re.compile(arg.encode("utf-8"))
            end = time.time() + TIMEOUT
            while True:
                m = rx.search(self.buf)
                if m:
                    self.buf = self.buf[m.end():]
                    return
                if time.time() > end:
                    raise Fail("no match for %r" % arg)
                if not self.pump(0.1) and self.reap() is not None:
                    self.pump(0.2)
                    if not rx.search(self.buf):
                        raise Fail("ended (%s) before %r" % (self.status, arg))
        elif kind == "sleep":
            end = time.time() + float(arg)
            while time.time() < end:
                self.pump(max(0.0, end - time.time()))
        elif kind == "size":
            rows, cols = (int(x) for x in arg.split(","))
            fcntl.ioctl(self.fd, termios.TIOCSWINSZ,
                        struct.pack("HHHH", rows, cols, 0, 0))
        elif kind == "mode":
            self.check_mode(arg)
        elif kind == "pidfile":
            self.pidfile = arg
        elif kind == "kill":
            pid = self.pid
            if self.pidfile:
                with open(self.pidfile) as f:
                    pid = int(f.read().split()[0])
            os.kill(pid, getattr(signal, arg))
        elif kind == "wait":
            end = time.time() + TIMEOUT
            while self.reap() is None:
                if time.time() > end:
                    raise Fail("still running")
                self.pump(0.1)
            while self.pump(0.1):
                pass
            if str(self.status) != arg:
                raise Fail("exit status %s, not %s" % (self.status, arg))
        else:
            raise Fail("unknown step %r" % s)

    def check_mode(self, want):
        # pump first: the modes change as output is produced
        self.pump(0.2)
        modes = termios.tcgetattr(self.fd)
        lflag = modes[3]
        canon = bool(lflag & termios.ICANON) and bool(lflag & termios.ECHO)
        raw = not (lflag & (termios.ICANON | termios.ECHO | termios.ISIG))
        if want == "raw" and not raw:
            raise Fail("terminal not raw: lflag %#o" % lflag)
        if want == "cooked" and not canon:
            raise Fail("terminal not cooked: lflag %#o" % lflag)
        if want == "same" and modes != self.start_modes:
            raise Fail("modes changed: %r != %r" % (modes, self.start_modes))


def main():
    args = sys.argv[1:]
    if "--" not in args:
        sys.exit(__doc__)
    cut = args.index("--")
    steps, argv = args[:cut], args[cut + 1:]
    t = Term(argv)
    ok = True
    try:
        for s in steps:
            t.step(s)
    except Fail as e:
        ok = False
        sys.stderr.write("term.py: step %r: %s\n" % (s, e))
    finally:
        if t.reap() is None:
            try:
                os.kill(t.pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(t.pid, 0)
    sys.stdout.buffer.write(t.seen)
    if not ok:
        sys.stderr.buffer.write(b"--- output ---\n" + t.seen + b"\n---\n")
    sys.exit(0 if ok else 1)


main()
