# SPDX-License-Identifier: GPL-2.0-only
"""A user with subordinate uids runs many callers, each as one of the uids
of a user namespace of theirs (as /etc/subuid and newuidmap give), for
tests/conformance/test_bounded.py.

    userns_run.py [--open FILE] UIDS PER_UID -- ARGV...
                                           (run as root; becomes nobody)

As nobody: opens FILE if given (a file of nobody's own FUSE mount, which
the namespace's uids may not open themselves), unshare(CLONE_NEWUSER) and
print "unshared PID"; the test writes the namespace's uid_map and gid_map
and sends a line.  Then, for k in 1..UIDS and j in 0..PER_UID-1, a child
as uid and gid k of the namespace execs ARGV with "{k}", "{j}", "{n}" (its
number from 0) and "{fd}" (FILE's descriptor) replaced ("child PID K");
then "forked".  It waits for end of file on
standard input and exits; the test kills the children.
"""
import os
import sys

CLONE_NEWUSER = 0x10000000


def say(text):
    os.write(1, (text + "\n").encode())


def main():
    args = sys.argv[1:]
    opened = None
    if args[0] == "--open":
        opened, args = args[1], args[2:]
    uids, per_uid = int(args[0]), int(args[1])
    argv = args[args.index("--") + 1:]
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    os.setgroups([])
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    fd = -1
    if opened:
        fd = os.open(opened, os.O_RDONLY)
        os.set_inheritable(fd, True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        say(f"err unshare {ctypes.get_errno()}")
        return 1
    say(f"unshared {os.getpid()}")
    sys.stdin.readline()         # the maps are written
    n = 0
    for k in range(1, uids + 1):
        for j in range(per_uid):
            args = [a.replace("{k}", str(k)).replace("{j}", str(j))
                    .replace("{n}", str(n)).replace("{fd}", str(fd))
                    for a in argv]
            pid = os.fork()
            if pid == 0:
                try:
                    devnull = os.open("/dev/null", os.O_RDONLY)
                    os.dup2(devnull, 0)
                    os.setresgid(k, k, k)
                    os.setresuid(k, k, k)
                    os.execv(args[0], args)
                finally:
                    os._exit(1)
            say(f"child {pid} {k}")
            n += 1
    say("forked")
    sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
