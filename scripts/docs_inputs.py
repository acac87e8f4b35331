"""Writes what the documentation site takes from elsewhere before it is built: the
OpenAPI document `serve` publishes (docs/reference/openapi.json, for the HTTP
reference) and the benchmark plots BENCHMARKS.md shows (docs/bench/). Needs no
Elasticsearch: the app is built, never started. Both are git-ignored."""

import json
import shutil
import sys
from pathlib import Path

from starlette.testclient import TestClient

from session_recall.config import Settings
from session_recall.http.app import create_app
from session_recall.observability.metrics import Metrics

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "docs" / "reference" / "openapi.json"


def main() -> None:
    # As `serve` runs by default: with its metrics (`/metrics`).
    metrics = Metrics(encoder="static", model=None)
    settings = Settings(ELASTICSEARCH_URL="http://127.0.0.1:9200")
    app = create_app(settings, token="documented", metrics=metrics)
    document = TestClient(app).get("/openapi.json").json()
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    plots = REPO / "docs" / "bench"
    plots.mkdir(exist_ok=True)
    for plot in (REPO / "bench").glob("*.png"):
        shutil.copyfile(plot, plots / plot.name)
    print(f"wrote {TARGET.relative_to(REPO)} and {plots.relative_to(REPO)}/", file=sys.stderr)


if __name__ == "__main__":
    main()
