"""Tools and policy share their words through agentcli.risk and never import each other when
loaded: each package's modules are imported in a fresh interpreter and the other package
must not be in sys.modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import importlib, pkgutil, sys
package = importlib.import_module(sys.argv[1])
for info in pkgutil.iter_modules(package.__path__, sys.argv[1] + "."):
    importlib.import_module(info.name)
print(" ".join(sorted(m for m in sys.modules if m.split(".")[:2] == sys.argv[2].split("."))))
"""


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [("agentcli.tools", "agentcli.policy"), ("agentcli.policy", "agentcli.tools")],
)
def test_package_does_not_import_the_other(package: str, forbidden: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, package, forbidden],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"importing {package} loaded {done.stdout.strip()}"


def test_risk_module_imports_neither() -> None:
    probe = (
        "import sys, agentcli.risk; "
        "print(' '.join(m for m in sys.modules if m.startswith(('agentcli.tools', "
        "'agentcli.policy'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
