"""The answer to `POST /v1/events`, written in one pass, is the documented model."""

from hypothesis import given
from hypothesis import strategies as st

from session_recall.http.events import EventsResponse, answer_body
from session_recall.indexer import EventResult, Status
from session_recall.indexer.results import SCOPE_ERASED

results = st.builds(
    EventResult,
    status=st.sampled_from(Status),
    event_id=st.none() | st.text(max_size=20),
    reason=st.none() | st.sampled_from([SCOPE_ERASED, "text: too long"]) | st.text(max_size=20),
)


@given(st.lists(results, max_size=30))
def test_the_answer_is_the_response_model_without_nones_and_422_when_one_is_refused(results):
    status, content = answer_body(results)
    model = EventsResponse(
        results=results,
        indexed=sum(r.status is Status.INDEXED for r in results),
        already_present=sum(r.status is Status.ALREADY_PRESENT for r in results),
        rejected=sum(r.status is Status.REJECTED for r in results),
        erased=sum(r.erased for r in results),
    )
    assert content == model.model_dump_json(exclude_none=True).encode()
    assert status == (422 if model.rejected else 200)
