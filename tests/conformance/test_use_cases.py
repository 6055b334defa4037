# SPDX-License-Identifier: GPL-2.0-only
"""docs/USE-CASES.md: each recipe of examples/use-cases/, run whole against
the implementation under test, with the real Debian packages that
scripts/use-case-packages fetched into build/use-cases/ (make
use-case-packages).  A recipe prints every step and checks it; its exit
status says whether all held (0), one did not (1), or the machine lacks
something it needs (77)."""
import os
import stat
import subprocess

import pytest

from conftest import IN_USERNS, NEEDS_REAL_ROOT, REPO

pytestmark = [pytest.mark.use_cases]

RECIPES = os.path.join(REPO, "examples", "use-cases")
PACKAGES = os.path.join(REPO, "build", "use-cases")
FETCH = os.path.join(REPO, "scripts", "use-case-packages")
SBIN_PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
# in a guest QEMU runs without KVM: a recipe there takes many times longer
TIMEOUT = 900

# Each recipe, and the sections of docs/SPEC.md it shows.  exec_hooks: it
# starts programs through variant links, which the FUSE program's exec
# hooks change.
CASES = {
    "01-interpreter.sh": [pytest.mark.spec2, pytest.mark.spec4,
                          pytest.mark.spec5, pytest.mark.exec_hooks],
    "02-library.sh": [pytest.mark.spec2, pytest.mark.spec4],
    "03-headers.sh": [pytest.mark.spec2, pytest.mark.spec4],
    "04-compiled-paths.sh": [pytest.mark.spec2, pytest.mark.spec4,
                             pytest.mark.spec5, pytest.mark.exec_hooks],
    "05-per-directory.sh": [pytest.mark.spec4, pytest.mark.exec_hooks],
    "06-running-processes.sh": [pytest.mark.spec4, pytest.mark.spec5,
                                pytest.mark.exec_hooks],
    "07-clean-environments.sh": [pytest.mark.spec4, pytest.mark.spec5,
                                 pytest.mark.spec6],
}


def fetched():
    return os.path.isfile(os.path.join(PACKAGES, "table"))


def needs_packages():
    if IN_USERNS:
        pytest.skip(NEEDS_REAL_ROOT + "; the recipes mount as root")
    if os.geteuid() != 0:
        pytest.skip("the recipes mount: they run as root")
    if not fetched():
        pytest.skip(f"{PACKAGES} is not fetched: make use-case-packages "
                    "(scripts/use-case-packages) downloads the packages once")


@pytest.mark.parametrize("recipe", [pytest.param(name, marks=marks,
                                                 id=name[:-3])
                                    for name, marks in CASES.items()])
def test_recipe(recipe, impl, build):
    needs_packages()
    argv = [os.path.join(RECIPES, recipe), "--impl", impl, "--build", build,
            "--packages", PACKAGES]
    p = subprocess.run(argv, env=SBIN_PATH, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=TIMEOUT)
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    if p.returncode == 77:
        pytest.skip(err.strip().splitlines()[-1])
    assert p.returncode == 0, (f"{' '.join(argv)}: exit status "
                               f"{p.returncode}\n{out}\n{err}")
    assert out.rstrip().endswith(f"{recipe[:-3]}: every check passed"), out


def test_every_recipe_is_run_and_documented():
    """A recipe added to examples/use-cases/ is run here, and
    docs/USE-CASES.md names each."""
    on_disk = sorted(n for n in os.listdir(RECIPES) if n.endswith(".sh")
                     and n[:2].isdigit())
    assert on_disk == sorted(CASES)
    with open(os.path.join(REPO, "docs", "USE-CASES.md")) as f:
        doc = f.read()
    for name in CASES:
        assert f"examples/use-cases/{name}" in doc, name
        mode = os.stat(os.path.join(RECIPES, name)).st_mode
        assert mode & stat.S_IXUSR, f"{name} is not executable"


def test_a_second_fetch_asks_no_mirror(tmp_path):
    """Once fetched, scripts/use-case-packages runs no apt at all: apt-get
    and apt-cache that fail, first on PATH, change nothing."""
    needs_packages()
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in ("apt-get", "apt-cache", "curl", "wget"):
        stub = stubs / name
        stub.write_text(f"#!/bin/sh\necho {name} was run >&2\nexit 1\n")
        stub.chmod(0o755)
    env = {"PATH": f"{stubs}:/usr/sbin:/usr/bin:/sbin:/bin"}
    p = subprocess.run([FETCH], env=env, capture_output=True, timeout=120)
    err = p.stderr.decode(errors="replace")
    assert p.returncode == 0, err
    assert "was run" not in err and "downloading" not in err, err
    lines = p.stdout.decode().splitlines()
    assert lines[-1].startswith("total"), lines
    # two versions of each role, each from its own suite
    roles = {}
    for line in lines[:-1]:
        role, suite = line.split()[:2]
        roles.setdefault(role, set()).add(suite)
    assert {r for r, s in roles.items() if len(s) == 2} >= {
        "python", "attrs", "sqlite", "perl"}, roles


def test_the_recipes_need_root_and_packages(tmp_path):
    """Run without what it needs, a recipe says what, and stops (2)."""
    if IN_USERNS:
        pytest.skip(NEEDS_REAL_ROOT)
    recipe = os.path.join(RECIPES, "02-library.sh")
    p = subprocess.run([recipe, "--packages", str(tmp_path / "none")],
                       env=SBIN_PATH, capture_output=True, timeout=60)
    assert p.returncode == 2
    assert b"make use-case-packages" in p.stderr or b"as root" in p.stderr, \
        p.stderr
    p = subprocess.run([recipe, "--impl", "zfs"], env=SBIN_PATH,
                       capture_output=True, timeout=60)
    assert p.returncode == 2 and b"IMPL must be fuse or kernel" in p.stderr
