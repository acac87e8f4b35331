"""memory_search on LoCoMo: how well each mode finds the turns that answer a question.

    export ELASTICSEARCH_URL=$(session-recall node start | tail -n1)
    python -m bench.memory_eval --locomo PATH/locomo10.zip                # the dev split
    python -m bench.memory_eval --locomo PATH --conversations 26,30 --modes keyword
    python -m bench.memory_eval --locomo PATH --modes keyword --context-reach 1 --boosts text=1
    python -m bench.memory_eval --locomo PATH --report BENCHMARKS.md --embedders static,minilm

Each conversation is stored as one user, through the writer and the configured
embedder (`SESSION_RECALL_EMBEDDER`, e5-small by default), into an alias of
its own that is dropped afterwards (`--keep` keeps it). Each question is then asked
through `MemorySearcher` with that user, ten hits, in each mode; the report gives turn
recall@5 and @10, hit@10, session hit@1 and @5 (sessions ranked by their best hit),
per category and overall, and each mode's p50 latency.

With `--weights 0.1,0.2,...`, hybrid mode is also run at each weight of the vector
list (see `recall.fusion`), and each conversation is scored at the weight the others
choose (best turn recall@10 over them): leave-one-conversation-out, the weight a model
would be given without seeing the conversation it is measured on. `--weights-variant
NAME` does so with the recipe of a `--variants` entry (`z`, say) instead of the default.

With `--variants`, hybrid mode is also run with each ranking recipe named (see
`bench.ranking_steps`), each a `+`-joined list of steps:

    session[:WEIGHT[:TOP]]            session-level scoring (default 0.3, 3)
    prf[:TERMS[:DOCS[:WEIGHT]]]       pseudo-relevance feedback (default 10, 5, 0.3)
    hop[:SEEDS[:WEIGHT]]              a second vector round seeded by the first hits
                                      (default 3, 0.5)
    near[:WEIGHT]                     each vector hit mixed with the turns before it
                                      in the list (default 0.3)
    svec[:WEIGHT]                     a vector per session, the mean of its turns'
                                      (needs --session-vectors; default 0.3)
    ctx / ctx-only                    context vectors beside / instead of the turn's own
                                      (needs --context-vectors REACH)
    z                                 the two lists fused on z-scores
                                      (`bench.zscore_fusion`), not min-max
    srank[:ALPHA[:WEIGHT]]            the published session ranking
                                      (`recall.session_ranking`): each session's BM25
                                      over its document and its best turn, z-scored,
                                      mixed in at WEIGHT (default: memory_search's;
                                      WEIGHT 0: off, 1: sessions first)
    srankx[:ALPHA[:WEIGHT]]           the same, the best turn over every turn (exact)
    ent[:WEIGHT]                      the question's names and numbers weighed up in
                                      the keyword list (default 0.5)
    clauses                           a keyword list per clause of the question
    w=WEIGHT                          the vector list's weight
    base                              memory_search's default recipe

e.g. `--variants base,session,prf,session+prf`: every row from one stored alias. With
`--context-vectors REACH`, each turn's vector with the REACH turns before it is stored
beside its own (`bench.locomo_context`) after the enrichment pass.

`--boosts` and `--context-reach` vary the keyword list: its fields' weights, and how
many turns before an event its context holds (set for the enrichment pass this process
runs). `--report` runs the whole plan of `bench/locomo_report.py` and writes the
"memory_search on LoCoMo" section of the report from it: no row of it is typed in.

The conversations of `locomo.HELD_OUT` are refused unless `--held-out` is given: they
are checked on, never run or tuned on.
"""

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import locomo, locomo_context, sections
from bench.ranking_steps import DEFAULT_EXPERIMENT, Experiment
from session_recall.client import make_client
from session_recall.config import Settings
from session_recall.factories import embedder_for
from session_recall.indexer import Event, Submission, Writer, enrich
from session_recall.indexer.enrichment import context_rule as _context
from session_recall.recall import Searchers, memory_query
from session_recall.templates import install, uninstall

