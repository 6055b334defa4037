# SPDX-License-Identifier: GPL-2.0-only
"""scripts/check, what `make check` runs: it says where it is ("stage K of
N" with each stage's name), how long each stage took, why each skipped test
was skipped, and still ends with the one line CI reads."""
import os
import re

import pytest

from conftest import REPO, run, sh

CHECK = os.path.join(REPO, "scripts", "check")
LAST_LINE = re.compile(r"^(\d+) passed, (\d+) failed, (\d+) skipped$")


def listed(*mode):
    """The stages of a mode, as --list numbers them: [(k, n, name)]."""
    out = sh([CHECK, "--list", *mode]).out
    stages = [re.fullmatch(r"stage (\d+) of (\d+): (.+)", line)
              for line in out.splitlines()]
    assert all(stages), out
    return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in stages]


def test_every_stage_is_numbered_out_of_all():
    stages = listed()
    n = len(stages)
    assert [(k, total) for k, total, _ in stages] == \
        [(k, n) for k in range(1, n + 1)]
    names = [name for _, _, name in stages]
    assert names[0].startswith("unit tests")
    assert names[-1].startswith("packaging:")
    assert len(set(names)) == n, "two stages of one name"


def releases():
    out = sh([os.path.join(REPO, "scripts", "kernels"), "list"]).out
    return sorted((line.split()[1] for line in out.splitlines()),
                  key=lambda r: [int(n) for n in re.findall(r"\d+", r)])


def module_guests(stages):
    """{release: what its module guest runs as root}"""
    guests = {}
    for _, _, name in stages:
        m = re.fullmatch(r"varsymfs\.ko in a guest running Linux (\S+): (.*)", name)
        if m:
            guests[m.group(1)] = m.group(2)
    return guests


def test_each_mode_plans_its_own_stages():
    kernels = releases()
    # a guest per kernel, then the FUSE program's four guests
    assert len(listed("kernels")) == len(kernels) + 4
    assert len(listed("arm64-quick")) == 1
    # make check-full: every stage of make check, the whole suite
    # everywhere (ThreadSanitizer and every kernel's module guest)
    full = [name for _, _, name in listed("full")]
    assert "conformance suite: FUSE built with ThreadSanitizer, the whole suite" in full
    assert module_guests(listed("full")) == {
        k: ("the user-namespace suite as nobody, then the whole suite as root"
            if k in (kernels[0], kernels[-1]) else "the whole suite as root")
        for k in kernels}
    p = run([CHECK, "--list", "nothing"], env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 2 and p.err.startswith("usage: scripts/check")


def test_make_check_chooses_cases_by_marker():
    """make check: the whole suite in the oldest and the newest kernel's
    guest, as root and in a user namespace (the use-case recipes in the
    newest's, on both implementations), the cases marked kernel_dependent
    in the others; ThreadSanitizer on the cases marked threads; packaging
    for one kernel."""
    kernels = releases()
    stages = listed()
    assert module_guests(stages) == {
        k: ("the user-namespace suite as nobody, then the whole suite but "
            "the use-case recipes as root" if k == kernels[0] else
            "the user-namespace suite as nobody, then the whole suite as root"
            if k == kernels[-1] else
            "the cases marked kernel_dependent as root")
        for k in kernels}
    names = [name for _, _, name in stages]
    assert "conformance suite: FUSE built with ThreadSanitizer, the cases marked threads" in names
    # the FUSE program with its exec hooks in the oldest and the newest
    # guest, once each; the newest then under ptrace_scope 3, last
    hooks = [re.fullmatch(r"FUSE in the amd64 guest running Linux (\S+), 0-[23]\S*: "
                          r"the cases marked exec_hooks\b.*", n) for n in names]
    assert sorted(m.group(1) for m in hooks if m) == [kernels[0], kernels[-1]]
    # the recipes run on FUSE with its exec hooks in the newest guest
    assert [m.group(0).split(": ")[1] for m in hooks if m and
            m.group(1) == kernels[-1]] == [
        "the cases marked exec_hooks, then the ABI matrix under "
        "ptrace_scope 3"]
    assert names[-1].endswith("(not every_kernel)")


def test_a_stage_says_where_it_is_and_how_long_it_took(build):
    """--only 1: the unit tests alone, framed as every stage is."""
    if not os.path.exists(os.path.join(build, "test_core")):
        pytest.skip(f"no {build}/test_core (make unit)")
    n = len(listed())
    p = run([CHECK, "--only", "1"], env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            timeout=300)
    lines = p.out.splitlines()
    assert p.returncode == 0, p.out + p.err
    assert f"=== stage 1 of {n}: unit tests of the core and of the daemon's " \
        "/proc parsers (ASan, UBSan)" in lines
    assert [line for line in lines if re.fullmatch(
        rf"=== stage 1 of {n} took \d+m\d\ds: unit tests .*", line)]
    assert not [line for line in lines if "stage 2 of" in line]
    times = lines.index("time of each stage:")
    assert re.fullmatch(r"\s+1\s+\d+m\d\ds  unit tests .*", lines[times + 1])
    m = LAST_LINE.match(lines[-1])
    assert m and int(m.group(1)) > 0 and m.group(2) == "0", lines[-1]


def test_every_pytest_run_gives_its_skips_reasons():
    """Each pytest that scripts/check runs, here or in a guest, lists why
    each skipped test was skipped (-rs)."""
    with open(CHECK) as f:
        runs = re.findall(r"pytest -q[^\n]*", f.read())
    assert runs
    assert all(" -rs " in r for r in runs), runs
