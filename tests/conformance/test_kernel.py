# SPDX-License-Identifier: GPL-2.0-only
"""What only the kernel module has: module life cycle, the RCU-walk fast path,
remount.  Run inside a guest (scripts/vm-run loads the module)."""
import os

import pytest

from conftest import mounted_at, run

pytestmark = pytest.mark.usefixtures("kernel_only")
SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
STATS = "/sys/module/varsymfs/parameters/stats"


@pytest.fixture
def kernel_only(impl):
    if impl != "kernel":
        pytest.skip("kernel module only")


def module_path():
    version = os.environ.get("VARSYMFS_KERNEL") or os.uname().release
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "build", "kmod", version, "varsymfs.ko")


def stats():
    with open(STATS) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def test_rmmod_refused_while_mounted_then_unloads(varsymfs, public_dir):
    ko = module_path()
    assert os.path.exists(ko), ko
    m = varsymfs("UNIVERSE")
    p = run(["rmmod", "varsymfs"], env=SBIN)
    assert p.returncode != 0 and "in use" in p.err
    m.stop()
    try:
        run(["rmmod", "varsymfs"], env=SBIN, check=True)
        assert not os.path.exists("/sys/module/varsymfs")
    finally:
        if not os.path.exists("/sys/module/varsymfs"):
            run(["insmod", ko], env=SBIN, check=True)
    assert os.path.exists(STATS)


def test_filesystem_alias_for_autoload():
    p = run(["modinfo", "-F", "alias", module_path()], env=SBIN, check=True)
    assert "fs-varsymfs" in p.out.split()


@pytest.mark.parametrize("mode", ["seed", "template"])
def test_follows_answer_in_the_rcu_walk(varsymfs, universes, probe,
                                       public_dir, mode):
    """stat(2) through the link: at least 99 % answered without leaving
    the RCU walk while the environment is resident.

    The probe chroots into the test's tmpfs directory: the guest's root is
    9p, whose dentries leave the RCU walk on their own."""
    inside = lambda p: "/" + os.path.relpath(p, public_dir)
    if mode == "seed":
        m = varsymfs("UNIVERSE")
        link = m.link
    else:
        m = varsymfs("")
        link = os.path.join(m.dir, "u")
        os.symlink("${UNIVERSE:-/none}", link)
    path = os.path.join(inside(link), "bin", "only-att")
    env = {"UNIVERSE": inside(universes["att"]), "FILLER": "x" * 4096}
    loop = lambda n: probe("--chroot", public_dir, "stat-loop", str(n), path,
                           env=env)
    assert loop(10) == "ok 10"  # fault the environment in
    before = stats()
    assert loop(2000) == "ok 2000"
    after = stats()
    rcu = after["rcu"] - before["rcu"]
    echild = after["echild"] - before["echild"]
    assert rcu >= 0.99 * 2000, (before, after)
    assert echild <= 0.01 * 2000, (before, after)


def test_readlink_is_answered_in_ref_walk(varsymfs, probe):
    m = varsymfs("UNIVERSE")
    before = stats()
    assert probe.readlink(m.link, env={"UNIVERSE": "/att"}) == "ok /att"
    assert stats()["ref"] > before["ref"]


def test_stats_reset():
    with open(STATS, "w") as f:
        f.write("0\n")
    assert stats()["rcu"] < 100


def test_remount_keeps_options(varsymfs, probe):
    m = varsymfs("UNIVERSE,default=/ucb")
    run(["mount", "-o", "remount,ro", m.dir], env=SBIN, check=True)
    assert " ro," in mounted_at(m.dir) or " ro " in mounted_at(m.dir)
    assert probe.readlink(m.link, env={}) == "ok /ucb"
    p = run(["mount", "-o", "remount,default=/other", m.dir], env=SBIN)
    assert p.returncode != 0
    assert probe.readlink(m.link, env={}) == "ok /ucb"
