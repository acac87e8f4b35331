# Sourced by scripts/demo: what to type next, in a new shell, to keep using what the
# demo set up. Every indented line it prints is a command that works as printed, in
# that order, in a fresh shell (tests/integration/test_demo.py runs them).

# print_next_steps SOURCE URL
#   SOURCE: how Elasticsearch came up: "given" (ELASTICSEARCH_URL), "docker" or "local".
#   Reads REPO, SESSION_RECALL_HOME and SESSION_RECALL_INDEX.
print_next_steps() {
  local source="$1" url="$2" shown="$2" url_line
  url_line="  export ELASTICSEARCH_URL=$(printf %q "$url")"
  case "$url" in
    *://*@*)  # credentials in the URL: never printed
      shown="${url%%://*}://***@${url#*@}"
      url_line="(and set ELASTICSEARCH_URL as you did for the demo: it holds credentials)"
      ;;
  esac
  cat <<EOF

==> Elasticsearch answers at $shown
To keep using it from a new shell, run these there (the home folder holds the local
node and the key that signs cursors, so the node commands find the demo's node):

  cd $(printf %q "$REPO") && . .venv/bin/activate
$url_line
  export SESSION_RECALL_HOME=$(printf %q "$SESSION_RECALL_HOME")
  export SESSION_RECALL_INDEX=$(printf %q "$SESSION_RECALL_INDEX")

Then, for example:

  session-recall search --user alice --match all "we decided, let's go with"
  session-recall sessions --user alice

EOF
  case "$source" in
    local) printf 'When you are done, stop the node, from that shell:\n\n  session-recall node stop\n' ;;
    docker) printf 'When you are done, stop Elasticsearch, from that shell:\n\n  docker compose down\n' ;;
    *) printf 'Elasticsearch is your own (ELASTICSEARCH_URL): there is nothing to stop.\n' ;;
  esac
}
