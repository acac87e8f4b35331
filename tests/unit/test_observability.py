"""The pieces of metrics and logs that need no Elasticsearch: refusal classes, request
ids, the event tally, the JSON log lines, and the alert rules of the operations page
(promtool's check where it is installed, the rules' shape always)."""

import io
import json
import logging
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from session_recall.http.observe import request_id
from session_recall.indexer.filling import TOO_LONG
from session_recall.indexer.results import SCOPE_ERASED, EventResult, Status, refusal_class
from session_recall.observability.logs import REQUEST_ID, RequestId, json_formatter
from session_recall.observability.metrics import LIVE, EventTally, Metrics, error_class
from tests.support.elasticsearch import REPO

RULES_PAGE = REPO / "docs" / "operations.md"


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        (SCOPE_ERASED, "scope_erased"),
        (TOO_LONG, "invalid"),
        ("not valid JSON: unexpected end of data", "invalid"),
        ("its partition ev-2022.03 could not be created: Elasticsearch answered ...", "partition"),
        ("its partition ev-1970.01 would be one more than the 150 new partitions", "partition"),
        ("Elasticsearch refused it (403): security_exception: action denied", "forbidden"),
        ("Elasticsearch refused it (400): mapper_parsing_exception: ...", "elasticsearch"),
    ],
)
def test_each_refusal_reason_has_its_class(reason: str, kind: str):
    assert refusal_class(reason) == kind


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "caller"), (422, "caller"), (500, "operator"), (503, "unavailable")]
)
def test_a_failed_request_is_classed_by_its_status(status: int, kind: str):
    assert error_class(status) == kind


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (b"abc-123", True),
        (b"trace:01/2+3=4@x_y.z", True),
        (b"x" * 128, True),
        (b"x" * 129, False),
        (b"", False),
        (b"with space", False),
        (b"line\nbreak", False),
        ("caf\u00e9".encode(), False),
    ],
)
def test_a_callers_request_id_is_kept_only_when_usable(given: bytes, kept: bool):
    made = request_id([(b"x-request-id", given)])
    assert (made == given.decode("latin-1")) is kept
    assert re.fullmatch(r"[A-Za-z0-9_.:/+=@-]{1,128}", made)


def test_request_ids_made_here_differ():
    assert len({request_id([]) for _ in range(100)}) == 100


def test_the_tally_counts_each_outcome_and_class():
    tally = EventTally()
    tally.count(
        [
            EventResult(Status.INDEXED, "a"),
            EventResult(Status.ALREADY_PRESENT, "b"),
            EventResult(Status.REJECTED, "c", SCOPE_ERASED),
            EventResult(Status.REJECTED, None, "not valid JSON: x"),
        ]
    )
    tally.dead_letter("its partition ev-2022.03 could not be created: ...")
    summary = tally.summary
    assert (summary.read, summary.indexed, summary.already_present) == (4, 1, 1)
    assert tally.refusals() == {
        "invalid": 1,
        "scope_erased": 1,
        "partition": 1,
        "forbidden": 0,
        "elasticsearch": 0,
    }
    assert tally.dead_lettered == 1


def test_a_json_log_line_has_time_level_logger_message_and_request_id():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    handler.addFilter(RequestId())
    logger = logging.getLogger("session_recall.test_json_lines")
    logger.addHandler(handler)
    logger.propagate = False
    token = REQUEST_ID.set("req-1")
    try:
        logger.warning("a write failed: %s", "reason", extra={"color_message": "x"})
    finally:
        REQUEST_ID.reset(token)
        logger.removeHandler(handler)
    line = json.loads(stream.getvalue())
    assert set(line) == {"time", "level", "logger", "message", "request_id"}
    assert line["level"] == "WARNING" and line["request_id"] == "req-1"
    assert line["message"] == "a write failed: reason"


def _rules_block() -> str:
    text = RULES_PAGE.read_text(encoding="utf-8")
    [block] = re.findall(r"```yaml\n(groups:\n.*?)```", text, re.DOTALL)
    return block


@pytest.mark.skipif(
    shutil.which("promtool") is None,
    reason="promtool is not installed (Debian: apt-get install prometheus)",
)
def test_the_alert_rules_pass_promtool(tmp_path: Path):
    rules = tmp_path / "rules.yml"
    rules.write_text(_rules_block(), encoding="utf-8")
    done = subprocess.run(
        ["promtool", "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_alert_rule_names_known_metrics_a_severity_and_a_summary():
    """The shape promtool checks, where it is not installed; and every metric a rule
    names is one of ours (the integration tier checks /metrics serves each)."""
    known = Metrics(encoder="static", model=None).names() | {
        f"session_recall_{name}{'_total' if kind == 'counter' else ''}"
        for name, (kind, _) in LIVE.items()
    }
    [group] = yaml.safe_load(_rules_block())["groups"]
    assert group["name"] and group["rules"]
    for rule in group["rules"]:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
        assert re.fullmatch(r"SessionRecall[A-Za-z]+", rule["alert"])
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"]
        assert rule["expr"].count("(") == rule["expr"].count(")")
        names = set(re.findall(r"\bsession_recall_[a-z_]+", rule["expr"]))
        assert names and names <= known, (rule["alert"], names - known)


def test_without_the_otel_variables_no_sdk_is_imported_and_no_span_made():
    """The Elasticsearch client imports OpenTelemetry's API by itself when installed
    (mcp brings it); serve imports nothing more of it unless traces are asked for."""
    probe = (
        "import sys\n"
        "from starlette.testclient import TestClient\n"
        "from session_recall.config import Settings\n"
        "from session_recall.http import create_app\n"
        "from session_recall.observability import tracing\n"
        "tracer = tracing.configure({})\n"
        "app = create_app(Settings(ELASTICSEARCH_URL='http://127.0.0.1:1'), enrich=False,"
        " tracer=tracer)\n"
        "with TestClient(app) as web:\n"
        "    assert web.get('/healthz').status_code == 200\n"
        "ours = ('opentelemetry.sdk', 'opentelemetry.propagate', 'opentelemetry.exporter')\n"
        "print(tracer, sorted(m for m in sys.modules if m.startswith(ours)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == "None []", done.stdout + done.stderr
