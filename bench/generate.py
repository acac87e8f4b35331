"""Deterministic session events as NDJSON, in the format `session-recall ingest` reads.

One heavy user has `heavy_events` events over about `heavy_events / 100` sessions; many
light users, each with a few contacts in one inbox, add `light_share` as many again.
Words follow a Zipf law over a vocabulary of real chat words and made-up ones; a share
of messages is Chinese (no spaces, as written); message lengths are log-normal, short
for users and longer for assistants. Timestamps use every form the indexer accepts (no
fraction, 1 to 9 digits, Z or an offset), so sorting their text would give a wrong order.

The same arguments always give the same bytes, and memory stays constant: events are
written as they are made.

    python -m bench.generate --events 100000 --out bench/out/events-100k.ndjson
"""

import argparse
import itertools
import math
import random
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from session_recall.core.instant import Instant

SEED = 20260701
HEAVY_USER = "heavy-user"
EVENTS_PER_SESSION = 100
LIGHT_SHARE = 0.1
# The 1M history spans about six years from here, so it ends before today: ingest
# refuses events more than a day ahead of now (`EventLimits.max_ahead_seconds`).
START = Instant.parse("2020-01-06T08:00:00Z")

# The recall workload. The words sit at fixed Zipf ranks (below), so their frequency is
# known: "any" matches about a fifth of the events, which leaves more than 1,000 pages of
# ten at 100k events; "all" matches well under one percent.
QUERY_ANY = "budget, deadline, we decided, 预算"
QUERY_ALL = "budget, deadline"
PHRASE = "we decided"
PHRASE_SHARE = 0.03


def _words(text: str) -> list[str]:
    return text.split()


_HEAD = _words(
    "the i you to a and it is that for of we in on can this with be what do have my "
    "budget not it's so just are if me your at but about how was deadline there will all "
    "one like get would know please thanks need should time make from could up them want "
    "out think go some any when new also more then yes no okay sure next week today"
)
_ZIPF_S = 1.0
_VOCABULARY_SIZE = 20_000
_CJK_WORDS = _words(
    "我们 预算 会议 决定 项目 时间 客户 问题 今天 明天 需要 可以 东京 航班 酒店 报告 "
    "数据 团队 计划 文件 下周 价格 合同 邮件 确认 安排 讨论 修改 发送 检查"
)
_CJK_SHARE = 0.04
_TOOLS = ("calendar.create", "search.web", "crm.lookup", "mail.send", "files.read")
_CONVERSATION_TYPES = ("chat", "chat", "chat", "email", "whatsapp", "sms")
_INBOXES = 25
_ZONES = ((0, "Z"), (19_800, "+05:30"), (-25_200, "-07:00"), (3_600, "+01:00"))
_NANOS = 1_000_000_000


@dataclass(frozen=True)
class Summary:
    """What was written; `heavy_first`/`heavy_last` bound the heavy user's history."""

    path: Path
    events: int
    heavy_events: int
    heavy_sessions: int
    light_users: int
    light_events: int
    heavy_first: Instant
    heavy_last: Instant
    bytes: int
    seconds: float

    def since_for_tail(self, share: float) -> Instant:
        """The instant after which the newest `share` of the heavy history lies."""
        span = self.heavy_last.nanos - self.heavy_first.nanos
        return Instant(self.heavy_last.nanos - int(span * share))


def _vocabulary(rng: random.Random) -> list[str]:
    consonants = "bdfghklmnprstvz"
    vowels = "aeiou"
    syllables = [c + v for c in consonants for v in vowels]
    words = list(_HEAD)
    seen = set(words)
    while len(words) < _VOCABULARY_SIZE:
        word = "".join(rng.choice(syllables) for _ in range(rng.choice((2, 2, 3, 3, 4))))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _zipf_cumulative(size: int) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank**_ZIPF_S) for rank in range(1, size + 1)))


