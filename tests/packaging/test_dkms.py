# SPDX-License-Identifier: GPL-2.0-only
"""DKMS from the source tree, as README.md says: `make install-dkms`, then
dkms add, build and install for each kernel of kernels.list installed here.
Then a guest per kernel boots without the module (scripts/vm-run
--no-module; as many at once as there are CPUs, GuestRuns) and must load
the DKMS one by itself: in_guest.py.
Afterwards dkms remove and make uninstall-dkms leave the machine as it was.
The same commands in the trixie or sid root of each kernel built there
(scripts/in-root), whose kbuild tools this machine cannot run."""
import json
import os
import re
import subprocess

import pytest

from conftest import (REPO, VERSION, Failed, dkms_module_path, dkms_status, in_root,
                      kernels, modules_state, module_image, per_kernel, root_kernels,
                      selected_kernels, root_path,
                      root_state, sh, SBIN_PATH)

KERNELS = kernels()
ROOT_KERNELS = root_kernels()
SRC = f"/usr/src/varsymfs-{VERSION}"
MODULE = f"varsymfs/{VERSION}"


@pytest.fixture(scope="module")
def dkms_installed(request, machine_lock, dkms_keys):
    """The module built and installed by DKMS for every kernel that a case
    chosen here tests; removed again when this file's tests are done."""
    if not KERNELS:
        pytest.skip("no Debian kernel headers here (scripts/deps kmod)")
    if os.path.exists(SRC) or dkms_status():
        pytest.skip(f"varsymfs is installed through DKMS here ({SRC}): not touching it")
    before = modules_state()
    try:
        sh(["make", "-C", REPO, "install-dkms"])
        sh(["dkms", "add", MODULE])
        for k in selected_kernels(request, KERNELS):
            sh(["dkms", "build", MODULE, "-k", k])
            sh(["dkms", "install", MODULE, "-k", k])
        yield
    finally:
        if dkms_status():
            sh(["dkms", "remove", MODULE, "--all"])
        sh(["make", "-C", REPO, "uninstall-dkms"])
    assert not dkms_status() and not os.path.exists(SRC)
    assert modules_state() == before, "/lib/modules is not as it was before DKMS"


@pytest.mark.parametrize("kernel", per_kernel(KERNELS))
def test_dkms_installed_it(dkms_installed, kernel):
    p = sh(["dkms", "status", MODULE, "-k", kernel])
    assert re.search(rf"{re.escape(kernel)}, x86_64: installed$", p.out, re.M), p.out


@pytest.mark.parametrize("kernel", per_kernel(KERNELS))
def test_modprobe_finds_it_by_its_alias(dkms_installed, kernel):
    path = sh(["modinfo", "-k", kernel, "-n", "varsymfs"]).out.strip()
    assert re.fullmatch(rf"/lib/modules/{re.escape(kernel)}/updates/dkms/varsymfs\.ko(\.xz)?", path)
    alias = sh(["modinfo", "-k", kernel, "-F", "alias", "varsymfs"]).out.split()
    assert "fs-varsymfs" in alias


@pytest.mark.parametrize("kernel", per_kernel(KERNELS))
def test_same_code_as_the_module_the_suite_tested(dkms_installed, build, kernel):
    """DKMS builds from the same sources with the same compiler and headers
    as scripts/build-kmod: what it loads into the kernel must be identical
    to build/kmod's module, which the conformance stages ran in full."""
    tested = os.path.join(build, "kmod", kernel, "varsymfs.ko")
    if not os.path.exists(tested):
        pytest.skip(f"no {tested} (make kmod)")
    path = sh(["modinfo", "-k", kernel, "-n", "varsymfs"]).out.strip()
    ours, theirs = module_image(path), module_image(tested)
    differ = sorted(s for s in set(ours) | set(theirs) if ours.get(s) != theirs.get(s))
    assert not differ, f"{path} and {tested} differ in {differ}"


