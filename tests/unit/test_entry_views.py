"""How entries look on the thread page: avatars, times, a reply folded into its answer."""

from threads import entries as E
from threads.entry_views import avatar, item_context, page_items, when
from threads.narration import Name, Names

BOT, MIA = "ag_bot", "ag_mia"
NAMES = Names({BOT: Name("Helper (demo model)", "helper", True), MIA: Name("Mia Wong", "mia")})


def entry(n, payload, author=None):
    return E.Entry(id=f"e{n}", ts=1_700_000_000_000 + n * 1000, payload=payload, authorId=author)


def test_avatars_have_initials_and_a_colour_that_stays_with_the_id():
    assert avatar(MIA, NAMES[MIA]) == avatar(MIA, NAMES[MIA])
    assert avatar(MIA, NAMES[MIA])["initials"] == "MW"
    assert avatar(BOT, NAMES[BOT]) | {"hue": 0} == {"initials": "HD", "hue": 0, "bot": True}
    hues = {avatar(f"ag_{i}", NAMES[MIA])["hue"] for i in range(200)}
    assert len(hues) > 10 and all(0 <= h < 18 for h in hues)


def test_times_fall_back_to_utc():
    assert when(0) == {
        "iso": "1970-01-01T00:00:00Z",
        "short": "00:00 UTC",
        "full": "Thursday 1 January 1970, 00:00:00 UTC",
    }


def reply(n, *, answer=True, fail=False):
    started = E.DispatchStarted(dispatchId="d1", agentId=BOT, entryIds=["e1"], round=2)
    out = [
        entry(n, started, BOT),
        entry(n + 1, E.DispatchPhase(dispatchId="d1", phase="tool", round=2, tool="bash"), BOT),
        entry(n + 2, E.PiAssistant(dispatchId="d1", message={"content": []}), BOT),
    ]
    if answer:
        out.append(entry(n + 3, E.Chat(text="done"), BOT))
        out.append(entry(n + 4, E.DispatchFinished(dispatchId="d1", spend=E.Spend(totalTokens=9))))
    if fail:
        out.append(entry(n + 3, E.DispatchFailed(stage="model", error="boom", dispatchId="d1")))
    return out


def views(entries):
    return [v for i in page_items(entries) if (v := item_context(i, NAMES))]


def test_an_answered_reply_is_one_message_with_a_footer():
    shown = views([entry(1, E.Chat(text="@helper hi"), MIA), *reply(2)])
    assert [v["kind"] for v in shown] == ["chat", "chat"]
    assert shown[1]["reply"]["spend"] == "9 tokens"
    assert shown[1]["reply"]["dispatch"] == "d1" and len(shown[1]["reply"]["transcript"]) == 1


def test_a_reply_in_progress_is_one_line_saying_what_it_does():
    shown = views([entry(1, E.Chat(text="@helper hi"), MIA), *reply(2, answer=False)])
    assert [v["kind"] for v in shown] == ["chat", "reply"]
    assert shown[1]["line"] == "is running bash" and "failed" not in shown[1]


def test_a_failed_reply_is_one_line():
    shown = views([entry(1, E.Chat(text="@helper hi"), MIA), *reply(2, answer=False, fail=True)])
    assert [v["kind"] for v in shown] == ["chat", "reply"]
    assert shown[1]["failed"]


def test_director_outcomes_never_follow_chat():
    outcome = E.DirectorOutcome(upTo="e1", picked=[], reason="No bot was mentioned.")
    shown = views([entry(1, E.Chat(text="hi"), MIA), entry(2, outcome)])
    assert [v["kind"] for v in shown] == ["chat"]


def run(n, *, end="finished"):
    """A delegated run on its own thread: the run's Pi entries carry its run id."""
    state = lambda s: E.ThreadRunState(runId="r1", state=s, agentId=BOT)  # noqa: E731
    out = [
        entry(n, state("claimed"), BOT),
        entry(n + 1, state("running"), BOT),
        entry(n + 2, E.DispatchPhase(dispatchId="r1", phase="tool", round=1, tool="bash"), BOT),
        entry(n + 3, E.PiAssistant(dispatchId="r1", message={"content": []}), BOT),
    ]
    if end == "finished":
        out.append(entry(n + 4, E.Chat(text="report"), BOT))
    out.append(entry(n + 5, state(end), BOT))
    return out


def test_a_run_on_its_thread_reads_as_a_reply_folded_into_its_report():
    shown = views(run(1))
    assert [v["kind"] for v in shown] == ["signal", "chat", "signal"]
    assert shown[0]["line"].startswith("Run @helper claimed")
    assert shown[1]["reply"]["dispatch"] == "r1" and len(shown[1]["reply"]["transcript"]) == 1
    assert shown[2]["line"] == "Run @helper finished"


def test_a_failed_run_is_its_one_failed_line():
    shown = views(run(1, end="failed"))
    assert [v["kind"] for v in shown] == ["signal", "reply"]
    assert shown[1]["failed"] == "Run @helper failed"


def test_live_a_runs_entries_find_the_place_its_page_gives_them():
    """Live fragments target what the running state's fragment made: its transcript, its
    line, its failure (a page loaded later folds the same entries the same way)."""
    from threads.fragments import entry_fragments

    parts = dict(entry_fragments(run(1, end="failed"), NAMES, "t1"))
    assert 'id="tr-r1"' in parts["e2"] and 'id="rp-r1"' in parts["e2"]
    assert "#tr-r1" in parts["e4"]
    assert 'id="rp-r1" hx-swap-oob="true"' in parts["e3"]
    assert 'id="rl-r1"' in parts["e6"] and "Run @helper failed" in parts["e6"]


def test_a_window_ending_mid_run_takes_its_failure_from_past_its_end():
    entries = run(1, end="failed")
    window, lookahead = entries[:4], entries[4:]
    shown = [v for i in page_items(window, lookahead=lookahead) if (v := item_context(i, NAMES))]
    assert [v["kind"] for v in shown] == ["signal", "reply"]
    assert shown[1]["failed"] == "Run @helper failed"
