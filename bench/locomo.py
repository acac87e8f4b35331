"""LoCoMo, the public benchmark of long multi-session conversations (snap-research/locomo,
`data/locomo10.zip`), read into our events and labelled questions. Pure: no request.

Each conversation becomes one user (`locomo-<id>`); each turn an event, the speaker's
name before its text and a shared photo's caption after it, stamped 30 s apart from
its session's date; its id is LoCoMo's own (`D3:5`: session 3, turn 5). A question
names the turns that answer it (`evidence`). Categories 1 to 4 are asked (5, the
adversarial ones, have no answer in the conversation).

The data states no licence: it is read from a path, never committed or shipped.
"""

import json
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# Tuned and reported on; the others are held out: checked on, never run or tuned on.
DEV = (26, 30, 41, 42, 43)
HELD_OUT = (44, 47, 48, 49, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TURN_SPACING = timedelta(seconds=30)
_SESSION = re.compile(r"session_(\d+)")
_DATE = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]  # event ids (`D3:5`) of the turns that answer it

    @property
    def sessions(self) -> frozenset[str]:
        return frozenset(session_of(turn) for turn in self.evidence)


@dataclass(frozen=True)
class Conversation:
    id: int
    user_id: str
    events: list[dict[str, Any]]
    questions: list[Question]


def session_of(turn_id: str) -> str:
    """`D3:5` -> `session_3`: the session a turn belongs to."""
    return f"session_{turn_id.split(':')[0].removeprefix('D')}"


def load(path: Path, ids: tuple[int, ...]) -> list[Conversation]:
    """The conversations `ids` of LoCoMo at `path`: the zip, a folder of its JSON files,
    or one JSON file. Raises `FileNotFoundError` naming a conversation that is not there."""
    files = dict(_json_files(path))
    missing = [i for i in ids if i not in files]
    if missing:
        raise FileNotFoundError(
            f"{path} holds no conversation {missing[0]} (it has {sorted(files)})."
        )
    return [conversation(i, files[i]) for i in ids]


def _json_files(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist (give locomo10.zip or its JSON files)")
    if path.is_file() and path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            for name in archive.namelist():
                if name.endswith(".json") and Path(name).stem.isdigit():
                    yield int(Path(name).stem), json.loads(archive.read(name))
    elif path.is_dir():
        for file in sorted(path.rglob("*.json")):
            if file.stem.isdigit():
                yield int(file.stem), json.loads(file.read_text(encoding="utf-8"))
    elif path.stem.isdigit():
        yield int(path.stem), json.loads(path.read_text(encoding="utf-8"))
    else:
        raise ValueError(f"{path.name} is not a conversation of LoCoMo's (named <id>.json)")


def conversation(conversation_id: int, data: dict[str, Any]) -> Conversation:
    user = f"locomo-{conversation_id}"
    events: list[dict[str, Any]] = []
    for key, turns in data.items():
        match = _SESSION.fullmatch(key)
        if match is None or not isinstance(turns, list) or not turns:
            continue
        start = datetime.strptime(data[f"{key}_date_time"], _DATE).replace(tzinfo=UTC)
        for n, turn in enumerate(turns):
            events.append(
                {
                    "event_id": turn["dia_id"],
                    "user_id": user,
                    "session_id": key,
                    "timestamp": (start + n * TURN_SPACING).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "type": "user_message",
                    "text": text_of(turn),
                }
            )
    questions = [
        Question(q["question"], int(q["category"]), tuple(q["evidence"]))
        for q in data.get("qa", [])
        if int(q.get("category", 0)) in CATEGORIES and q.get("evidence")
    ]
    return Conversation(conversation_id, user, events, questions)


def text_of(turn: dict[str, Any]) -> str:
    """The speaker's name before the text (it names who did what: removing it cost
    0.07 recall), and a shared photo's caption after it."""
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


@dataclass(frozen=True)
class Scores:
    """One question's scores, from the event ids found, best first."""

    recall_at_5: float
    recall_at_10: float
    hit_at_10: float
    session_hit_at_1: float
    session_hit_at_5: float


def scores(found: list[str], question: Question) -> Scores:
    """Turn recall@k: the share of the evidence turns among the first k hits; hit@10:
    any of them in the first 10; session hit@k: a session holding evidence among the
    first k sessions, each ranked by its best hit."""
    evidence = set(question.evidence)
    sessions: list[str] = []
    for turn in found:
        session = session_of(turn)
        if session not in sessions:
            sessions.append(session)
    return Scores(
        recall_at_5=len(evidence & set(found[:5])) / len(evidence),
        recall_at_10=len(evidence & set(found[:10])) / len(evidence),
        hit_at_10=float(bool(evidence & set(found[:10]))),
        session_hit_at_1=float(bool(question.sessions & set(sessions[:1]))),
        session_hit_at_5=float(bool(question.sessions & set(sessions[:5]))),
    )


def mean(rows: list[Scores]) -> Scores:
    count = max(len(rows), 1)
    return Scores(
        *(sum(getattr(row, name) for row in rows) / count for name in Scores.__dataclass_fields__)
    )
