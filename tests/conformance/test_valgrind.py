# SPDX-License-Identifier: GPL-2.0-only
"""The FUSE daemon under valgrind's memcheck, over a short workload of both
modes: no invalid access, no leak (definite or indirect), clean exit."""
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import mounted_at, run, sanitizer_of

pytestmark = [pytest.mark.spec7,
              pytest.mark.skipif(not shutil.which("valgrind"),
                                reason="valgrind is not installed")]


def daemon_under_valgrind(build, options, where, log):
    argv = ["valgrind", "--quiet", "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect",
            "--show-leak-kinds=definite,indirect", "--error-exitcode=99",
            "--suppressions=" + os.path.join(os.path.dirname(__file__),
                                             "libbpf.supp"),
            f"--log-file={log}", os.path.join(build, "varsymfs"), "-f"]
    argv += ["-o", options] if options else []
    p = subprocess.Popen(argv + ["none", where], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not mounted_at(where):
        assert p.poll() is None, p.stderr.read().decode()
        assert time.monotonic() < deadline, "no mount under valgrind"
        time.sleep(0.05)
    return p


def stop(p, where):
    if mounted_at(where):
        run(["umount", where], env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return p.wait(timeout=120)


@pytest.mark.threads
@pytest.mark.parametrize("options", ["UNIVERSE,default=/ucb", ""])
def test_no_leak_no_error(impl, build, probe, public_dir, options):
    if impl != "fuse":
        pytest.skip("the FUSE daemon")
    sanitizer = sanitizer_of(os.path.join(build, "varsymfs"))
    if sanitizer:
        pytest.skip(f"a daemon built with {sanitizer}: no valgrind")
    where = tempfile.mkdtemp(dir=public_dir)
    log = os.path.join(public_dir, "valgrind.log")
    p = daemon_under_valgrind(build, options, where, log)
    try:
        link = os.path.join(where, "resolve")
        if not options:
            for i in range(20):
                os.symlink(f"/opt/${{V{i % 3}:-d}}/{i}", os.path.join(where, f"l{i}"))
            os.rename(os.path.join(where, "l1"), os.path.join(where, "l2"))
            os.unlink(os.path.join(where, "l3"))
            link = os.path.join(where, "l0")
            os.getxattr(link, "system.varsym_template", follow_symlinks=False)
        else:
            os.getxattr(link, "system.varsym_options", follow_symlinks=False)
        for i in range(30):
            env = {"UNIVERSE": f"/u{i}", "V0": f"v{i}"}
            assert probe.readlink(link, env=env).startswith("ok ")
            assert probe("lstat", link, env=env).startswith("ok ")
        assert probe("threads", "8", link, env={"V0": "x"}).startswith("ok")
        os.listdir(where)
    finally:
        status = stop(p, where)
    report = open(log).read()
    assert status == 0, f"exit {status}:\n{report}"
    assert not re.search(r"definitely lost: [1-9]|indirectly lost: [1-9]|"
                         r"Invalid (read|write)", report), report
