"""`ingest` against the real node: each outcome has its own exit code (0 stored, 1 some
dead-lettered, 2 usage, 3 unavailable or not set up), and output paths that cannot be
written stop the run before it reads anything, so nothing is lost."""

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result
from elasticsearch import Elasticsearch

from session_recall.cli import main
from tests.support.ndjson import checkpoint_offset, event, stored

pytestmark = pytest.mark.integration


def _ingest(url: str | None, alias: str, *args: str) -> Result:
    options = ["--index", alias] + (["--es-url", url] if url else [])
    return CliRunner().invoke(main, [*options, "ingest", *args], env={"ELASTICSEARCH_URL": url})


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """Seven valid events and two broken lines."""
    lines = [orjson.dumps(event(i)) for i in range(7)] + [b"{broken", b'{"userId": 1}']
    path = tmp_path / "events.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize(
    "bad",
    [
        ["--dead-letter", "/proc/nope/dead.ndjson"],
        ["--checkpoint", "/proc/nope.ckpt"],
        ["--checkpoint", "{tmp}/a-file/events.ckpt"],
        ["--dead-letter", "{tmp}/a-file/dead.ndjson"],
        ["--dead-letter", "{tmp}/no-such-folder/dead.ndjson"],  # no folder is made for it
    ],
)
def test_unwritable_output_paths_stop_the_run_before_anything_is_read(
    es: Elasticsearch, es_url: str, alias: str, source: Path, tmp_path: Path, bad: list[str]
):
    (tmp_path / "a-file").write_text("not a folder")
    bad = [arg.format(tmp=tmp_path) for arg in bad]
    dead = ["--dead-letter", str(tmp_path / "dead.ndjson")]
    refused = _ingest(es_url, alias, str(source), *dead, *bad)
    assert refused.exit_code == 2, refused.output
    assert "cannot be written" in refused.output and "Traceback" not in refused.output
    assert stored(es, alias) == 0
    assert not (tmp_path / "no-such-folder").exists()

    fixed = _ingest(es_url, alias, str(source), *dead)
    assert fixed.exit_code == 1, fixed.output  # the two broken lines are dead-lettered
    assert stored(es, alias) == 7


def test_each_outcome_has_its_exit_code(es_url: str, alias: str, source: Path, tmp_path: Path):
    dead = ["--dead-letter", str(tmp_path / "dead.ndjson")]
    clean = tmp_path / "clean.ndjson"
    clean.write_bytes(orjson.dumps(event(100)) + b"\n")
    outcomes = {
        "stored": _ingest(es_url, alias, str(clean), *dead),
        "dead-lettered": _ingest(es_url, alias, str(source), *dead),
        "usage": _ingest(es_url, alias, "-", "--follow", *dead),
        "no url": _ingest(None, alias, str(clean), *dead),
        "down": _ingest("http://127.0.0.1:9", alias, str(clean), *dead),
        "not set up": _ingest(es_url, f"{alias}-absent", str(clean), *dead),
    }
    codes = {name: result.exit_code for name, result in outcomes.items()}
    assert codes == {
        "stored": 0,
        "dead-lettered": 1,
        "usage": 2,
        "no url": 3,
        "down": 3,
        "not set up": 3,
    }, {name: result.output for name, result in outcomes.items()}
    assert all("Traceback" not in result.output for result in outcomes.values())


def test_a_file_with_a_byte_order_mark_is_stored_whole(
    es: Elasticsearch, es_url: str, alias: str, tmp_path: Path
):
    source = tmp_path / "bom.ndjson"
    source.write_bytes(b"\xef\xbb\xbf" + b"".join(orjson.dumps(event(i)) + b"\n" for i in range(3)))
    result = _ingest(es_url, alias, str(source), "--dead-letter", str(tmp_path / "dead.ndjson"))
    assert result.exit_code == 0, result.output
    assert stored(es, alias) == 3


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_disk_for_the_dead_letters_stops_the_run_with_exit_3(
    es: Elasticsearch, es_url: str, alias: str, source: Path, tmp_path: Path
):
    checkpoint = tmp_path / "events.ckpt"
    result = _ingest(
        es_url, alias, str(source), "--dead-letter", "/dev/full", "--checkpoint", str(checkpoint)
    )
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    assert "Writing the dead-letter file /dev/full failed: No space left on device" in (
        result.output
    )
    # The refusals are in no file: the checkpoint must not have passed them.
    broken_at = source.read_bytes().index(b"{broken")
    assert checkpoint_offset(checkpoint) <= broken_at

    dead = tmp_path / "dead.ndjson"
    again = _ingest(
        es_url, alias, str(source), "--dead-letter", str(dead), "--checkpoint", str(checkpoint)
    )
    assert again.exit_code == 1, again.output
    assert len(dead.read_bytes().splitlines()) == 2
    assert stored(es, alias) == 7


def test_a_corrupt_checkpoint_is_named_with_what_to_do(
    es_url: str, alias: str, source: Path, tmp_path: Path
):
    checkpoint = tmp_path / "events.ckpt"
    checkpoint.write_text('{"offset": "lots"')
    result = _ingest(es_url, alias, str(source), "--checkpoint", str(checkpoint))
    assert result.exit_code == 2, result.output
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    assert f"The checkpoint {checkpoint} does not hold a position" in result.output
    assert "Delete it to start from the beginning" in result.output
