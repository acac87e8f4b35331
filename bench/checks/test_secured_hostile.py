"""The secured node against a hostile holder of each role's credential, and of the
machine's other accounts.

One node for the module, made as an operator makes it from the demo's: started
plain, its files loosened as an earlier release left them, then `node start
--secure`. Two aliases live on it, each with a user per role (`users create
--output`). Each role tries the calls that read through metadata (`_validate/query`
with rewrite, `_field_caps`, `_terms_enum`, `_termvectors`, `_explain`, `_tasks`,
`_cat/*`, `_stats`, settings, templates, aliases, snapshots...) on the partitions it
may not read: each is refused, or its answer shows none of the events' words. The
holes each role's former privileges left (the issue's 2 to 5) are tried as such."""

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from elasticsearch import ApiError, AuthorizationException, Elasticsearch
from starlette.testclient import TestClient

from session_recall.cli import main
from session_recall.config import Settings
from session_recall.core.access import ROLES
from session_recall.http import create_app
from session_recall.node import LocalNode, wait_until
from session_recall.node.account import node_user, system_tool
from session_recall.node.secure import Security
from tests.support.cli import CLI
from tests.support.elasticsearch import authenticates, home_for_tests
from tests.support.ndjson import write_ndjson

pytestmark = pytest.mark.integration

NODE = "tests-hostile"
ALIAS = "hostile-tier"  # the alias under attack
RIVAL = "hostile-rival"  # another tenant's, whose admin and readers are hostile too
# Each alias's events' words, ids and its erased user's id: none may show in an answer
# to a credential that may not read them.
WORDS = {
    ALIAS: ("quokka", "zanzibar", "marmalade", "victim-ulla", "sess-vault", "gone-gus"),
    RIVAL: ("wombat", "tasmania", "vegemite", "victim-rita", "sess-rival", "gone-gil"),
}
MONTH = "2024.03"


@dataclass
class Tier:
    url: str
    ca: Path
    home: Path
    node: LocalNode
    started: str  # what `node start --secure` printed
    credentials: dict[tuple[str, str], Path] = field(default_factory=dict)  # --output files
    outputs: list[str] = field(default_factory=list)

    def login(self, alias: str, role: str) -> tuple[str, str]:
        lines = self.credentials[(alias, role)].read_text().splitlines()
        found = dict(line.split("=", 1) for line in lines)
        return found["ELASTICSEARCH_USERNAME"], found["ELASTICSEARCH_PASSWORD"]

    def client(self, alias: str, role: str) -> Elasticsearch:
        return Elasticsearch(self.url, basic_auth=self.login(alias, role), ca_certs=str(self.ca))

    def superuser(self) -> Elasticsearch:
        password = Security(self.ca.parent).password()
        return Elasticsearch(self.url, basic_auth=("elastic", password), ca_certs=str(self.ca))

    def run(
        self, alias: str, role: str | None, *args: str, stdin: str = "", user_of: str = ""
    ) -> Result:
        """A command on `alias` as its user of `role` (or the one of `user_of`'s alias)."""
        given = {
            "ELASTICSEARCH_URL": self.url,
            "ELASTICSEARCH_CA_CERTS": str(self.ca),
            "ELASTICSEARCH_API_KEY": None,
            "ELASTICSEARCH_PASSWORD": None,
            "SESSION_RECALL_INDEX": alias,
            "SESSION_RECALL_HOME": str(self.home),
        }
        if role is not None:
            user, password = self.login(user_of or alias, role)
            given |= {"ELASTICSEARCH_USERNAME": user, "ELASTICSEARCH_PASSWORD": password}
        result = CliRunner().invoke(main, list(args), env=given, input=stdin)
        self.outputs.append(result.output)
        return result

    def secrets(self) -> list[str]:
        found = [self.login(*key)[1] for key in self.credentials]
        return [*found, Security(self.ca.parent).password()]


def _home() -> Path:
    """A home of the module's own, so its node has an account of its own whatever the
    shared home's nodes run as; the distribution's archive is the shared one's."""
    home = home_for_tests() / "hostile-tier"
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dist").exists():
        (home_for_tests() / "dist").mkdir(exist_ok=True)
        (home / "dist").symlink_to(home_for_tests() / "dist")
    return home