MODES = ("keyword", "semantic", "hybrid")
# Its section of BENCHMARKS.md, written from this harness's tables; `bench.run` keeps it
# when it rewrites the rest.
START = "<!-- memory_search on LoCoMo: from python -m bench.memory_eval, its commands below -->"
END = "<!-- /memory_search on LoCoMo -->"
LIMIT = 10  # memory_search's default: what an agent's tool call gets
_KEY = b"bench-memory-eval-cursor-key-32b"


def reach_module() -> Any:
    """The module whose `CONTEXT_REACH` the enrichment pass reads at each use (the
    context rule's), so that setting it there reaches the passes run afterwards."""
    return _context


@contextmanager
def context_reach(reach: int | None) -> Iterator[int]:
    """The context reach of the enrichment passes run meanwhile in this process (None:
    the release's own); yields the reach in force."""
    module = reach_module()
    before = int(module.CONTEXT_REACH)
    module.CONTEXT_REACH = before if reach is None else reach
    try:
        yield int(module.CONTEXT_REACH)
    finally:
        module.CONTEXT_REACH = before


@contextmanager
def keyword_boosts(boosts: dict[str, float]) -> Iterator[None]:
    """memory_search's keyword list with these field weights, meanwhile."""
    before = dict(memory_query.KEYWORD_BOOSTS)
    memory_query.KEYWORD_BOOSTS.update(boosts)
    try:
        yield
    finally:
        memory_query.KEYWORD_BOOSTS.clear()
        memory_query.KEYWORD_BOOSTS.update(before)


def kept_section(document: str) -> str | None:
    """This harness's section of an existing report, if any."""
    return sections.kept(document, start=START, end=END)


def replace_section(document: str, text: str) -> str:
    return sections.replace(document, text, start=START, end=END)


@dataclass(frozen=True)
class Loaded:
    """The conversations stored in an alias and enriched: its searchers, the enrichment
    pass's rate, and the model ids of the experiments' vectors stored beside (None:
    not stored)."""

    searchers: Searchers
    model: str
    enrichment_events_per_s: float
    context_model: str | None = None
    context_turns_per_s: float | None = None
    session_model: str | None = None


def evaluate(
    client: Any,
    settings: Settings,
    conversations: list[locomo.Conversation],
    modes: Sequence[str],
    *,
    keep: bool = False,
    weights: Sequence[float] = (),
    variants: Sequence[str] = (),
    weights_variant: str | None = None,
    choose: bool = False,
    context_vectors: int = 0,
    session_vectors: bool = False,
    log: Any = print,
) -> dict[str, Any]:
    """Store the conversations in a fresh alias, ask every question in every mode and
    each variant, and return the mean scores per mode (overall and per category) with
    p50 latency."""
    with loaded(
        client, settings, conversations, keep=keep, context_vectors=context_vectors,
        session_vectors=session_vectors, log=log,
    ) as store:  # fmt: skip
        return ask(
            store, conversations, modes, weights=weights, variants=variants,
            weights_variant=weights_variant, choose=choose, log=log,
        )  # fmt: skip


