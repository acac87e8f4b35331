"""Fetches Elastic's integ-test-zip from Maven Central with `mvn` and unpacks it."""

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

from session_recall.core.errors import SessionRecallError

GROUP = "org.elasticsearch.distribution.integ-test-zip"
ARTIFACT = "elasticsearch"


def fetch_zip(version: str, cache: Path) -> Path:
    """The distribution zip in `cache`, downloaded by Maven when missing."""
    target = cache / f"{ARTIFACT}-{version}.zip"
    if target.is_file():
        return target
    if shutil.which("mvn") is None:
        raise SessionRecallError(
            "Maven (mvn) is needed to fetch Elasticsearch for the local node.",
            hint="Install Maven (e.g. apt-get install maven), or set ELASTICSEARCH_URL "
            "to a running node, or use docker compose up.",
        )
    cache.mkdir(parents=True, exist_ok=True)
    command = [
        "mvn", "-B", "-q", "dependency:copy",
        f"-Dartifact={GROUP}:{ARTIFACT}:{version}:zip",
        f"-DoutputDirectory={cache}",
    ]  # fmt: skip
    # mvn needs no project here; run it outside any folder that might hold a pom.xml.
    result = subprocess.run(command, capture_output=True, text=True, cwd=cache)
    if result.returncode != 0 or not target.is_file():
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-5:])
        raise SessionRecallError(
            f"Maven could not fetch Elasticsearch {version} ({GROUP}):\n{tail}",
            hint="Check that Maven Central is reachable and the version in .env exists.",
        )
    return target


def unpack(zip_path: Path, into: Path) -> Path:
    """Unpack once into `into`; keeps the archive's file modes (zipfile drops them)."""
    with zipfile.ZipFile(zip_path) as archive:
        top = archive.namelist()[0].split("/", 1)[0]
        home = into / top
        if (home / "bin" / "elasticsearch").is_file():
            return home
        staging = into / f".{top}.partial-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        for info in archive.infolist():
            extracted = Path(archive.extract(info, staging))
            mode = info.external_attr >> 16
            if mode and not info.is_dir():
                extracted.chmod(mode & 0o777)
    for script in (staging / top / "bin").iterdir():
        script.chmod(script.stat().st_mode | 0o755)
    try:
        (staging / top).rename(home)
    except OSError:
        if not (home / "bin" / "elasticsearch").is_file():  # not a concurrent unpack
            raise
    shutil.rmtree(staging, ignore_errors=True)
    return home