def _cli(*args: str) -> Result:
    env = {"SESSION_RECALL_HOME": str(_home()), "ELASTICSEARCH_URL": None}
    return CliRunner().invoke(main, list(args), env=env)


def _loosen(root: Path) -> None:
    """What an earlier release left: folders 755 and files 644."""
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o044)


@pytest.fixture(scope="module")
def tier(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tier]:
    home = _home()
    node = LocalNode(home=home, name=NODE)
    node.wipe()  # a node of an earlier run kept other secrets
    security = Security(home / "security" / NODE)
    try:
        plain = _cli("node", "start", "--name", NODE)
        assert plain.exit_code == 0, plain.output
        assert plain.output.strip().splitlines()[-1].startswith("http://")
        _loosen(node.node_dir)
        started = _cli("node", "start", "--name", NODE, "--secure")
        log = node.node_dir / "logs" / "elasticsearch.log"
        assert started.exit_code == 0, (started.output, log.read_text()[-3000:])
        found = Tier(
            url=started.output.strip().splitlines()[-1],
            ca=security.ca,
            home=tmp_path_factory.mktemp("home"),
            node=LocalNode(home=home, name=NODE),
            started=started.output,
        )
        credentials = tmp_path_factory.mktemp("credentials")
        for alias in (ALIAS, RIVAL):
            for role in ROLES:
                path = credentials / f"{alias}-{role}.env"
                made = CliRunner().invoke(
                    main,
                    ["users", "create", "--role", role, "--name", f"{alias}-{role}-user",
                     "--output", str(path), "--node", NODE],
                    env={"SESSION_RECALL_HOME": str(home), "SESSION_RECALL_INDEX": alias},
                )  # fmt: skip
                assert made.exit_code == 0, made.output
                found.credentials[(alias, role)] = path
        for alias, role in found.credentials:
            client = found.client(alias, role)
            assert wait_until(lambda c=client, a=alias: authenticates(c, a), timeout=60)
        _seed(found, tmp_path_factory.mktemp("events"))
        yield found
    finally:
        LocalNode(home=home, name=NODE).wipe()
        shutil.rmtree(security.folder, ignore_errors=True)


def _event(alias: str, event_id: str, text: str, *, month: str = MONTH) -> dict[str, str]:
    year, number = month.split(".")
    return {
        "user_id": WORDS[alias][3],
        "session_id": WORDS[alias][4],
        "event_id": f"{alias}-{event_id}",
        "timestamp": f"{year}-{number}-10T10:00:00Z",
        "type": "user_message",
        "text": text,
    }


def _seed(tier: Tier, folder: Path) -> None:
    """Both aliases set up by their admins, with the victim's events stored by their
    ingest users, and a user erased (a tombstone naming her)."""
    for alias in (ALIAS, RIVAL):
        assert tier.run(alias, "admin", "setup").exit_code == 0
        first, second, third, _, _, gone = WORDS[alias]
        events = [_event(alias, "e1", f"the {first} of {second} ate the {third}")]
        events.append({**_event(alias, "e2", "bye"), "user_id": gone})
        source = write_ndjson(folder / f"{alias}.ndjson", events)
        stored = tier.run(alias, "ingest", "ingest", str(source), "--no-enrich")
        assert stored.exit_code == 0, stored.output
        erased = tier.run(alias, "admin", "delete", "--user", gone)
        assert erased.exit_code == 0, erased.output
        tier.superuser().indices.refresh(index=f"{alias}*")


# -- the read-through-metadata family ------------------------------------------------

