#!/usr/bin/env python3
"""t/race.py SBX BACKEND MODE SECONDS: a folder swapped while sbx starts.

In a fresh folder: ws/sub (a folder), ws/link (a symbolic link to
../victim) and victim. A racer process exchanges ws/sub and ws/link with
renameat2(RENAME_EXCHANGE) in a loop, as a command running in the same
workspace could, while sbx runs again and again for SECONDS:

  write  sbx -C ws -w ws/sub -- append to sub/f
  scope  (in ws) sbx --scope sub -- append to sub/f
  deny   (in ws) sbx --deny-write sub -- append to sub/f and link/f
  parent (in ws) sbx --deny-write sub/in -- append to sub/in/f and
         link/in/f: the denied path's folder is the one swapped

A hit is a write that lands outside what sbx was asked to grant: in
victim (write, scope), or in the folder denied (deny: found by its
descriptor, under whichever name it has). Prints one line: runs=N
hits=H ran=R (the command started) refused=F (exit 125: a link refused,
a path changed while sbx started, or the shim's mount check failed)

With RACE_NO_OPENAT2=1 in the environment, sbx runs under a seccomp
filter of the test's own that answers openat2(2) with ENOSYS, as a kernel
before 5.6 does: sbx's one-call path check then falls back to its walk,
component by component, which must hold the same.
"""
import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time

RENAME_EXCHANGE = 2


def racer(ws, name):
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = os.path.join(ws, name).encode(), os.path.join(ws, "link").encode()
    at = -100  # AT_FDCWD
    while True:
        libc.renameat2(at, a, at, b, RENAME_EXCHANGE)


def no_openat2():
    """In the child before exec: openat2 (437 on x86_64 and aarch64)
    answers ENOSYS; every other call is let through."""
    libc = ctypes.CDLL(None, use_errno=True)
    insns = [(0x20, 0, 0, 0),             # A = nr
             (0x15, 0, 1, 437),           # nr == openat2 ?
             (0x06, 0, 0, 0x50000 | 38),  # ERRNO | ENOSYS
             (0x06, 0, 0, 0x7fff0000)]    # ALLOW

    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8),
                    ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort),
                    ("filter", ctypes.POINTER(Insn))]

    arr = (Insn * len(insns))(*[Insn(*i) for i in insns])
    prog = Prog(len(insns), arr)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or \
            libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:
        os._exit(99)


def main():
    sbx, backend, mode, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    top = tempfile.mkdtemp(prefix="race.", dir=os.environ.get("RACE_DIR"))
    top = os.path.realpath(top)
    ws, victim = os.path.join(top, "ws"), os.path.join(top, "victim")
    os.mkdir(ws)
    os.mkdir(os.path.join(ws, "sub"))
    os.mkdir(victim)
    os.symlink("../victim", os.path.join(ws, "link"))
    os.makedirs(os.path.join(ws, "sub", "in"))
    os.makedirs(os.path.join(victim, "in"))
    denied = os.open(os.path.join(ws, "sub"), os.O_RDONLY | os.O_DIRECTORY)
    if mode == "parent":
        denied = os.open(os.path.join(ws, "sub", "in"),
                         os.O_RDONLY | os.O_DIRECTORY)
    base = [sbx, "--backend", backend, "-t", "10s"]
    if mode == "write":
        cmd, cwd = base + ["-C", ws, "-w", "ws/sub", "--", "sh", "-c",
                           "echo x >> sub/f"], top
    elif mode == "scope":
        cmd, cwd = base + ["--scope", "sub", "--", "sh", "-c",
                           "echo x >> sub/f"], ws
    elif mode == "parent":
        cmd, cwd = base + ["--deny-write", "sub/in", "--", "sh", "-c",
                           "echo x >> sub/in/f; echo x >> link/in/f"], ws
    else:
        cmd, cwd = base + ["--deny-write", "sub", "--", "sh", "-c",
                           "echo x >> sub/f; echo x >> link/f"], ws
    pid = os.fork()
    if pid == 0:
        try:
            racer(ws, "sub")
        finally:
            os._exit(0)
    runs = hits = ran = refused = 0
    end = time.monotonic() + secs
    try:
        while time.monotonic() < end:
            r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True,
                               preexec_fn=no_openat2 if os.environ.get(
                                   "RACE_NO_OPENAT2") else None)
            runs += 1
            if r.returncode != 125:
                ran += 1
            if r.returncode == 125:
                refused += 1
            if mode in ("deny", "parent"):
                try:
                    os.stat("f", dir_fd=denied)
                    hits += 1
                    os.unlink("f", dir_fd=denied)
                except FileNotFoundError:
                    pass
            elif os.path.exists(os.path.join(victim, "f")):
                hits += 1
                os.unlink(os.path.join(victim, "f"))
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    print("runs=%d hits=%d ran=%d refused=%d" % (runs, hits, ran, refused))


if __name__ == "__main__":
    main()