def ask(
    store: Loaded,
    conversations: list[locomo.Conversation],
    modes: Sequence[str],
    *,
    weights: Sequence[float] = (),
    variants: Sequence[str] = (),
    weights_variant: str | None = None,
    choose: bool = False,
    log: Any = print,
) -> dict[str, Any]:
    """Every question asked of a stored run in each mode, then in hybrid mode with each
    variant (keyed `hybrid NAME`; with `choose`, each conversation also with the variant
    the others choose, by session hit@1 plus turn recall@10, the two measures of the
    goal) and at each weight (`hybrid w=W`, and the
    weight left one out), with the recipe of `weights_variant` when given."""
    results = {mode: score(store.searchers, conversations, mode) for mode in modes}
    per_variant: dict[str, dict[int, dict[str, Any]]] = {}
    for name in variants:
        recipe, weight = variant(name, store.context_model, store.session_model)
        per_variant[name] = {
            c.id: score(store.searchers, [c], "hybrid", dense_weight=weight, recipe=recipe)
            for c in conversations
        }
        results[f"hybrid {name}"] = _merged(list(per_variant[name].values()))
    if choose and len(variants) > 1 and len(conversations) > 1:
        chosen = {
            held.id: max(
                variants,
                key=lambda n, held_id=held.id: sum(
                    _measure_without(per_variant[n], held_id, measure)
                    for measure in ("session_hit_at_1", "recall_at_10")
                ),
            )
            for held in conversations
        }
        log(f"leave-one-out variants: {chosen}")
        results["hybrid, variant left one out"] = _merged(
            [per_variant[chosen[c.id]][c.id] for c in conversations]
        )
    if weights:
        recipe = None
        if weights_variant is not None:
            recipe, _ = variant(weights_variant, store.context_model, store.session_model)
        found = leave_one_out(store.searchers, conversations, weights, log, recipe=recipe)
        suffix = f" ({weights_variant})" if weights_variant else ""
        results.update({f"{name}{suffix}": result for name, result in found.items()})
    return results


def alias_for(token: str) -> str:
    """The alias of one run: `r` before the random token, as `setup` refuses a dash
    before a digit (the indices of `bench-locomo` would be named so)."""
    return f"bench-locomo-r{token}"


@contextmanager
def loaded(
    client: Any,
    settings: Settings,
    conversations: list[locomo.Conversation],
    *,
    keep: bool = False,
    context_vectors: int = 0,
    session_vectors: bool = False,
    log: Any = print,
) -> Iterator[Loaded]:
    """The conversations stored through the writer in a fresh alias and enriched with
    the configured embedder, with each turn's context vector (`context_vectors`: its
    reach; 0: none) and each session's vector beside, when asked for; the alias is
    dropped afterwards unless `keep`."""
    alias = alias_for(uuid.uuid4().hex[:8])
    embedder = embedder_for(settings)
    install(client, alias)
    try:
        events = [Event.model_validate(e) for c in conversations for e in c.events]
        writer = Writer(client, alias)
        refused = [
            w.result for w in writer.write(Submission(e) for e in events) if not w.result.stored
        ]
        if refused:
            raise RuntimeError(f"{len(refused)} events were refused, the first: {refused[0]}")
        writer.refresh()
        if embedder is not None and hasattr(embedder, "load"):
            embedder.load()  # the model's start-up is not the pass's rate
        started = time.perf_counter()
        enrich(client, alias, embedder)
        seconds = time.perf_counter() - started
        writer.refresh()
        log(f"stored {len(events)} turns of {len(conversations)} conversation(s) in {alias}")
        model = embedder.model_id if embedder is not None else "no embedder"
        log(f"enrichment pass ({model}): {len(events) / seconds:,.0f} events/s ({seconds:.1f} s)")
        users = [c.user_id for c in conversations]
        context, rate, session_model = None, None, None
        if context_vectors and embedder is not None:
            context, rate = locomo_context.store(
                client, alias, embedder, users, reach=context_vectors
            )
            log(f"context vectors ({context}): embedded at {rate:,.0f} turns/s")
        if session_vectors and embedder is not None:
            session_model = locomo_context.store_sessions(client, alias, embedder, users)
            log(f"session vectors ({session_model}): the mean of each session's turns")
        yield Loaded(
            Searchers(client, alias, _KEY, embedder=embedder), model, len(events) / seconds,
            context_model=context, context_turns_per_s=rate, session_model=session_model,
        )  # fmt: skip
    finally:
        if not keep:
            uninstall(client, alias)


