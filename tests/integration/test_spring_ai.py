"""The Spring AI module (clients/spring-ai) against a real `session-recall serve`.

Its JUnit tests run with Maven against the sidecar started here, on the suite's node:
the reference tools through Spring AI's tool callbacks and a ChatClient loop, the
ChatMemoryRepository with Spring AI's own repository cases, and isolation with a token
bound to alice. Maven's downloads stay in the checkout's git-ignored .cache/m2; once a
build has resolved everything, later runs are offline.
"""

import hashlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.elasticsearch import REPO
from tests.support.serve import Served, serving
from tests.support.tokens import issue_token

pytestmark = pytest.mark.integration

MODULE = REPO / "clients" / "spring-ai"
OPERATOR = "spring-ai-operator-token-5e1b"


def _java_major(java: str) -> int:
    done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    first = (done.stderr or done.stdout).splitlines()[0]
    version = first.split('"')[1] if '"' in first else "0"
    return int(version.split(".")[0])


def _maven() -> tuple[str, dict[str, str]]:
    mvn = shutil.which("mvn")
    if mvn is None:
        pytest.skip(
            "Maven is not installed (Debian: apt-get install maven): the Spring AI module "
            "is not built"
        )
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if java is None or _java_major(java) < 17:
        pytest.skip("The Spring AI module needs a JDK 17 or newer (set JAVA_HOME)")
    return mvn, dict(os.environ)


@pytest.fixture(scope="module")
def sidecar(
    es_url: str, module_alias: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Served, str]]:
    folder = tmp_path_factory.mktemp("spring-ai")
    env = {"SESSION_RECALL_HOME": str(folder / "home"), "SESSION_RECALL_INDEX": module_alias}
    alice = issue_token(env, "--user", "alice", "--can", "read,write")
    with serving(
        es_url=es_url, alias=module_alias, folder=folder, token=OPERATOR, env=env
    ) as served:
        yield served, alice


def test_the_spring_ai_module_passes_its_tests_against_the_sidecar(
    sidecar: tuple[Served, str],
) -> None:
    mvn, env = _maven()
    served, alice = sidecar
    repository = REPO / ".cache" / "m2"
    repository.mkdir(parents=True, exist_ok=True)
    # Offline once a build of this very pom has resolved everything.
    pom = hashlib.sha256((MODULE / "pom.xml").read_bytes()).hexdigest()[:16]
    stamp = repository / f".resolved-{pom}"
    command = [
        mvn,
        "-B",
        "-q" if stamp.exists() else "-ntp",
        *(["-o"] if stamp.exists() else []),
        f"-Dmaven.repo.local={repository}",
        f"-Dsession.recall.url={served.url}",
        f"-Dsession.recall.token={OPERATOR}",
        f"-Dsession.recall.alice.token={alice}",
        "test",
    ]
    done = subprocess.run(
        command, cwd=MODULE, env=env, capture_output=True, text=True, timeout=1200
    )
    report = done.stdout[-6000:] + done.stderr[-3000:]
    assert done.returncode == 0, report
    stamp.touch()
    results = MODULE / "target" / "surefire-reports"
    ran = sum(
        int(line.split('tests="')[1].split('"')[0])
        for xml in results.glob("TEST-*.xml")
        for line in xml.read_text().splitlines()[:3]
        if "<testsuite" in line
    )
    assert ran >= 20, f"only {ran} JUnit tests ran"
    reports = results.glob("TEST-*.xml")
    skipped = [xml.name for xml in reports if 'skipped="0"' not in xml.read_text()[:2000]]
    assert not skipped, f"JUnit tests skipped: {skipped}"
    assert OPERATOR not in served.log_text() and alice not in served.log_text()
