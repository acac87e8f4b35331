"""What a pass did, counted: the summary line `embed` prints, and what a follower and
`/readyz` read of it."""

from pydantic import BaseModel


class EnrichmentSummary(BaseModel):
    """Counts of a pass. `missing` is how many events were pending at its start."""

    model: str | None = None
    missing: int = 0
    enriched: int = 0
    vectors: int = 0  # events the model processed (with a vector or none to give)
    no_vector: int = 0  # nothing to embed in the text (punctuation alone, say)
    refused: int = 0  # texts the model refused on their own: marked without a vector
    neighbours: int = 0  # turns enriched before whose context gained a turn stored late
    gone: int = 0  # erased while the pass ran
    conflicts: int = 0  # written meanwhile by another writer: left for the next pass
    failed: int = 0
    embedder_error: str | None = None
    first_refusal: str | None = None
    interrupted: bool = False  # a backfill that gave way to events stored meanwhile

    @property
    def done(self) -> int:
        return self.enriched + self.gone + self.failed + self.conflicts

    @property
    def stalled(self) -> bool:
        """The pass left work it could not do: a follower pauses before the next."""
        no_progress = self.missing > 0 and self.done == 0 and not self.interrupted
        return bool(self.failed or self.conflicts or self.embedder_error or no_progress)

    def line(self) -> str:
        what = f"stems, context, vectors of {self.model}" if self.model else "stems, context"
        text = f"{self.missing} event(s) awaited enrichment ({what}); {self.enriched} enriched"
        if self.no_vector:
            text += f" ({self.no_vector} with nothing to embed)"
        if self.refused:
            text += (
                f", {self.refused} text(s) refused by the model, kept without a vector "
                f"(first reason: {self.first_refusal})"
            )
        if self.neighbours:
            text += f", {self.neighbours} neighbour(s) updated"
        if self.gone:
            text += f", {self.gone} erased meanwhile"
        if self.conflicts:
            text += f", {self.conflicts} changed meanwhile (left for the next pass)"
        if self.failed:
            text += f", {self.failed} failed (run it again)"
        if self.embedder_error:
            text += (
                f"; the embedder failed ({self.embedder_error}): run `session-recall embed` "
                "once it answers, for the vectors"
            )
        return text + "."