# (method, path, body). {p}: a partition, {a}: the alias, {t}: its tombstones, {id} and
# {r}: a stored event's id and routing.
_TOP_TERMS = "top_terms_1000"
CALLS: list[tuple[str, str, dict[str, Any] | None]] = [
    *[
        ("POST", f"/{{{where}}}/_validate/query?rewrite=true&all_shards=true",
         {"query": {"prefix": {name: {"value": "", "rewrite": _TOP_TERMS}}}})
        for where in ("p", "a") for name in ("text", "user_id", "session_id", "event_id")
    ],
    ("POST", "/{t}/_validate/query?rewrite=true",
     {"query": {"prefix": {"user_id": {"value": "", "rewrite": _TOP_TERMS}}}}),
    ("GET", "/{p}/_field_caps?fields=*", None),
    ("POST", "/{p}/_terms_enum", {"field": "user_id"}),
    ("POST", "/{p}/_terms_enum", {"field": "session_id"}),
    ("POST", "/{t}/_terms_enum", {"field": "user_id"}),
    ("GET", "/{p}/_termvectors/{id}?routing={r}&fields=text", None),
    ("POST", "/{p}/_explain/{id}?routing={r}", {"query": {"match_all": {}}}),
    ("GET", "/{p}/_doc/{id}?routing={r}", None),
    ("POST", "/{p}/_mget", {"docs": [{"_id": "{id}", "routing": "{r}"}]}),
    ("POST", "/{a}/_search", {"query": {"match_all": {}}}),
    ("POST", "/{a}/_count", {"query": {"term": {"text": "{word}"}}}),
    ("POST", "/{t}/_search", {"query": {"match_all": {}}}),
    ("POST", "/_search?q={word}", None),
    ("GET", "/_tasks?detailed=true", None),
    ("GET", "/_cat/tasks?detailed=true&format=json", None),
    *[
        ("GET", f"/_cat/{name}?format=json", None)
        for name in ("indices", "count/{a}", "aliases", "shards", "segments", "templates",
                     "fielddata", "recovery", "repositories", "allocation", "nodes")
    ],
    ("GET", "/{p}/_stats", None),
    ("GET", "/_stats", None),
    ("GET", "/{p}/_segments?verbose=true", None),
    ("GET", "/{p}/_settings", None),
    ("GET", "/{p}/_mapping", None),
    ("GET", "/{p}", None),
    ("GET", "/_index_template", None),
    ("GET", "/_component_template", None),
    ("GET", "/_template", None),
    ("GET", "/_alias", None),
    ("GET", "/{a}/_alias", None),
    ("GET", "/_resolve/index/*", None),
    ("GET", "/_snapshot", None),
    ("GET", "/_snapshot/_all/_all", None),
    ("GET", "/_cluster/state", None),
    ("GET", "/_nodes/stats", None),
]  # fmt: skip


def _targets(tier: Tier, alias: str) -> dict[str, str]:
    word = WORDS[alias][0]
    hit = tier.superuser().search(index=alias, query={"term": {"text": word}})["hits"]["hits"]
    (found,) = hit
    return {
        "p": f"{alias}-{MONTH}",
        "a": alias,
        "t": f"{alias}-tombstones",
        "id": found["_id"],
        "r": found["_routing"],
        "word": word,
    }


def _fill(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, dict):
        return {k: _fill(v, names) for k, v in value.items()}
    return value


def _leaks(client: Elasticsearch, names: dict[str, str]) -> dict[str, str]:
    """Each call of `CALLS` on the alias `names["a"]` whose answer shows one of its
    events' words, with what it showed."""
    secrets = WORDS[names["a"]]
    leaked = {}
    for method, path, body in CALLS:
        where = _fill(path, names)
        try:
            answer = client.perform_request(
                method,
                where,
                body=_fill(body, names),
                headers={"accept": "application/json", "content-type": "application/json"},
            )
            text = str(answer.body).lower()
        except ApiError as err:
            if err.status_code in (401, 403):
                continue  # refused
            text = str(err.body).lower()
        shown = [secret for secret in secrets if secret in text]
        if shown:
            leaked[f"{method} {where}"] = ", ".join(shown)
    return leaked


@pytest.mark.parametrize(
    ("role", "target"),
    [("ingest", ALIAS), *[(role, RIVAL) for role in ROLES]],
    ids=lambda v: v,
)
def test_no_metadata_call_shows_an_event_to_a_credential_that_may_not_read_it(
    tier: Tier, role: str, target: str
) -> None:
    """The ingest role on its own alias's events, and each role of one alias on
    another alias's: every call is refused, or its answer holds none of the words."""
    leaked = _leaks(tier.client(ALIAS, role), _targets(tier, target))
    assert leaked == {}, leaked


