"""dispatch.run_files: which files a run's report may carry, read without leaving the workspace."""

import os

from dispatch.run_files import carried, changed_files, files_in, read_inside


def test_reading_never_follows_a_symlink_at_any_depth(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("key")
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "plan.md").write_text("plan")
    os.symlink(outside / "secret", work / "leak")
    os.symlink(outside, work / "linked")
    os.mkfifo(work / "pipe")
    assert read_inside(str(work), "notes/plan.md", 100) == b"plan"
    assert read_inside(str(work), "leak", 100) is None
    assert read_inside(str(work), "linked/secret", 100) is None
    assert read_inside(str(work), "pipe", 100) is None  # not a regular file; never blocks
    assert read_inside(str(work), "notes", 100) is None
    assert read_inside(str(work), "../outside/secret", 100) is None
    assert read_inside(str(work), "notes/plan.md", 3) is None  # over the limit
    assert read_inside(str(work), "gone.txt", 100) is None


def test_a_report_carries_new_and_changed_work_not_tools_or_hidden_files(tmp_path, settings):
    settings.ARBE_ATTACHMENTS_MAX_BYTES = 10
    before = {"kept.txt": (1, 4), "edited.txt": (1, 4), "removed.txt": (1, 4)}
    after = {
        "kept.txt": (1, 4),
        "edited.txt": (2, 5),
        "new/report.md": (3, 6),
        ".cache/x": (3, 1),
        "node_modules/p/i.js": (3, 1),
        "empty": (3, 0),
        "huge.bin": (3, 11),
    }
    assert carried(before, after) == ["edited.txt", "new/report.md"]
    assert changed_files(before, after)[:3] == [".cache/x", "edited.txt", "empty"]
    assert "removed.txt" in changed_files(before, after)


def test_the_walk_never_enters_a_linked_folder(tmp_path):
    (tmp_path / "a").write_text("1")
    os.symlink("/etc", tmp_path / "etc")
    os.symlink("/etc/hostname", tmp_path / "host")
    assert set(files_in(tmp_path)) == {"a", "host"}
