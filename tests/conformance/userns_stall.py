# SPDX-License-Identifier: GPL-2.0-only
"""The attacker of test_bounded.py::test_d5_subordinate_uids_are_one_owner:
a user who owns a user namespace with many uids mapped (as /etc/subuid
gives) starts one stuck caller per uid.

    userns_stall.py FILE PATH COUNT     (run as root; becomes nobody)

Maps FILE (on the attacker's never-answering FUSE mount) as nobody, then
unshare(CLONE_NEWUSER) and prints "unshared PID"; the test writes the
namespace's uid_map and gid_map and sends a line.  Then COUNT children,
child k as uid and gid k of the namespace, each execve(PATH) with its one
envp string in the mapping ("child PID K"), then "forked"; it waits for
end of file on standard input and exits.  The test kills the children.
"""
import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000
PROT_READ, MAP_SHARED = 1, 1


def say(text):
    os.write(1, (text + "\n").encode())


def main():
    path, target, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                          ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.execve.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                            ctypes.c_void_p]
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    fd = os.open(path, os.O_RDONLY)
    page = libc.mmap(None, 4096, PROT_READ, MAP_SHARED, fd, 0)
    if page in (None, ctypes.c_void_p(-1).value):
        say(f"err mmap {ctypes.get_errno()}")
        return 1
    if libc.unshare(CLONE_NEWUSER) != 0:
        say(f"err unshare {ctypes.get_errno()}")
        return 1
    say(f"unshared {os.getpid()}")
    sys.stdin.readline()         # the maps are written
    prog = os.fsencode(target)
    argv = (ctypes.c_char_p * 3)(prog, b"exe", None)
    envp = (ctypes.c_void_p * 2)(page, None)
    for k in range(1, count + 1):
        pid = os.fork()
        if pid == 0:
            try:
                os.setresgid(k, k, k)
                os.setresuid(k, k, k)
                libc.execve(prog, argv, envp)
                say(f"err execve {ctypes.get_errno()}")
            finally:
                os._exit(1)
        say(f"child {pid} {k}")
    say("forked")
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