def test_the_same_calls_do_show_the_events_to_the_superuser(tier: Tier) -> None:
    """What makes the test above able to fail: these calls reach the events' words."""
    leaked = _leaks(tier.superuser(), _targets(tier, ALIAS))
    reached = " ".join(leaked)
    for call in ("_validate/query", "_terms_enum", "_termvectors", "_tasks", "_search"):
        assert call in reached or call == "_tasks", (call, leaked)
    assert len(leaked) >= 10, leaked


# -- the holes, each as it was found -------------------------------------------------


def test_hole_2_ingest_cannot_list_the_terms_of_events_through_validate_query(
    tier: Tier,
) -> None:
    ingest = tier.client(ALIAS, "ingest")
    partition = f"{ALIAS}-{MONTH}"
    for name in ("text", "user_id", "session_id"):
        query = {"prefix": {name: {"value": "", "rewrite": _TOP_TERMS}}}
        with pytest.raises(AuthorizationException):
            ingest.indices.validate_query(index=partition, query=query, rewrite=True)


def test_hole_3_ingest_cannot_watch_searches_through_tasks(tier: Tier) -> None:
    ingest = tier.client(ALIAS, "ingest")
    for path in ("/_tasks?detailed=true&actions=*search*", "/_cat/tasks?detailed=true"):
        with pytest.raises(AuthorizationException):
            ingest.perform_request("GET", path, headers={"accept": "application/json"})


def test_hole_4_another_alias_s_admin_cannot_capture_this_alias_s_next_partition(
    tier: Tier, tmp_path: Path
) -> None:
    """The rival's admin puts a template of a higher priority for this alias's next
    partition, in its own alias: this alias's ingest refuses to make the partition,
    naming the template, and the rival's reader finds nothing. A partition captured
    before (made while such a template stood) is found by `setup`, which names it."""
    rival_admin = tier.client(RIVAL, "admin")
    captured = f"{ALIAS}-2019.04"
    rival_admin.indices.put_index_template(
        name="capture", index_patterns=[captured], priority=500,
        template={"aliases": {RIVAL: {}, ALIAS: {}}},
    )  # fmt: skip
    try:
        source = write_ndjson(
            tmp_path / "april.ndjson", [_event(ALIAS, "c1", "quokka", month="2019.04")]
        )
        refused = tier.run(ALIAS, "ingest", "ingest", str(source), "--no-enrich")
        assert refused.exit_code == 3, refused.output
        assert "'capture'" in refused.output and captured in refused.output, refused.output
        assert "Traceback" not in refused.output
        assert not tier.superuser().indices.exists(index=captured)
        tier.superuser().indices.refresh(index=RIVAL)
        rival_reader = tier.client(RIVAL, "recall")
        found = rival_reader.search(index=RIVAL, query={"term": {"event_id": f"{ALIAS}-c1"}})
        assert found["hits"]["hits"] == []
        # Setup names the template too, and so does serve.
        setup = tier.run(ALIAS, "admin", "setup")
        assert setup.exit_code == 3 and "'capture'" in setup.output, setup.output
    finally:
        tier.superuser().indices.delete_index_template(name="capture")
    # Made while such a template stood (as an earlier release let it be): setup says so.
    tier.superuser().indices.create(index=captured, aliases={ALIAS: {}, RIVAL: {}})
    try:
        found = tier.run(ALIAS, "admin", "setup")
        assert found.exit_code == 3, found.output
        assert captured in found.output and f"'{RIVAL}'" in found.output, found.output
        writes = tier.run(ALIAS, "ingest", "ingest", str(source), "--no-enrich")
        assert writes.exit_code == 3 and captured in writes.output, writes.output
    finally:
        tier.superuser().indices.delete(index=captured)
    assert tier.run(ALIAS, "admin", "setup").exit_code == 0