def variant(
    name: str,
    context_model: str | None,
    session_model: str | None = None,
) -> tuple[Experiment, float | None]:
    """The recipe and vector weight a `--variants` entry names (see the module's doc).
    Raises `ValueError` saying what is wrong with it."""
    recipe, weight = DEFAULT_EXPERIMENT, None
    for part in name.split("+"):
        step, *values = part.strip().split(":")
        numbers = [float(v) for v in values]
        if step == "base" and not numbers:
            continue
        if step.startswith("w="):
            weight = float(step[2:])
        elif step == "session" and len(numbers) <= 2:
            share, top = (numbers + [0.3, 3.0][len(numbers) :])[:2]
            recipe = replace(recipe, session_weight=share, session_top=int(top))
        elif step == "prf" and len(numbers) <= 3:
            terms, docs, share = (numbers + [10.0, 5.0, 0.3][len(numbers) :])[:3]
            recipe = replace(
                recipe, expansion_terms=int(terms), expansion_docs=int(docs),
                expansion_weight=share,
            )  # fmt: skip
        elif step == "svec" and len(numbers) <= 1:
            if session_model is None:
                raise ValueError("'svec' needs --session-vectors")
            recipe = replace(
                recipe, session_model=session_model, session_vector_weight=(numbers or [0.3])[0]
            )
        elif step == "near" and len(numbers) <= 1:
            recipe = replace(recipe, vector_context=(numbers or [0.3])[0])
        elif step == "hop" and len(numbers) <= 2:
            seeds, share = (numbers + [3.0, 0.5][len(numbers) :])[:2]
            recipe = replace(recipe, second_round=int(seeds), second_weight=share)
        elif step == "clauses" and not numbers:
            recipe = replace(recipe, clauses=True)
        elif step == "ent" and len(numbers) <= 1:
            recipe = replace(recipe, entity_weight=(numbers or [0.5])[0])
        elif step in ("srank", "srankx") and len(numbers) <= 2:
            alpha, share = numbers + [recipe.session_alpha, recipe.session_ranking][len(numbers) :]
            recipe = replace(
                recipe, session_alpha=alpha, session_ranking=share, session_exact=step == "srankx"
            )
        elif step == "z" and not numbers:
            recipe = replace(recipe, zscore=True)
        elif step in ("ctx", "ctx-only") and not numbers:
            if context_model is None:
                raise ValueError(f"{step!r} needs --context-vectors REACH")
            recipe = replace(recipe, context_model=context_model, context_only=step == "ctx-only")
        else:
            raise ValueError(
                f"{part!r} is not a step "
                "(session, prf, hop, near, svec, ctx, ctx-only, z, srank, srankx, ent, clauses, "
                "w=, base)"
            )
    return recipe, weight


def leave_one_out(
    searchers: Searchers,
    conversations: list[locomo.Conversation],
    weights: Sequence[float],
    log: Any,
    *,
    recipe: Experiment | None = None,
) -> dict[str, Any]:
    """Hybrid at each weight (with `recipe`, None: the default), then each conversation
    scored at the weight chosen on the others (best mean turn recall@10)."""
    per_weight = {
        w: {
            c.id: score(searchers, [c], "hybrid", dense_weight=w, recipe=recipe)
            for c in conversations
        }
        for w in weights
    }
    results: dict[str, Any] = {}
    for w, by_conversation in per_weight.items():
        results[f"hybrid w={w:g}"] = _merged(list(by_conversation.values()))
    if len(conversations) < 2:
        return results
    chosen = {
        held.id: max(
            weights, key=lambda w, held_id=held.id: _recall_without(per_weight[w], held_id)
        )
        for held in conversations
    }
    log(f"leave-one-out weights: {chosen}")
    results["hybrid, weight left one out"] = _merged(
        [per_weight[chosen[c.id]][c.id] for c in conversations]
    )
    return results


