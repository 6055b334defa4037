# SPDX-License-Identifier: GPL-2.0-only
"""DKMS and `make deb` on arm64, in an arm64 guest (scripts/vm-run --arch
arm64): in_arm64_guest.py there, in a guest that boots without the module.

The guest's root (scripts/foreign-root) holds dkms and the headers of one
kernel of kernels-arm64.list, the newest of its suite, so DKMS builds the
module natively there, with the arm64 kbuild tools, as on an arm64 machine;
and the build dependencies of debian/control, so `make deb` builds the
arm64 packages there.  make check-arm64 runs this file (scripts/check
arm64); it is slow (TCG), so a plain `pytest tests/packaging` skips it
unless VARSYMFS_ARM64=1.
"""
import json
import os

import pytest

from conftest import REPO, SBIN_PATH, Failed, listed_kernels, run

ARM64_LIST = os.path.join(REPO, "kernels-arm64.list")
ROOT = os.path.join(REPO, "build", "roots", "bookworm-arm64")

pytestmark = pytest.mark.skipif(
    not os.environ.get("VARSYMFS_ARM64"),
    reason="make check-arm64 runs it (VARSYMFS_ARM64=1): an arm64 guest under TCG")


def dkms_kernel():
    """The kernel whose headers the arm64 root holds (scripts/foreign-root)."""
    os.environ["KERNELS_LIST"] = ARM64_LIST
    try:
        lines = [k for k in listed_kernels() if k["suite"].startswith("bookworm")]
    finally:
        del os.environ["KERNELS_LIST"]
    return max(lines, key=lambda k: [int(x) for x in
                                     k["release"].split("-")[0].split("+")[0].split(".")])


def test_dkms_and_deb_in_an_arm64_guest(build, scratch):
    kernel = dkms_kernel()["release"]
    if not os.path.exists(os.path.join(ROOT, f"usr/src/linux-headers-{kernel}/Makefile")):
        raise Failed(f"the arm64 root has no headers of {kernel}: scripts/foreign-root arm64")
    results = os.path.join(scratch, f"arm64-guest-{kernel}.json")
    argv = [os.path.join(REPO, "scripts", "vm-run"), "--arch", "arm64", "--kernel", kernel,
            "--no-module", "--timeout", "2400",
            "--log", os.path.join(scratch, f"arm64-guest-{kernel}.log"),
            "--", "/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "tests/packaging/in_arm64_guest.py", f"--build={build}/arm64",
            f"--results={results}"]
    p = run(argv, env={"PATH": SBIN_PATH}, timeout=2500)
    if p.returncode != 0:
        raise Failed(f"{p.cmd}\nexit {p.returncode}\n{p.out[-8000:]}\n{p.err[-3000:]}")
    with open(results) as f:
        counts = json.load(f)
    assert counts == {"passed": 2, "failed": 0, "skipped": 0}, counts