def test_hole_5_ingest_makes_partitions_from_the_template_only_and_cannot_block_them(
    tier: Tier, tmp_path: Path
) -> None:
    ingest = tier.client(ALIAS, "ingest")
    chosen = f"{ALIAS}-2018.01"
    with pytest.raises(AuthorizationException):
        ingest.indices.create(index=chosen, settings={"index.blocks.read": True})
    with pytest.raises(AuthorizationException):
        ingest.indices.put_settings(index=f"{ALIAS}-{MONTH}", settings={"index.blocks.read": True})
    with pytest.raises(AuthorizationException):
        ingest.indices.forcemerge(index=f"{ALIAS}-{MONTH}", max_num_segments=1)
    # Its writes still make the partition of a new month: from the template alone.
    source = write_ndjson(
        tmp_path / "later.ndjson", [_event(ALIAS, "l1", "later", month="2018.01")]
    )
    stored = tier.run(ALIAS, "ingest", "ingest", str(source), "--no-enrich")
    assert stored.exit_code == 0, stored.output
    made = tier.superuser().indices.get(index=chosen)[chosen]
    assert set(made["aliases"]) == {ALIAS}
    settings = made["settings"]["index"]
    assert "blocks" not in settings and settings["sort"]["field"][0] == "timestamp"
    # A block an earlier release's ingest could set: the message names it, no role.
    tier.superuser().indices.put_settings(index=chosen, settings={"index.blocks.read": True})
    try:
        searched = tier.run(ALIAS, "recall", "search", "--user", "victim-ulla", "later")
        assert searched.exit_code == 3, searched.output
        assert "blocked" in searched.output and "recall role" not in searched.output
    finally:
        tier.superuser().indices.put_settings(index=chosen, settings={"index.blocks.read": None})


# -- clear errors --------------------------------------------------------------------


@pytest.mark.parametrize("user_of", [ALIAS, RIVAL], ids=["its-ingest", "another-alias-enrich"])
def test_embed_under_a_credential_that_cannot_read_names_the_enrich_role(
    tier: Tier, user_of: str
) -> None:
    """The alias's ingest user, and another alias's enrich user (which Elasticsearch,
    asked leniently, answered with a count of 0, as if nothing waited)."""
    role = "ingest" if user_of == ALIAS else "enrich"
    for command in (["embed", "--status"], ["embed"]):
        result = tier.run(ALIAS, role, *command, user_of=user_of)
        assert result.exit_code == 3, (command, result.output)
        assert "needs the enrich role" in result.output, result.output
        assert "0 event(s)" not in result.output and "Traceback" not in result.output


def test_readyz_names_the_read_credential_it_was_refused(tier: Tier, tmp_path: Path) -> None:
    user, password = tier.login(ALIAS, "ingest")
    reader, _ = tier.login(ALIAS, "recall")
    settings = Settings(
        ELASTICSEARCH_URL=tier.url,
        ELASTICSEARCH_USERNAME=user,
        ELASTICSEARCH_PASSWORD=password,
        ELASTICSEARCH_CA_CERTS=tier.ca,
        SESSION_RECALL_READ_USERNAME=reader,
        SESSION_RECALL_READ_PASSWORD="not-" + password,
        SESSION_RECALL_INDEX=ALIAS,
        SESSION_RECALL_HOME=tmp_path,
    )
    with TestClient(create_app(settings, enrich=False)) as web:
        ready = web.get("/readyz")
    assert ready.status_code == 503
    reason = ready.json()["reason"]
    assert "read credential (SESSION_RECALL_READ_*)" in reason and "401" in reason, reason
    assert "does not answer" not in reason and password not in reason


# -- files, accounts and secrets -----------------------------------------------------


def test_an_existing_node_started_secure_is_made_private_and_says_so(tier: Tier) -> None:
    """The demo's node (started plain, its files left open by an earlier release)
    becomes a secured one with `node start --secure`: no 4-minute wait for a
    password its keystore never got, and its files tightened, with a message."""
    assert tier.url.startswith("https://"), tier.started
    assert "open to other accounts" in tier.started, tier.started
    assert "ELASTICSEARCH_CA_CERTS" in tier.started
    for folder, dirs, files in os.walk(tier.node.runtime):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            if not os.path.islink(name):
                assert os.stat(name).st_mode & 0o077 == 0, name


_READER = """
import os, sys
opened = []
for path in sys.argv[1:]:
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
        opened.append(path)
    except OSError:
        pass
print("\\n".join(opened))
"""


# Not the venv's: it may live under a folder nobody may enter (/root).
_SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "python3"