def _recall_without(by_conversation: dict[int, dict[str, Any]], held_id: int) -> float:
    """Mean turn recall@10 over every conversation but `held_id`."""
    return _measure_without(by_conversation, held_id, "recall_at_10")


def _measure_without(
    by_conversation: dict[int, dict[str, Any]], held_id: int, measure: str
) -> float:
    """The mean of `measure` (a field of `locomo.Scores`) over every conversation but
    `held_id`."""
    rows = [result for cid, result in by_conversation.items() if cid != held_id]
    return float(getattr(_merged(rows)["overall"], measure))


def _merged(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several `score` results as one, each question counting once."""
    rows = [row for part in parts for row in part["rows"]]
    took = [t for part in parts for t in part["took"]]
    return _summary(rows, took)


def score(
    searchers: Searchers,
    conversations: list[locomo.Conversation],
    mode: str,
    *,
    dense_weight: float | None = None,
    recipe: Experiment | None = None,
) -> dict[str, Any]:
    """Every question of `conversations` asked in `mode` (hybrid: with `recipe` and the
    vector list at `dense_weight`, each None for memory_search's own): the mean scores,
    overall and per category, and the p50 latency."""
    rows: list[tuple[int, locomo.Scores]] = []
    took: list[float] = []
    for conversation in conversations:
        searcher = searchers.memory(
            user_id=conversation.user_id, dense_weight=dense_weight, recipe=recipe
        )
        for question in conversation.questions:
            start = time.perf_counter()
            result = searcher.search(question.text[:1000], mode=mode, limit=LIMIT, context=0)
            took.append((time.perf_counter() - start) * 1000)
            found = [hit.event.event_id for hit in result.hits]
            rows.append((question.category, locomo.scores(found, question)))
    return _summary(rows, took)


def _summary(rows: list[tuple[int, locomo.Scores]], took: list[float]) -> dict[str, Any]:
    by_category = {c: [s for cat, s in rows if cat == c] for c in locomo.CATEGORIES}
    return {
        "overall": locomo.mean([s for _, s in rows]),
        "categories": {c: locomo.mean(r) for c, r in by_category.items() if r},
        "questions": len(rows),
        "p50_ms": statistics.median(took) if took else 0.0,
        "rows": rows,
        "took": took,
    }


def table(results: dict[str, Any]) -> str:
    """The report: a Markdown table, a row per mode and category."""
    lines = [
        "| mode | category | questions | turn recall@5 | turn recall@10 | hit@10 "
        "| session hit@1 | session hit@5 | p50 ms |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for mode, result in results.items():
        parts = [("all", result["overall"], result["questions"])]
        parts += [
            (locomo.CATEGORIES[c], scores, None) for c, scores in result["categories"].items()
        ]
        for name, s, count in parts:
            latency = f"{result['p50_ms']:.1f}" if name == "all" else ""
            lines.append(
                f"| {mode} | {name} | {count or ''} | {s.recall_at_5:.3f} | {s.recall_at_10:.3f} "
                f"| {s.hit_at_10:.3f} | {s.session_hit_at_1:.3f} | {s.session_hit_at_5:.3f} "
                f"| {latency} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory_eval", description=__doc__)
    parser.add_argument("--locomo", type=Path, required=True, help="locomo10.zip, or its JSON")
    parser.add_argument(
        "--conversations",
        default=",".join(map(str, locomo.DEV)),
        help="Conversation ids, comma-separated (default: the dev split).",
    )
    parser.add_argument("--modes", default=",".join(MODES), help="Modes, comma-separated.")
    parser.add_argument("--held-out", action="store_true", help="Allow the held-out split.")
    parser.add_argument("--keep", action="store_true", help="Keep the alias afterwards.")
    parser.add_argument(
        "--weights",
        default="",
        help="Vector weights for hybrid, comma-separated: each is run, and one is chosen "
        "per conversation leaving it out.",
    )
    parser.add_argument(
        "--choose",
        action="store_true",
        help="--variants: also score each conversation with the variant the others "
        "choose (best session hit@1 plus turn recall@10 over them).",
    )
    parser.add_argument(
        "--weights-variant",
        default=None,
        help="--weights: run them with this --variants entry's recipe (e.g. z).",
    )
    parser.add_argument(
        "--context-reach",
        type=int,
        metavar="N",
        help="How many turns before an event the enrichment puts into its context "
        "(default: the release's own).",
    )
    parser.add_argument(
        "--report",
        type=Path,
        metavar="BENCHMARKS.md",
        help="Run the whole plan of bench/locomo_report.py (the default, the keyword "
        "list's changes, --embedders, the ranking experiments) and write its section of "
        "this report; the plan sets the modes, weights, boosts, reach and variants itself.",
    )
    parser.add_argument(
        "--embedders",
        default="",
        help="--report: other embedders to run besides the default, comma-separated "
        "(e.g. static,minilm,bge-small, each fetched with `session-recall models fetch` "
        "first).",
    )
    parser.add_argument(
        "--boosts",
        default="",
        help="The keyword list's field weights to try, e.g. text=1,stems=1,context=0.5 "
        "(0 leaves a field out; default: memory_search's own).",
    )
    parser.add_argument(
        "--variants",
        default="",
        help="Ranking recipes to run in hybrid mode, comma-separated, each a +-joined "
        "list of steps: session[:W[:TOP]], prf[:TERMS[:DOCS[:W]]], hop[:SEEDS[:W]], near[:W], ctx, "
        "ctx-only, w=W, "
        "base (e.g. base,session,session+prf).",
    )
    parser.add_argument(
        "--context-vectors",
        type=int,
        default=0,
        metavar="REACH",
        help="Store each turn's vector with the REACH turns before it, for the ctx steps.",
    )
    parser.add_argument(
        "--session-vectors",
        action="store_true",
        help="Store a vector per session (the mean of its turns'), for the svec step.",
    )
    args = parser.parse_args(argv)
    try:
        boosts = {
            field.strip(): float(value)
            for field, _, value in (part.partition("=") for part in args.boosts.split(","))
            if field.strip()
        }
    except ValueError:
        parser.error(f"--boosts: {args.boosts!r} is not a list of field=number")
    unknown_fields = sorted(set(boosts) - set(memory_query.KEYWORD_BOOSTS))
    if unknown_fields:
        parser.error(f"--boosts: unknown fields {unknown_fields}")
    try:
        ids = tuple(int(part) for part in args.conversations.split(",") if part.strip())
    except ValueError:
        parser.error(f"--conversations: {args.conversations!r} is not a list of numbers")
    held = sorted(set(ids) & set(locomo.HELD_OUT))
    if held and not args.held_out:
        parser.error(
            f"conversations {held} are held out: they are checked on, never run or tuned "
            "on. Pass --held-out only to measure the final figure."
        )
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"--modes: unknown {unknown}; the modes are {', '.join(MODES)}")
    try:
        weights = [float(w) for w in args.weights.split(",") if w.strip()]
    except ValueError:
        parser.error(f"--weights: {args.weights!r} is not a list of numbers")
    if any(not 0 <= w <= 1 for w in weights):
        parser.error("--weights: each weight is within [0, 1]")
    variants = [name.strip() for name in args.variants.split(",") if name.strip()]
    context_name = "model+ctx" if args.context_vectors else None
    session_name = "model+session" if args.session_vectors else None
    for name in variants:
        try:
            variant(name, context_name, session_name)
        except ValueError as err:
            parser.error(f"--variants: {err}")
    if not 0 <= args.context_vectors <= 10:
        parser.error("--context-vectors: REACH is within 0 to 10 turns")
    if args.context_reach is not None and args.context_reach < 0:
        parser.error("--context-reach: a number of turns, 0 or more")
    embedders = [name.strip() for name in args.embedders.split(",") if name.strip()]
    own = {
        "--modes": args.modes != parser.get_default("modes"),
        "--weights": bool(weights),
        "--boosts": bool(boosts),
        "--context-reach": args.context_reach is not None,
        "--variants": bool(variants),
        "--choose": args.choose,
        "--context-vectors": bool(args.context_vectors),
        "--session-vectors": args.session_vectors,
        "--keep": args.keep,
    }
    if args.report is not None and any(own.values()):
        given = ", ".join(flag for flag, set_ in own.items() if set_)
        parser.error(f"--report runs its own plan: leave out {given}")
    if embedders and args.report is None:
        parser.error("--embedders goes with --report; set SESSION_RECALL_EMBEDDER for one run")
    try:
        conversations = locomo.load(args.locomo, ids)
    except (OSError, ValueError) as err:
        parser.error(f"--locomo: {err}")
    settings = Settings()
    if not settings.elasticsearch_url:
        parser.error(
            "set ELASTICSEARCH_URL first, e.g. export "
            "ELASTICSEARCH_URL=$(session-recall node start | tail -n1)"
        )
    client = make_client(settings)
    if args.report is not None:
        return _write_report(client, settings, conversations, embedders, args.report, argv)
    with context_reach(args.context_reach), keyword_boosts(boosts):
        results = evaluate(
            client, settings, conversations, modes, keep=args.keep, weights=weights,
            variants=variants, weights_variant=args.weights_variant, choose=args.choose,
            context_vectors=args.context_vectors,
            session_vectors=args.session_vectors, log=_to_stderr,
        )  # fmt: skip
    print(f"LoCoMo conversations {','.join(map(str, ids))}, {LIMIT} hits per question:\n")
    print(table(results))
    if "keyword" in results and "hybrid" in results:
        print(f"\n{_against_keyword(results['hybrid'], results['keyword'])}")
    return 0


def _write_report(
    client: Any,
    settings: Settings,
    conversations: list[locomo.Conversation],
    embedders: list[str],
    report: Path,
    argv: Sequence[str] | None,
) -> int:
    """The plan's runs, into the LoCoMo section of `report` (the rest is kept)."""
    from bench import locomo_report  # imported here: it builds on this module

    found = locomo_report.run(client, settings, conversations, embedders, _to_stderr)
    command = " ".join(["python -m bench.memory_eval", *_shown(argv or sys.argv[1:])])
    old = report.read_text(encoding="utf-8") if report.exists() else "# Benchmarks\n"
    report.write_text(replace_section(old, locomo_report.section(found, command)), "utf-8")
    _to_stderr(f"wrote the LoCoMo section of {report}")
    return 0


def _shown(argv: Sequence[str]) -> list[str]:
    """The arguments as the report shows them: where the data and the report are, by
    their names only."""
    shown, path_next = [], False
    for arg in argv:
        shown.append(f"PATH/{Path(arg).name}" if path_next else arg)
        path_next = arg in ("--locomo", "--report")
    return shown


def _to_stderr(text: str) -> None:
    """Progress goes to stderr, so that stdout holds the report alone."""
    print(text, file=sys.stderr)


def _against_keyword(fused: dict[str, Any], keyword: dict[str, Any]) -> str:
    """Whether hybrid holds turn recall@10 within 0.01 of keyword's in every category."""
    behind = {
        locomo.CATEGORIES[c]: round(keyword["categories"][c].recall_at_10 - s.recall_at_10, 3)
        for c, s in fused["categories"].items()
        if s.recall_at_10 < keyword["categories"][c].recall_at_10 - 0.01
    }
    if behind:
        return f"hybrid is behind keyword by more than 0.01 in: {behind}"
    return "hybrid is within 0.01 of keyword, or ahead, in every category (turn recall@10)."


if __name__ == "__main__":
    sys.exit(main())
