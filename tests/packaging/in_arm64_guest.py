# SPDX-License-Identifier: GPL-2.0-only
"""Inside an arm64 guest (test_arm64.py runs this file through
scripts/vm-run --arch arm64 --no-module): DKMS builds the module from the
tree, natively, and it loads and mounts; `make deb` builds the arm64
packages, and the daemon they ship mounts and answers.

The guest's root is read-only: DKMS works in tmpfs trees of its own
(--dkmstree, --sourcetree), and the module it built is loaded with insmod
rather than installed under /lib/modules.

Not collected by a plain `pytest tests/packaging` (its name does not start
with test_): it only makes sense inside such a guest.
"""
import glob
import os
import shutil

import pytest

from conftest import REPO, VERSION, Failed, mount_point, mounted_at, run, sh, umount

KVER = os.uname().release
SYS_MODULE = "/sys/module/varsymfs"

pytestmark = pytest.mark.skipif(
    not os.environ.get("VARSYMFS_GUEST") or os.uname().machine != "aarch64",
    reason="runs inside scripts/vm-run --arch arm64 only")


@pytest.fixture
def tmpfs_at():
    """Mounts a tmpfs on each directory given; all unmounted afterwards."""
    mounted = []

    def mount(where):
        os.makedirs(where, exist_ok=True)
        sh(["mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", where])
        mounted.append(where)
        return where
    yield mount
    for where in reversed(mounted):
        sh(["umount", where])


def check_answers(where):
    """The seed mount of UNIVERSE at where follows each caller's
    environment, and is unmounted."""
    try:
        assert mounted_at(where)
        for env, want in (({"UNIVERSE": "/att"}, "/att"), ({}, "/ucb")):
            p = run(["readlink", f"{where}/resolve"], env=dict(env, PATH="/usr/bin:/bin"))
            assert p.out.strip() == want, (env, p.out, p.err)
    finally:
        umount(where)


def test_dkms_builds_the_module_natively(tmpfs_at, public_dir):
    assert not os.path.exists(SYS_MODULE), "the guest was to boot without the module"
    tmpfs_at("/var/lib/dkms")
    stage = tmpfs_at("/tmp/stage")
    sh(["make", "-C", REPO, "install-dkms", f"DESTDIR={stage}"])
    tree = ["--sourcetree", f"{stage}/usr/src", "--dkmstree", "/var/lib/dkms"]
    sh(["dkms", "add", "-m", "varsymfs", "-v", VERSION] + tree)
    sh(["dkms", "build", "-m", "varsymfs", "-v", VERSION, "-k", KVER] + tree, timeout=1800)
    built = glob.glob(f"/var/lib/dkms/varsymfs/{VERSION}/{KVER}/aarch64/module/varsymfs.ko*")
    assert len(built) == 1, os.listdir(f"/var/lib/dkms/varsymfs/{VERSION}")
    info = sh(["modinfo", "-F", "vermagic", built[0]]).out.split()
    assert info[0] == KVER, info
    sh(["insmod", built[0]])
    try:
        where = mount_point(public_dir)
        sh(["mount", "-t", "varsymfs", "-o", "UNIVERSE,default=/ucb", "none", where])
        check_answers(where)
    finally:
        sh(["rmmod", "varsymfs"])
    assert not os.path.exists(SYS_MODULE)


def test_make_deb_builds_arm64_packages(tmpfs_at, public_dir):
    out = os.path.join(REPO, "build", "deb-arm64")
    sh(["make", "-C", REPO, "deb"], timeout=2400)
    debs = {os.path.basename(d).split("_")[0]: d for d in glob.glob(f"{out}/*.deb")}
    assert set(debs) >= {"varsymfs", "varsymfs-dkms"}, debs
    assert sh(["dpkg-deb", "-f", debs["varsymfs"], "Architecture"]).out.strip() == "arm64"
    assert sh(["dpkg-deb", "-f", debs["varsymfs-dkms"], "Architecture"]).out.strip() == "all"
    depends = sh(["dpkg-deb", "-f", debs["varsymfs"], "Depends"]).out
    assert "libfuse3-3" in depends, depends
    # the daemon it ships, run from where the package puts it
    tmpfs_at("/tmp/deb")
    sh(["dpkg-deb", "-x", debs["varsymfs"], "/tmp/deb"])
    exe = "/tmp/deb/usr/sbin/varsymfs"
    with open(exe, "rb") as f:
        assert f.read(20)[18] == 183, "not an arm64 program"    # EM_AARCH64
    where = mount_point(public_dir)
    p = run([exe, "-o", "UNIVERSE,default=/ucb", "none", where],
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    if p.returncode != 0:
        raise Failed(f"{exe} failed: {p.err}")
    check_answers(where)
    shutil.rmtree(out, ignore_errors=True)
