"""Artifacts from Maven Central, fetched with `mvn` (the Elasticsearch distribution for
the local node, a local encoder's weights): never a hand-written download."""

import shutil
import subprocess
from pathlib import Path

from session_recall.core.errors import SessionRecallError


def copy_artifact(coordinate: str, into: Path, *, needed_for: str, hint: str) -> None:
    """`mvn dependency:copy` of `coordinate` (`group:artifact:version[:type]`) into the
    folder `into`. Raises `SessionRecallError` naming `needed_for` when Maven is missing
    or cannot fetch it, with Maven's last lines and `hint`."""
    if shutil.which("mvn") is None:
        raise SessionRecallError(
            f"Maven (mvn) is needed to fetch {needed_for}.",
            hint=f"Install Maven (e.g. apt-get install maven). {hint}",
        )
    into.mkdir(parents=True, exist_ok=True)
    command = ["mvn", "-B", "-q", "dependency:copy", f"-Dartifact={coordinate}",
               f"-DoutputDirectory={into}"]  # fmt: skip
    # mvn needs no project here; run it outside any folder that might hold a pom.xml.
    result = subprocess.run(command, capture_output=True, text=True, cwd=into)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
        raise SessionRecallError(
            f"Maven could not fetch {needed_for} ({coordinate}):\n{tail}",
            hint=f"Check that Maven Central is reachable. {hint}",
        )
