"""Who is approving, as this machine knows it: the git user and the gcloud account.

Recorded beside ``--by`` in the approval record so a reviewer can see whether the three
agree. Each is best effort: a missing tool, an unset value or a slow answer records
None and never blocks the approval.
"""

from __future__ import annotations

import shutil
import subprocess

_TIMEOUT_S = 5.0


def _output(*command: str) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip()
    return value if done.returncode == 0 and value and value != "(unset)" else None


def git_user() -> str | None:
    """``Name <email>`` from git's configuration, or whichever of the two is set."""
    name = _output("git", "config", "--get", "user.name")
    email = _output("git", "config", "--get", "user.email")
    if name and email:
        return f"{name} <{email}>"
    return name or email


def gcloud_account() -> str | None:
    """The account gcloud would use (``gcloud config get-value account``)."""
    return _output("gcloud", "config", "get-value", "account")


def approver_identity() -> dict[str, str | None]:
    return {"git_user": git_user(), "gcloud_account": gcloud_account()}