def _as_nobody(paths: list[str]) -> list[str]:
    """The `paths` the account `nobody` can read (list, for a folder)."""
    run = subprocess.run(
        # Found where the system keeps it, whatever PATH says, as `node start` finds it.
        [
            system_tool("runuser", user="nobody", hint="install util-linux"),
            "-u",
            "nobody",
            "--",
            _SYSTEM_PYTHON,
            "-c",
            _READER,
            *paths,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in run.stdout.splitlines() if line]


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a reader as the account nobody")
def test_the_account_nobody_reads_no_file_of_the_node_nor_a_credentials_file(
    tier: Tier,
) -> None:
    roots = [tier.node.runtime, tier.ca.parent]
    paths = [str(p) for root in roots for p in [root, *root.rglob("*")]]
    paths += [str(path) for path in tier.credentials.values()]
    # What shows the reader finds a file it may read (pytest's own folder is 700).
    folder = Path(tempfile.mkdtemp(prefix="open-to-all-", dir="/tmp"))
    try:
        open_to_all = folder / "open"
        open_to_all.write_text("x")
        os.chmod(folder, 0o755)
        os.chmod(open_to_all, 0o644)
        assert len(paths) > 100
        assert _as_nobody([*paths, str(open_to_all)]) == [str(open_to_all)]
    finally:
        shutil.rmtree(folder)
    # The node runs as an account of its home's own, not one every home shares.
    owner = os.stat(tier.node.node_dir / "data").st_uid
    assert pwd.getpwuid(owner).pw_name == node_user(_home())


def test_users_create_keeps_the_credentials_to_their_owner(tier: Tier, tmp_path: Path) -> None:
    env = {"SESSION_RECALL_HOME": str(_home()), "SESSION_RECALL_INDEX": ALIAS}
    taken = tmp_path / "taken.env"  # another user's credentials, say
    taken.write_text("kept\n")
    args = ["users", "create", "--role", "recall", "--node", NODE]
    refused = CliRunner().invoke(
        main, [*args, "--name", "never-made", "--output", str(taken)], env=env
    )
    assert refused.exit_code == 2 and "exists" in refused.output, refused.output
    assert taken.read_text() == "kept\n"
    listed = CliRunner().invoke(main, ["users", "list", "--node", NODE], env=env)
    assert "never-made" not in listed.output
    # Redirected as the docs once showed (`> admin.env`): the file is made 600.
    redirected = tmp_path / "redirected.env"
    with redirected.open("w") as out:
        os.chmod(redirected, 0o644)
        made = subprocess.run(
            [*CLI, *args, "--name", "redirected"],
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
    assert made.returncode == 0, made.stderr
    assert "now 600" in made.stderr
    assert redirected.stat().st_mode & 0o777 == 0o600
    assert redirected.read_text().startswith("ELASTICSEARCH_USERNAME=redirected\n")
    tier.outputs.append(made.stderr)


def test_a_password_read_from_standard_input_is_taken(tier: Tier) -> None:
    """`--password-file -`: the secret on no command line and in no environment."""
    user, password = tier.login(ALIAS, "recall")
    result = tier.run(
        ALIAS,
        None,
        "--username",
        user,
        "--password-file",
        "-",
        "search",
        "--user",
        WORDS[ALIAS][3],
        WORDS[ALIAS][0],
        stdin=f"{password}\n",
    )
    assert result.exit_code == 0, result.output
    assert WORDS[ALIAS][1] in result.output


def test_no_secret_is_on_a_command_line_in_a_log_or_in_an_output(tier: Tier) -> None:
    """Last: every command of the module has run. The node and everything it started
    (the launcher's `runuser` and `env`, the JVM) run now."""
    secrets = tier.secrets()
    assert len(secrets) == 2 * len(ROLES) + 1
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue  # gone meanwhile
    assert any(str(tier.node.node_dir) in line for line in lines)  # the node's are there
    logs = [p.read_text(errors="replace") for p in (tier.node.node_dir / "logs").glob("*")]
    texts = [*lines, *logs, *tier.outputs, tier.started]
    for secret in secrets:
        leaked = [re.sub(re.escape(secret), "***", text)[:200] for text in texts if secret in text]
        assert not leaked, leaked
