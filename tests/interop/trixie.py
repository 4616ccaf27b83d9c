"""The Debian 13 chroot that scripts/setup-test-env.sh makes ($ZARR_TEST_ENV/trixie, Python 3.13
with a venv at /opt/zp34), for the tests that run a peer needing Python >= 3.12 in it."""

import os
import shutil
from pathlib import Path

import pytest

from test_v2_interop import ROOT

ENV_DIR = Path(os.environ.get("ZARR_TEST_ENV", ROOT / ".test-env"))
CHROOT = ENV_DIR / "trixie"
PEER_PYTHON = "/opt/zp34/bin/python"
CHROOT_EXE = shutil.which("chroot", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")


def _why_unusable(pin: str):
    stamp = CHROOT / ".pins"
    if not stamp.exists() or not (CHROOT / PEER_PYTHON.lstrip("/")).exists():
        return f"{CHROOT} holds no zarr-python 3.4 environment (run scripts/setup-test-env.sh)"
    if pin not in stamp.read_text().split():
        return f"{CHROOT} has no {pin} (run scripts/setup-test-env.sh)"
    if os.geteuid() != 0 or CHROOT_EXE is None:
        return "running Python in the chroot needs root and chroot(8)"
    return None


def require(pin: str, what: str) -> None:
    """Skips the calling test module when the chroot lacks `pin` (or cannot run), except
    under CI=true, where that fails it: `what` names the tests in the message."""
    unusable = _why_unusable(pin)
    if unusable:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the {what} tests cannot run: {unusable}", pytrace=False)
        pytest.skip(unusable, allow_module_level=True)
