"""`session-recall` as a real process: what a sidecar's supervisor runs."""

import sys

CLI = [sys.executable, "-c", "from session_recall.cli import main; main()"]
