# SPDX-License-Identifier: GPL-2.0-only
"""The Debian packages varsymfs and varsymfs-dkms, built by `make deb`
(scripts/build-deb: dpkg-buildpackage and debhelper, Debian's own tools).

First unpacked into a scratch root: the packaged programs mount and pass
the FUSE conformance suite from there, and dkms builds the packaged module
sources in a scratch tree.  Then installed for real with apt-get, as
README.md says (the postinst has DKMS build the module for the kernels
here), and purged: the machine must be as it was.  varsymfs-dkms is also
installed and purged with apt in the trixie or sid root of each kernel of
kernels.list built there, whose DKMS hook must build the module for it."""
import glob
import os
import re

import pytest

from conftest import (REPO, VERSION, Failed, Mount, dkms_module_path, dkms_status,
                      in_root, kernels, module_image, modules_state, mount_point,
                      per_kernel, root_kernels, root_path, root_state, run, sh, umount)

ARCH = sh(["dpkg", "--print-architecture"]).out.strip()
DEB_DIR = os.path.join(REPO, "build", "deb")
KERNELS = kernels()
ROOT_KERNELS = root_kernels()


def module_sources():
    """The files the module is built from: what the -dkms package ships."""
    want = {"dkms.conf", "Kbuild"}
    for d in ("core", "kmod"):
        want |= {f"{d}/{f}" for f in os.listdir(os.path.join(REPO, d))
                 if re.search(r"\.[ch]$", f)}
    return want


@pytest.fixture(scope="module")
def debs():
    parent = os.path.dirname(REPO)
    before = set(os.listdir(parent))
    sh([os.path.join(REPO, "scripts", "build-deb")], timeout=900)
    # dpkg-buildpackage writes next to the tree it builds: a copy in build/
    assert {f for f in set(os.listdir(parent)) - before if "varsymfs" in f} == set()
    return {"varsymfs": os.path.join(DEB_DIR, f"varsymfs_{VERSION}_{ARCH}.deb"),
            "varsymfs-dkms": os.path.join(DEB_DIR, f"varsymfs-dkms_{VERSION}_all.deb")}


def field(deb, name):
    return sh(["dpkg-deb", "-f", deb, name]).out.strip()


def contents(deb):
    p = sh(["dpkg-deb", "-c", deb])
    return {line.split()[5][1:] for line in p.out.splitlines()
            if not line.startswith("d")}


@pytest.fixture(scope="module")
def unpacked(debs, scratch):
    root = os.path.join(scratch, "debroot")
    for deb in debs.values():
        sh(["dpkg-deb", "-x", deb, root])
    return root


def test_both_packages_are_built(debs):
    for package, deb in debs.items():
        assert os.path.exists(deb), deb
        assert field(deb, "Package") == package
        assert field(deb, "Version") == VERSION


PAGES = sorted(os.listdir(os.path.join(REPO, "man")))


def test_varsymfs_package(debs):
    deb = debs["varsymfs"]
    files = contents(deb)
    for page in PAGES:
        assert f"/usr/share/man/man{page[-1]}/{page}.gz" in files, page
    for f in ("/usr/sbin/varsymfs", "/usr/sbin/mount.varsymfs", "/usr/bin/varsym",
              "/usr/share/doc/varsymfs/copyright",
              "/usr/share/doc/varsymfs/README.md.gz",
              "/usr/share/doc/varsymfs/examples/fstab",
              "/usr/share/doc/varsymfs/examples/systemd/universe.mount",
              "/usr/share/doc/varsymfs/examples/tmpfiles.d/varsym.conf",
              "/usr/share/doc/varsymfs/examples/modules-load.d/varsymfs.conf"):
        assert f in files, f
    assert not [f for f in files if f.startswith("/usr/src") or ".ko" in f]
    depends = [d.split()[0] for d in field(deb, "Depends").split(", ")]
    assert "fuse3" in depends and "libfuse3-3" in depends, depends


