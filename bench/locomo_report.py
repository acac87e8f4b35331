"""The "memory_search on LoCoMo" section of BENCHMARKS.md, written whole by one command:

    python -m bench.memory_eval --locomo PATH/locomo10.zip --report BENCHMARKS.md \\
        --embedders static,minilm,bge-small

Every row comes from a run of this plan, each labelled with what it varied (the
embedder, the keyword list's field weights as `--boosts` takes them, the context reach
as `--context-reach` takes it, the vector list's weight, the ranking steps as
`--variants` takes them):

- the default: the default embedder, its keyword list and context reach; each mode, and
  hybrid at each weight of `WEIGHTS[embedder]` and at the weight chosen leaving each
  conversation out;
- the keyword list, one change at a time: some fields left out, or another reach
  (each reach is a store and an enrichment of its own, the context being written then);
- each other embedder named: semantic and hybrid at its own weight, left out in turn,
  and the ranking variants of `locomo_experiments.OTHER_VARIANTS`;
- the ranking experiments of `locomo_experiments.RUNS` whose embedder is the default or
  named, each a run of its own, and the table of everything tried drawn from them all.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench import locomo, locomo_experiments, machine, memory_eval
from bench.configuration import default_embedder
from session_recall.config import Settings
from session_recall.recall.fusion import dense_weight_for

# The vector weights each embedder is tried at (its own weight among them).
WEIGHTS = {
    "static": (0.1, 0.2, 0.3, 0.4),
    "e5-small": (0.3, 0.4, 0.5, 0.6),
    "minilm": (0.3, 0.4, 0.5, 0.6),
    "bge-small": (0.3, 0.4, 0.5, 0.6),
}
_DEFAULT_WEIGHTS = (0.2, 0.3, 0.4, 0.5)
_SCORES = ("recall_at_5", "recall_at_10", "hit_at_10", "session_hit_at_1", "session_hit_at_5")


@dataclass(frozen=True)
class Variant:
    """One change to the keyword list: field weights (only those given change) and the
    context reach (None: the default's)."""

    name: str
    boosts: dict[str, float] = field(default_factory=dict)
    reach: int | None = None

    def flags(self, default_reach: int) -> str:
        boosts = ",".join(f"{k}={v:g}" for k, v in self.boosts.items())
        parts = [f"--boosts {boosts}"] if boosts else []
        if self.reach is not None and self.reach != default_reach:
            parts.append(f"--context-reach {self.reach}")
        return " ".join(f"`{p}`" for p in parts) or "(the default)"


VARIANTS = (
    Variant("the text alone", {"text": 1, "stems": 0, "context": 0}),
    Variant("text and stems, alike", {"text": 1, "stems": 1, "context": 0}),
    Variant("the stems alone", {"text": 0, "stems": 1, "context": 0}),
    Variant("text and context of one turn, alike", {"text": 1, "stems": 0, "context": 1}, 1),
    Variant("the default's weights, context of one turn", reach=1),
    Variant("the default's weights, context of two turns", reach=2),
    Variant("the default: text, stems and context"),
    Variant("the default's weights, context of five turns", reach=5),
)


def run(
    client: Any,
    settings: Settings,
    conversations: list[locomo.Conversation],
    embedders: Sequence[str],
    log: Any,
) -> dict[str, Any]:
    """Every run of the plan, as plain values for `section`."""
    default = default_embedder()
    default_reach = memory_eval.reach_module().CONTEXT_REACH
    found: dict[str, Any] = {
        "machine": machine.describe(client),
        "conversations": [c.id for c in conversations],
        "turns": sum(len(c.events) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "default_embedder": default,
        "default_reach": default_reach,
        "embedders": {},
        "variants": [],
    }
    by_reach: dict[int | None, list[Variant]] = {}
    for variant in VARIANTS:  # the default's reach is its store's
        reach = None if variant.reach == default_reach else variant.reach
        by_reach.setdefault(reach, []).append(variant)
    for name in [default, *(e for e in embedders if e != default)]:
        log(f"LoCoMo with the embedder {name}")
        with (
            memory_eval.context_reach(None),
            memory_eval.loaded(client, _with(settings, name), conversations, log=log) as store,
        ):
            ours = name == default
            results = memory_eval.ask(
                store,
                conversations,
                ("keyword", "semantic", "hybrid") if ours else ("semantic", "hybrid"),
                weights=WEIGHTS.get(name, _DEFAULT_WEIGHTS),
                variants=() if ours else _other_variants(name),
                log=log,
            )
            found["embedders"][name] = {
                "model": store.model,
                "weight": dense_weight_for(store.model),
                "enrichment_events_per_s": store.enrichment_events_per_s,
                "results": results,
            }
            if name == default:
                for variant in by_reach.pop(None, []):
                    found["variants"].append(_variant(store, variant, conversations))
    for reach, variants in by_reach.items():
        log(f"LoCoMo, context reach {reach}")
        with (
            memory_eval.context_reach(reach),
            memory_eval.loaded(client, _with(settings, default), conversations, log=log) as store,
        ):
            found["variants"] += [_variant(store, v, conversations) for v in variants]
    found["variants"].sort(key=lambda entry: VARIANTS.index(entry["variant"]))
    asked_for = {default, *embedders}.__contains__
    found["runs"] = locomo_experiments.run(client, settings, conversations, asked_for, log)
    found["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    return found


def _other_variants(embedder: str) -> tuple[str, ...]:
    return locomo_experiments.OTHER_VARIANTS.get(
        embedder, locomo_experiments.OTHER_VARIANTS_DEFAULT
    )


def _with(settings: Settings, embedder: str) -> Settings:
    return settings.model_copy(update={"embedder": embedder})


def _variant(
    store: memory_eval.Loaded, variant: Variant, conversations: list[locomo.Conversation]
) -> dict[str, Any]:
    with memory_eval.keyword_boosts(variant.boosts):
        result = memory_eval.score(store.searchers, conversations, "keyword")
    return {"variant": variant, "result": result}


def section(found: dict[str, Any], command: str) -> str:
    where = found["machine"]
    default, reach = found["default_embedder"], found["default_reach"]
    ids = ", ".join(map(str, found["conversations"]))
    held = sorted(set(found["conversations"]) & set(locomo.HELD_OUT))
    lines = [
        memory_eval.START,
        "## memory_search on LoCoMo",
        "",
        f"Written by `{command}` on {where['date']} ({where['cpu_model']}, "
        f"{where['cores_logical']} cores shared with the node; load average "
        f"{where['load_average_start']} at start, {found['load_average_end']} at end; "
        f"revision {where.get('revision', 'not recorded')}). LoCoMo conversations {ids}: "
        f"{found['turns']:,} turns, {found['questions']:,} questions of categories 1 to 4. "
        + (
            f"The held-out conversations {held} are among them."
            if held
            else "The held-out conversations were not run."
        ),
        "",
        "Each conversation is stored as one user, through the writer, and enriched (stems, "
        "context and the embedder's vectors); each question is asked through "
        f"`MemorySearcher` with {memory_eval.LIMIT} hits. *Left out in turn*: each "
        "conversation scored at the weight that gave the others the best turn recall@10.",
        "",
    ]
    ours = found["embedders"][default]
    lines += [
        f"### The default: `{default}` ({ours['model']}), context reach {reach}",
        "",
        *_table(_rows(ours, with_keyword=True)),
        "",
        _categories(ours["results"], ours["results"]["keyword"]),
        "",
        "### The keyword list, one change at a time",
        "",
        f"The same questions in keyword mode, with the `{default}` embedder's enrichment; "
        "`--boosts` sets the fields' weights (0: that field's matches score nothing), "
        "`--context-reach` how many turns of its session an event's context holds.",
        "",
        "| keyword list | flags | turn recall@10 | session hit@1 |",
        "| --- | --- | ---: | ---: |",
    ]
    for entry in found["variants"]:
        variant, overall = entry["variant"], entry["result"]["overall"]
        lines.append(
            f"| {variant.name} | {variant.flags(reach)} | {overall.recall_at_10:.3f} "
            f"| {overall.session_hit_at_1:.3f} |"
        )
    others = {k: v for k, v in found["embedders"].items() if k != default}
    if others:
        lines += [
            "",
            "### Other embedders",
            "",
            "| embedder | mode | turn recall@5 | turn recall@10 | hit@10 | session hit@1 "
            "| session hit@5 | p50 ms |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, entry in others.items():
            lines += [f"| `{name}` |{row[1:]}" for row in _table(_rows(entry))[2:]]
        keyword = ours["results"]["keyword"]
        lines += [
            "",
            *(_categories(entry["results"], keyword, name) for name, entry in others.items()),
        ]
    lines += [
        "",
        "Enrichment pass over the turns (stems, context and vectors, beside the node on the "
        "same cores), events/s: "
        + ", ".join(
            f"`{name}` {entry['enrichment_events_per_s']:,.0f}"
            for name, entry in found["embedders"].items()
        )
        + " (one pass each).",
        "",
    ]
    stores = {name: entry["results"] for name, entry in others.items()}
    stores["default"] = ours["results"]
    lines += locomo_experiments.section(stores, found["runs"], found["conversations"])
    lines.append(memory_eval.END)
    return "\n".join(lines) + "\n"


def _rows(entry: dict[str, Any], *, with_keyword: bool = False) -> list[tuple[str, Any]]:
    results, weight = entry["results"], entry["weight"]
    rows = [("keyword (text, stems, context)", results["keyword"])] if with_keyword else []
    rows += [
        ("semantic", results["semantic"]),
        (f"**hybrid, vector weight {weight:g} (its own)**", results["hybrid"]),
    ]
    rows += [
        (f"hybrid, weight {key.split('=', 1)[1]}", result)
        for key, result in results.items()
        if key.startswith("hybrid w=")
    ]
    if "hybrid, weight left one out" in results:
        rows.append(("hybrid, weight left out in turn", results["hybrid, weight left one out"]))
    return rows


def _table(rows: list[tuple[str, Any]]) -> list[str]:
    lines = [
        "| mode | turn recall@5 | turn recall@10 | hit@10 | session hit@1 | session hit@5 "
        "| p50 ms |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, result in rows:
        overall = result["overall"]
        cells = " | ".join(f"{getattr(overall, s):.3f}" for s in _SCORES)
        lines.append(f"| {name} | {cells} | {result['p50_ms']:.1f} |")
    return lines


def _categories(results: dict[str, Any], keyword: dict[str, Any], embedder: str = "") -> str:
    """Hybrid against the default's keyword mode, per category (turn recall@10)."""
    who = f"`{embedder}` hybrid" if embedder else "hybrid"
    return (
        f"Per category, turn recall@10, {who} / keyword: "
        + ", ".join(
            f"{locomo.CATEGORIES[c]} {s.recall_at_10:.3f} / "
            f"{keyword['categories'][c].recall_at_10:.3f}"
            for c, s in results["hybrid"]["categories"].items()
        )
        + "."
    )
