"""Fetches Elastic's integ-test-zip from Maven Central with `mvn` and unpacks it."""

import os
import shutil
import zipfile
from pathlib import Path

from session_recall.core.errors import SessionRecallError
from session_recall.core.maven import copy_artifact

GROUP = "org.elasticsearch.distribution.integ-test-zip"
ARTIFACT = "elasticsearch"


def fetch_zip(version: str, cache: Path) -> Path:
    """The distribution zip in `cache`, downloaded by Maven when missing."""
    target = cache / f"{ARTIFACT}-{version}.zip"
    if target.is_file():
        return target
    copy_artifact(
        f"{GROUP}:{ARTIFACT}:{version}:zip",
        cache,
        needed_for=f"Elasticsearch {version} for the local node",
        hint="Or set ELASTICSEARCH_URL to a running node, or use docker compose up; "
        "check that the version in .env exists.",
    )
    if not target.is_file():
        raise SessionRecallError(
            f"Maven fetched Elasticsearch {version}, but {target} is not there.",
            hint="Check the version in .env, then start the node again.",
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