def test_varsym_conf_is_a_conffile(debs, tmp_path):
    """/etc/varsym.conf, a commented file, is the package's conffile:
    dpkg knows it, so `apt purge` removes it with the values --save wrote
    there, and an upgrade does not overwrite them."""
    deb = debs["varsymfs"]
    assert "/etc/varsym.conf" in contents(deb)
    sh(["dpkg-deb", "-e", deb, str(tmp_path)])
    assert (tmp_path / "conffiles").read_text().split() == ["/etc/varsym.conf"]
    sh(["dpkg-deb", "-x", deb, str(tmp_path / "root")])
    text = (tmp_path / "root" / "etc" / "varsym.conf").read_text()
    assert all(not line or line.startswith("#") for line in text.splitlines())


def test_readme_installs_what_make_deb_needs():
    """README.md's apt-get line before `make deb` names exactly what make
    deb installs itself as root (scripts/deps build package)."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    block = text.split("### From the Debian packages")[1].split("make deb")[0]
    line = block.replace("\\\n", " ")
    assert "sudo apt-get install --no-install-recommends" in line, block
    listed = set(line.split("--no-install-recommends")[1].split())
    p = sh([os.path.join(REPO, "scripts", "deps"), "--print", "build", "package"])
    assert listed == set(p.out.split())


def test_varsymfs_dkms_package(debs, tmp_path):
    deb = debs["varsymfs-dkms"]
    src = f"/usr/src/varsymfs-{VERSION}/"
    shipped = {f[len(src):] for f in contents(deb) if f.startswith(src)}
    assert shipped == module_sources()
    assert field(deb, "Depends").startswith("dkms")
    # registered with DKMS by its maintainer scripts (dh_dkms)
    sh(["dpkg-deb", "-e", deb, str(tmp_path)])
    postinst = (tmp_path / "postinst").read_text()
    prerm = (tmp_path / "prerm").read_text()
    assert "DKMS_NAME=varsymfs" in postinst and f"DKMS_VERSION={VERSION}" in postinst
    assert "/usr/lib/dkms/common.postinst" in postinst
    assert "dkms remove -m $DKMS_NAME -v $DKMS_VERSION --all" in prerm


def test_packaged_program_mounts_and_resolves(unpacked, probe, public_dir):
    sbin = os.path.join(unpacked, "usr", "sbin")
    varsym = os.path.join(unpacked, "usr", "bin", "varsym")
    seed = Mount("fuse", sbin, "UNIVERSE,default=/ucb", mount_point(public_dir))
    template = Mount("fuse", sbin, "", mount_point(public_dir))
    try:
        for m in (seed, template):
            ok, err = m.start()
            assert ok, f"{' '.join(m.argv())}: {err}"
        assert probe.readlink(seed.link, env={"UNIVERSE": "/att"}) == "ok /att"
        assert probe.readlink(seed.link, env={}) == "ok /ucb"
        for universe in ("att", "ucb"):
            os.makedirs(os.path.join(public_dir, universe, "bin"))
        text = public_dir + "/${UNIVERSE:-ucb}/bin"
        link = os.path.join(template.dir, "bin")
        os.symlink(text, link)
        assert probe.readlink(link, env={"UNIVERSE": "att"}) == f"ok {public_dir}/att/bin"
        assert sh([varsym, "show", link]).out == text + "\n"
        p = sh([varsym, "explain", "-i", "--env", "UNIVERSE=att", link])
        assert "    UNIVERSE = att   (from the environment)\n" in p.out
    finally:
        seed.stop()
        template.stop()


def test_packaged_programs_pass_the_fuse_conformance_suite(unpacked, build, scratch):
    """The whole FUSE suite, with the programs as Debian built them
    (dpkg-buildflags: hardening, fortify) instead of build/'s."""
    bindir = os.path.join(scratch, "debbin")
    os.makedirs(bindir, exist_ok=True)
    links = {"varsymfs": f"{unpacked}/usr/sbin/varsymfs",
             "varsym": f"{unpacked}/usr/bin/varsym"}
    # the suite's helpers (vsprobe, fake loaders, the attacks) from build/
    for name in os.listdir(build):
        path = os.path.join(build, name)
        if name not in links and os.path.isfile(path) and os.access(path, os.X_OK):
            links[name] = path
    for name, target in links.items():
        if not os.path.lexists(os.path.join(bindir, name)):
            os.symlink(target, os.path.join(bindir, name))
    p = run(["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "tests/conformance", "--impl=fuse", f"--build={bindir}"],
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, timeout=900)
    if p.returncode != 0:
        raise Failed(f"{p.cmd}\n{p.out[-6000:]}\n{p.err[-2000:]}")


def test_packaged_mount_helper(unpacked):
    """The helper where mount(8) finds it (Debian's /sbin is /usr/sbin),
    naming the packaged varsym: mount(8) may give it no PATH."""
    helper = os.path.join(unpacked, "usr", "sbin", "mount.varsymfs")
    with open(helper) as f:
        lines = f.read().splitlines()
    assert "varsym=${VARSYM:-/usr/bin/varsym}" in lines
    assert sh([helper, "--version"]).out == f"mount.varsymfs version {VERSION}\n"


def test_packaged_man_pages(unpacked):
    mandir = os.path.join(unpacked, "usr", "share", "man")
    for name, section in (p.rsplit(".", 1) for p in PAGES):
        page = f"{mandir}/man{section}/{name}.{section}.gz"
        p = sh(["man", "-M", mandir, "-w", section, name], env={"PATH": "/usr/bin:/bin"})
        assert p.out.strip() == page
        p = sh(["man", "--warnings", "-E", "UTF-8", "-l", page],
               env={"PATH": "/usr/bin:/bin", "MANWIDTH": "80"})
        assert p.err == "" and name in p.out


@pytest.mark.parametrize("kernel", per_kernel(KERNELS))
def test_packaged_sources_build_with_dkms(unpacked, scratch, build, dkms_keys, kernel):
    """dkms builds the packaged sources, in a scratch DKMS tree (the real
    installation is test_apt_install's), into the module the suite tested."""
    tree = os.path.join(scratch, "dkms-tree")
    os.makedirs(tree, exist_ok=True)
    sh(["dkms", "build", "-m", "varsymfs", "-v", VERSION, "-k", kernel,
        "--sourcetree", os.path.join(unpacked, "usr", "src"), "--dkmstree", tree])
    built = glob.glob(f"{tree}/varsymfs/{VERSION}/{kernel}/*/module/varsymfs.ko*")
    assert len(built) == 1, built
    assert not dkms_status(), "the scratch build touched the machine's DKMS tree"
    tested = os.path.join(build, "kmod", kernel, "varsymfs.ko")
    if os.path.exists(tested):
        assert module_image(built[0]) == module_image(tested)


# ---- installed for real -------------------------------------------------------

def installed_packages():
    p = run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Status}\\n",
             "varsymfs", "varsymfs-dkms"], env={"PATH": "/usr/bin:/bin"})
    return {line.split()[0] for line in p.out.splitlines() if line.endswith(" installed")}


