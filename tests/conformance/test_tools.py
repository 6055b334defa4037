# SPDX-License-Identifier: GPL-2.0-only
"""docs/SPEC.md section 6: the tools people use see an ordinary symlink."""
import os

import pytest

from conftest import run

pytestmark = [pytest.mark.spec6]

PATH = {"PATH": "/usr/bin:/bin"}


def env_for(root):
    return dict(PATH, UNIVERSE=root)


def test_readlink_f_and_realpath(varsymfs, universes):
    m = varsymfs("UNIVERSE")
    for root in universes.values():
        real = os.path.realpath(root)
        for argv in (["readlink", "-f", m.link + "/bin"],
                     ["realpath", m.link + "/bin"]):
            p = run(argv, env=env_for(root), check=True)
            assert p.out == real + "/bin\n"
        p = run(["readlink", m.link], env=env_for(root), check=True)
        assert p.out == root + "\n"


def test_ls_l_shows_the_callers_target(varsymfs, universes):
    m = varsymfs("UNIVERSE")
    for name, root in universes.items():
        p = run(["ls", "-l", m.dir], env=env_for(root), check=True)
        line = [l for l in p.out.splitlines() if "resolve" in l][0]
        assert line.endswith(f"resolve -> {root}")
        size = int(line.split()[4])
        assert size in (len(root), 0)
        p = run(["ls", "-lL", m.link + "/bin"], env=env_for(root), check=True)
        assert f"only-{name}" in p.out


def test_stat_L_and_cd(varsymfs, universes):
    m = varsymfs("UNIVERSE")
    for name, root in universes.items():
        p = run(["stat", "-L", "-c", "%i", m.link], env=env_for(root),
                check=True)
        assert int(p.out) == os.stat(root).st_ino
        p = run(["/bin/sh", "-c", f"cd {m.link}/bin && pwd -P && ls"],
                env=env_for(root), check=True)
        assert p.out.splitlines()[0] == os.path.realpath(root) + "/bin"
        assert f"only-{name}" in p.out


def test_find_L(varsymfs, universes):
    m = varsymfs("UNIVERSE")
    for name, root in universes.items():
        p = run(["find", "-L", m.dir, "-name", "only-*"], env=env_for(root),
                check=True)
        assert p.out == f"{m.link}/bin/only-{name}\n"


def test_unresolvable_link_in_tools(varsymfs):
    m = varsymfs("UNIVERSE")
    p = run(["ls", m.link + "/"], env=PATH)
    assert p.returncode != 0 and "No such file or directory" in p.err
    p = run(["readlink", m.link], env=PATH)
    assert p.returncode != 0
    p = run(["ls", "-l", m.dir], env=PATH)
    assert "cannot read symbolic link" in p.err
    assert p.out.splitlines()[-1].endswith(" resolve")