class GuestRuns:
    """in_guest.py in a guest per kernel chosen (-m) that boots without the module, as
    many at once as there are CPUs, each on one host thread (a TCG guest's
    two CPUs on a thread each would only take turns with the other guest);
    wait(KERNEL) gives one's exit status, stdout and stderr."""

    def __init__(self, build, source, scratch, kernels):
        self.build, self.source, self.scratch = build, source, scratch
        self.pending, self.running, self.done = list(kernels), {}, {}
        self.slots = max(1, os.cpu_count() or 1)
        self.fill()

    def argv(self, kernel):
        return [os.path.join(REPO, "scripts", "vm-run"), "--kernel", kernel,
                "--no-module", "--one-host-thread", "--timeout", "900",
                "--log", os.path.join(self.scratch, f"guest-{kernel}.log"),
                "--", "/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "tests/packaging/in_guest.py", f"--build={self.build}",
                f"--source={self.source}", f"--results={self.results(kernel)}"]

    def results(self, kernel):
        return os.path.join(self.scratch, f"guest-{kernel}.json")

    def fill(self):
        while self.pending and len(self.running) < self.slots:
            kernel = self.pending.pop(0)
            out = open(os.path.join(self.scratch, f"guest-{kernel}.out"), "w+")
            err = open(os.path.join(self.scratch, f"guest-{kernel}.err"), "w+")
            p = subprocess.Popen(self.argv(kernel), stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, env={"PATH": SBIN_PATH})
            self.running[kernel] = (p, out, err)

    def wait(self, kernel):
        """Waits for the guests started before KERNEL's, then for its own."""
        while kernel not in self.done:
            first = next(iter(self.running))
            p, out, err = self.running.pop(first)
            try:
                p.wait(timeout=1000)
            except subprocess.TimeoutExpired:
                p.terminate()
                p.wait(timeout=60)
            finally:
                for f in (out, err):
                    f.seek(0)
                self.done[first] = (p.returncode, out.read(), err.read())
                out.close()
                err.close()
                self.fill()
        return self.done[kernel]

    def stop(self):
        """Ends the guests still running (a test failed before waiting)."""
        for p, out, err in self.running.values():
            p.terminate()
            p.wait(timeout=60)
            out.close()
            err.close()
        self.running.clear()


@pytest.fixture(scope="module")
def guest_runs(request, dkms_installed, built_source, build, scratch):
    runs = GuestRuns(build, built_source, scratch, selected_kernels(request, KERNELS))
    yield runs
    runs.stop()


@pytest.mark.parametrize("kernel", per_kernel(KERNELS))
def test_guest_loads_and_mounts_it(guest_runs, kernel):
    """in_guest.py in a guest that boots without the module."""
    status, out, err = guest_runs.wait(kernel)
    if status != 0:
        raise Failed(f"{' '.join(guest_runs.argv(kernel))}\nexit {status}\n"
                     f"{out[-8000:]}\n{err[-3000:]}")
    with open(guest_runs.results(kernel)) as f:
        counts = json.load(f)
    assert counts["failed"] == 0 and counts["skipped"] == 0 and counts["passed"] > 10, counts


# ---- in a root of another Debian release ---------------------------------------

@pytest.mark.parametrize("kernel,root", per_kernel(ROOT_KERNELS))
def test_dkms_in_the_kernels_root(root_with_dkms, build, kernel, root):
    """make install-dkms, dkms add, build and install for the kernel, in its
    root (with its compiler); what dkms installed is what the suite tested;
    dkms remove and make uninstall-dkms leave the root as it was."""
    root_with_dkms(root)
    if os.path.exists(root_path(root, SRC)) or \
            in_root(root, ["dkms", "status", "varsymfs"]).out.strip():
        pytest.skip(f"varsymfs is installed through DKMS in the {root} root: not touching it")
    before = root_state(root, kernel)
    try:
        in_root(root, ["make", "-C", REPO, "install-dkms"])
        in_root(root, ["dkms", "add", MODULE])
        in_root(root, ["dkms", "build", MODULE, "-k", kernel])
        in_root(root, ["dkms", "install", MODULE, "-k", kernel])
        p = in_root(root, ["dkms", "status", MODULE, "-k", kernel])
        assert re.search(rf"{re.escape(kernel)}, x86_64: installed$", p.out, re.M), p.out
        path = dkms_module_path(root, kernel)
        alias = in_root(root, ["modinfo", "-F", "alias", path]).out.split()
        assert "fs-varsymfs" in alias
        tested = os.path.join(build, "kmod", kernel, "varsymfs.ko")
        assert module_image(root_path(root, path)) == module_image(tested)
    finally:
        if in_root(root, ["dkms", "status", "varsymfs"]).out.strip():
            in_root(root, ["dkms", "remove", MODULE, "--all"])
        in_root(root, ["make", "-C", REPO, "uninstall-dkms"])
    assert root_state(root, kernel) == before, f"the {root} root is not as it was"