@pytest.fixture(scope="module")
def apt_installed(debs, machine_lock, dkms_keys):
    """apt-get install of both packages, as README.md says; purged after."""
    if installed_packages() or dkms_status() or \
            os.path.exists(f"/usr/src/varsymfs-{VERSION}"):
        pytest.skip("varsymfs is installed on this machine: not touching it")
    if os.path.exists("/etc/varsym.conf"):
        pytest.skip("/etc/varsym.conf exists: the package's purge would remove it")
    before = modules_state()
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}
    apt = ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=300"]
    try:
        # a path with a slash: apt takes it for a file, not a package name
        p = run(apt + ["install", "--no-install-recommends",
                       os.path.join(DEB_DIR, f"varsymfs_{VERSION}_{ARCH}.deb"),
                       os.path.join(DEB_DIR, f"varsymfs-dkms_{VERSION}_all.deb")],
                env=env, timeout=900, check=True)
        yield p.out
    finally:
        if installed_packages():
            run(apt + ["purge", "varsymfs", "varsymfs-dkms"], env=env, timeout=600,
                check=True)
    assert not installed_packages() and not dkms_status()
    assert not os.path.exists(f"/usr/src/varsymfs-{VERSION}")
    assert not os.path.exists("/etc/varsym.conf"), "purge left /etc/varsym.conf"
    assert modules_state() == before, "/lib/modules is not as it was"


