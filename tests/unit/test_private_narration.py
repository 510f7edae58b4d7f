"""The lines a private thread's access entries read as in its log."""

from threads import entries as E
from threads.narration import Name, Names, narration

NAMES = Names(
    {
        "ag_o": Name("Olive", "olive"),
        "ag_m": Name("Mia", "mia"),
        "ag_a": Name("Ari", "ari"),
    }
)


def test_access_entries_read_as_lines():
    made = E.ThreadMadePrivate(memberIds=["ag_o", "ag_m"])
    assert narration(made, NAMES, "ag_o") == "Olive made this thread private for Mia, Olive."
    direct = E.ThreadMadePrivate(memberIds=["ag_o", "ag_m"], direct=True)
    assert narration(direct, NAMES, "ag_m") == "Only Mia, Olive read this direct conversation."
    assert narration(E.ThreadMemberAdded(agentId="ag_a"), NAMES, "ag_o") == "Olive added Ari."
    removed = E.ThreadMemberRemoved(agentId="ag_a")
    assert narration(removed, NAMES, "ag_o") == "Olive removed Ari."
    assert narration(removed, NAMES, "ag_a") == "Ari left this thread."


def test_a_long_member_list_is_counted():
    many = E.ThreadMadePrivate(memberIds=[f"ag_{i:02d}" for i in range(14)])
    assert narration(many, NAMES, "ag_o").endswith(" and 4 more.")