class _Writer:
    """Makes messages and timestamps; holds the random state and the vocabularies."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.cumulative = _zipf_cumulative(len(self.words))
        self.cjk_cumulative = _zipf_cumulative(len(_CJK_WORDS))

    def _sample(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def _length(self, median: float, sigma: float, low: int, high: int) -> int:
        return max(low, min(high, round(self.rng.lognormvariate(math.log(median), sigma))))

    def text(self, kind: str) -> str:
        rng = self.rng
        if kind == "tool_call":
            args = " ".join(self._sample(self._length(3, 0.5, 1, 12)))
            return f"{rng.choice(_TOOLS)}(query='{args}')"
        user = kind == "user_message"
        if rng.random() < _CJK_SHARE:
            count = self._length(8 if user else 20, 0.6, 2, 120)
            return "".join(rng.choices(_CJK_WORDS, cum_weights=self.cjk_cumulative, k=count))
        count = self._length(9, 0.7, 1, 120) if user else self._length(28, 0.8, 2, 400)
        words = self._sample(count)
        if user and rng.random() < PHRASE_SHARE:
            words.insert(rng.randrange(len(words) + 1), PHRASE)
        words[0] = words[0].capitalize()
        return " ".join(words) + ("?" if user and rng.random() < 0.3 else ".")

    def timestamp(self, nanos: int) -> tuple[str, int]:
        """The text of `nanos` in a random accepted form, and the instant it names."""
        rng = self.rng
        form = rng.random()
        seconds, fraction = divmod(nanos, _NANOS)
        if form < 0.15:
            digits = ""
            fraction = 0
        elif form < 0.55:
            fraction -= fraction % 1_000_000
            digits = f".{fraction // 1_000_000:03d}"
        elif form < 0.70:
            fraction -= fraction % 1_000
            digits = f".{fraction // 1_000:06d}"
        elif form < 0.85:
            digits = f".{fraction:09d}"
        else:
            fraction -= fraction % 100_000_000
            digits = f".{fraction // 100_000_000}"
        offset, zone = _ZONES[0] if rng.random() < 0.9 else rng.choice(_ZONES[1:])
        whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds + offset))
        return f"{whole}{digits}{zone}", seconds * _NANOS + fraction

    def next_kind(self, previous: str | None) -> str:
        if previous == "user_message":
            return "tool_call" if self.rng.random() < 0.3 else "assistant_message"
        if previous == "tool_call":
            return "assistant_message"
        return "user_message"


def events(
    heavy_events: int, *, light_share: float = LIGHT_SHARE, seed: int = SEED
) -> Iterator[dict[str, Any]]:
    """The events, in the order they are written. Yields nothing the caller must keep."""
    writer = _Writer(seed)
    rng = writer.rng
    light_target = round(heavy_events * light_share)
    light_users = max(20, light_target // 20)
    clock = START.nanos
    heavy_done = light_done = 0
    heavy_session = 0
    sequence = itertools.count()
    while heavy_done < heavy_events:
        heavy_session += 1
        clock += int(rng.expovariate(1 / (4 * 3600)) * _NANOS) + 60 * _NANOS
        length = min(heavy_events - heavy_done, rng.randint(20, 2 * EVENTS_PER_SESSION - 20))
        previous = None
        for _ in range(length):
            clock += rng.randint(1, 90) * _NANOS + rng.randrange(_NANOS)
            kind = writer.next_kind(previous)
            previous = kind
            stamp, _ = writer.timestamp(clock)
            event: dict[str, Any] = {
                "event_id": f"h{next(sequence):09d}",
                "user_id": HEAVY_USER,
                "session_id": f"hs-{heavy_session:06d}",
                "timestamp": stamp,
                "type": kind,
                "text": writer.text(kind),
            }
            if kind == "assistant_message" and rng.random() < 0.2:
                event["metadata"] = {"model": "m-large", "latency_ms": rng.randint(200, 9000)}
            yield event
        heavy_done += length
        # Light sessions keep pace with the heavy user, so the file stays roughly in time order.
        while light_done < light_target * heavy_done / heavy_events:
            light_done += yield from _light_session(writer, clock, light_users, sequence)


def _light_session(
    writer: _Writer, clock: int, light_users: int, sequence: Iterator[int]
) -> Generator[dict[str, Any], None, int]:
    """One light user's session; returns how many events it had."""
    rng = writer.rng
    user = rng.randrange(light_users)
    first = next(sequence)
    contact = f"contact-{user:05d}-{rng.randrange(3)}"
    inbox = f"inbox-{user % _INBOXES:02d}"
    conversation_type = _CONVERSATION_TYPES[user % len(_CONVERSATION_TYPES)]
    session = f"ls-{user:05d}-{first:09d}"
    at = clock + rng.randrange(4 * 3600) * _NANOS
    previous = None
    length = rng.randint(4, 50)
    for position in range(length):
        at += rng.randint(2, 300) * _NANOS + rng.randrange(_NANOS)
        kind = writer.next_kind(previous)
        previous = kind
        stamp, _ = writer.timestamp(at)
        yield {
            "eventId": f"l{first if position == 0 else next(sequence):09d}",
            "userId": f"light-{user:05d}",
            "sessionId": session,
            "timestamp": stamp,
            "type": kind,
            "text": writer.text(kind),
            "contactId": contact,
            "inboxId": inbox,
            "conversationType": conversation_type,
        }
    return length


def generate(
    path: Path, heavy_events: int, *, light_share: float = LIGHT_SHARE, seed: int = SEED
) -> Summary:
    """Write the events to `path` (replacing it) and say what was written."""
    started = time.perf_counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    counts = {"all": 0, "heavy": 0, "sessions": 0}
    session = None
    light_users: set[str] = set()  # bounded by the pool of light users, not by the events
    first = last = None
    with path.open("wb", buffering=1 << 20) as out:
        for event in events(heavy_events, light_share=light_share, seed=seed):
            out.write(orjson.dumps(event))
            out.write(b"\n")
            counts["all"] += 1
            if event.get("user_id") == HEAVY_USER:
                counts["heavy"] += 1
                if event["session_id"] != session:  # a session's events are contiguous
                    session = event["session_id"]
                    counts["sessions"] += 1
                instant = Instant.parse(event["timestamp"])
                first = instant if first is None else first
                last = instant
            else:
                light_users.add(event["userId"])
    assert first is not None and last is not None, "no heavy event was generated"
    return Summary(
        path=path,
        events=counts["all"],
        heavy_events=counts["heavy"],
        heavy_sessions=counts["sessions"],
        light_users=len(light_users),
        light_events=counts["all"] - counts["heavy"],
        heavy_first=first,
        heavy_last=last,
        bytes=path.stat().st_size,
        seconds=time.perf_counter() - started,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, required=True, help="the heavy user's events")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--light-share", type=float, default=LIGHT_SHARE)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    summary = generate(args.out, args.events, light_share=args.light_share, seed=args.seed)
    print(
        f"{summary.events:,} events ({summary.heavy_events:,} for {HEAVY_USER} over "
        f"{summary.heavy_sessions:,} sessions, {summary.light_events:,} for "
        f"{summary.light_users:,} light users), {summary.bytes / 1e6:.1f} MB "
        f"in {summary.seconds:.1f} s -> {summary.path}"
    )


if __name__ == "__main__":
    main()