def test_apt_install_builds_the_module(apt_installed, build):
    assert installed_packages() == {"varsymfs", "varsymfs-dkms"}
    status = sh(["dkms", "status", f"varsymfs/{VERSION}"]).out
    # dkms builds for the running kernel and the newest; where the running
    # kernel has no /lib/modules (a build machine, a container), for all
    if os.uname().release in os.listdir("/lib/modules"):
        expected = [KERNELS[-1]]
    else:
        expected = KERNELS
    for k in expected:
        assert f"{k}, x86_64: installed" in status, status
        path = sh(["modinfo", "-k", k, "-n", "varsymfs"]).out.strip()
        assert path.startswith(f"/lib/modules/{k}/updates/dkms/")
        tested = os.path.join(build, "kmod", k, "varsymfs.ko")
        if os.path.exists(tested):
            assert module_image(path) == module_image(tested)


def test_saved_values_go_with_purge(apt_installed, probe, public_dir):
    """The installed conffile takes --save's edit (its comments kept); the
    purge that ends this module's fixture must remove it, edit and all."""
    varsym = "/usr/bin/varsym"
    with open("/etc/varsym.conf") as f:
        shipped = f.read()
    m = Mount("fuse", "/usr/sbin", "", mount_point(public_dir))
    try:
        ok, err = m.start()
        assert ok, err
        sh([varsym, "set", "-s", "--save", m.dir, "V=/saved"])
    finally:
        m.stop()
    with open("/etc/varsym.conf") as f:
        assert f.read() == shipped + f"\n[{os.path.realpath(m.dir)}]\nV=/saved\n"


def test_apt_installed_program_mounts_through_mount_8(apt_installed, probe, public_dir):
    user = {"PATH": "/usr/bin:/bin"}
    assert sh(["varsym", "--version"], env=user).out == f"varsym version {VERSION}\n"
    assert sh(["man", "-w", "5", "varsymfs"], env=user).out.strip() == \
        "/usr/share/man/man5/varsymfs.5.gz"
    if os.path.lexists("/usr/local/sbin/varsymfs"):
        pytest.skip("/usr/local/sbin/varsymfs comes first on mount.fuse3's PATH")
    where = mount_point(public_dir)
    try:
        # an empty environment, as at boot: mount.fuse3 finds /usr/sbin/varsymfs
        p = run(["/usr/bin/mount", "-t", "fuse.varsymfs", "-o", "UNIVERSE,default=/ucb",
                 "none", where], env={})
        assert p.returncode == 0, f"{p.cmd}: {p.err}"
        link = os.path.join(where, "resolve")
        assert probe.readlink(link, env={"UNIVERSE": "/att"}) == "ok /att"
        assert probe.readlink(link, env={"UNIVERSE": "/n"}, user="nobody") == "ok /n"
    finally:
        umount(where)


@pytest.mark.parametrize("kernel,root", per_kernel(ROOT_KERNELS))
def test_dkms_package_in_the_kernels_root(debs, root_with_dkms, build, kernel, root):
    """apt-get install of varsymfs-dkms in the kernel's root: the package's
    DKMS hook builds and installs the module for the kernel there, the one
    the suite tested; apt-get purge leaves the root as it was.  (Only the
    -dkms package: varsymfs is built for this machine's libfuse3-3.)"""
    root_with_dkms(root)
    installed = in_root(root, ["dpkg-query", "-W", "-f", "${db:Status-Status}",
                               "varsymfs-dkms"], check=False).out
    if installed == "installed" or in_root(root, ["dkms", "status", "varsymfs"]).out.strip():
        pytest.skip(f"varsymfs is installed in the {root} root: not touching it")
    before = root_state(root, kernel)
    apt = ["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=300"]
    try:
        in_root(root, apt + ["install", "--no-install-recommends", debs["varsymfs-dkms"]],
                timeout=900)
        status = in_root(root, ["dkms", "status", f"varsymfs/{VERSION}"]).out
        assert f"{kernel}, x86_64: installed" in status, status
        tested = os.path.join(build, "kmod", kernel, "varsymfs.ko")
        assert module_image(root_path(root, dkms_module_path(root, kernel))) == \
            module_image(tested)
    finally:
        in_root(root, apt + ["purge", "varsymfs-dkms"], check=False)
    assert not in_root(root, ["dkms", "status", "varsymfs"]).out.strip()
    assert root_state(root, kernel) == before, f"the {root} root is not as it was"
