"""v1.35: reservations wait at the Permit barrier and are all released at exactly t + 300 s."""

from tests.scheduler.scenario import job, lowest_index, node, replay_rows, story

PLACEMENT = ("started", "reserved", "finished", "timed_out", "preempted", "requeued")


def test_gang_v135_permit_timeout_releases_reservations_at_exactly_300s(tmp_path):
    rows = replay_rows(
        tmp_path,
        [node("n1"), node("n2")],
        [job("busy", 0, 5000), job("gang", 10, 500, pods=2)],
        lowest_index("gang-v1.35"),
    )
    gang = [s for s in story(rows, events=PLACEMENT) if s[2] == "gang"]
    assert gang[:3] == [
        (10.0, "reserved", "gang", 0, "n2"),
        (310.0, "timed_out", "gang", 0, "n2"),
        (310.0, "requeued", "gang", None, None),
    ]
    timed_out = next(r for r in rows if r["event"] == "timed_out")
    assert timed_out["reason"] == "GangPermitTimeout"
    assert "1 of 2 required pods placed within 300s" in timed_out["message"]
    # After the busy pod leaves, the gang is reserved in full and runs.
    assert (5000.0, "started", "gang", 1, "n1") in gang or (5000.0, "started", "gang", 0, "n1") in gang
