# Sourced by scripts/demo: `scripts/demo --fresh` starts the demo over on its own alias.

DEMO_INDEX=session-demo

# refuse_fresh_elsewhere: --fresh drops the demo's own alias, never one of the user's.
refuse_fresh_elsewhere() {
  if [ "${SESSION_RECALL_INDEX:-$DEMO_INDEX}" != "$DEMO_INDEX" ]; then
    echo "scripts/demo --fresh drops only the demo's own alias ($DEMO_INDEX), not" \
      "$SESSION_RECALL_INDEX: unset SESSION_RECALL_INDEX to use it." >&2
    return 2
  fi
}

# drop_demo_alias: the demo's alias, its partitions, tombstones and templates, gone.
# Reads ELASTICSEARCH_URL (and the credentials' variables); needs the venv's python.
drop_demo_alias() {
  echo "==> --fresh: dropping the demo's alias $DEMO_INDEX, its partitions and tombstones"
  SESSION_RECALL_INDEX="$DEMO_INDEX" python -c 'from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.templates import uninstall
settings = Settings()
uninstall(make_client(settings), settings.index)'
}
