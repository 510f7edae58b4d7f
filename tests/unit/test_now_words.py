"""The Now panel speaks in plain words: a delegated run's phase and step."""

from threads.now import Run
from threads.templatetags.arbe_now import run_doing


def test_a_run_says_what_it_is_doing_and_which_step():
    assert run_doing(Run(runId="r1", state="running")) == "is running a task"
    assert run_doing(Run(runId="r1", state="running", phase="thinking")) == (
        "is running a task · thinking"
    )
    assert run_doing(Run(runId="r1", state="running", phase="tool", round=2)) == (
        "is running a task · running a tool, step 2"
    )
    assert "round" not in run_doing(Run(runId="r1", state="running", phase="answering", round=3))
