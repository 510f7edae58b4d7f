"""A Slack workspace export written for the tests: several channels, a private channel, a
direct conversation, a thread of replies, edits, reactions, a file, a bot's message, a
deleted user, Slack's own notices and odd mrkdwn."""

import json
import zipfile

USERS = [
    {
        "id": "U1",
        "name": "alice",
        "real_name": "Alice A",
        "profile": {"email": "alice@example.org", "display_name": "Alice"},
    },
    {"id": "U2", "name": "bob", "profile": {"real_name": "Bob B"}},
    {"id": "U3", "name": "carol", "deleted": True, "profile": {"real_name": "Carol (gone)"}},
    {"id": "B1", "name": "deploybot", "is_bot": True, "profile": {"real_name": "Deploy bot"}},
]
CHANNELS = [
    {
        "id": "C1",
        "name": "general",
        "created": 1699990000,
        "creator": "U1",
        "members": ["U1", "U2", "U3"],
    },
    {
        "id": "C2",
        "name": "random",
        "created": 1699990000,
        "creator": "U2",
        "members": ["U1", "U2"],
        "is_archived": True,
    },
]
GROUPS = [{"id": "G1", "name": "secret-plans", "creator": "U1", "members": ["U1", "U2"]}]
DMS = [{"id": "D1", "members": ["U1", "U2"]}]


def general(file_url: str) -> list[dict]:
    return [
        {
            "type": "message",
            "subtype": "channel_join",
            "user": "U2",
            "text": "<@U2> has joined the channel",
            "ts": "1700000000.000100",
        },
        {
            "type": "message",
            "user": "U1",
            "text": "Hi <@U2>, see <#C2|random> and <https://example.org/doc|the doc> &lt;now&gt;",
            "ts": "1700000001.000200",
            "reactions": [
                {"name": "thumbsup", "users": ["U2", "U3"], "count": 2},
                {"name": "partyparrot", "users": ["U2"], "count": 1},
            ],
        },
        {
            "type": "message",
            "user": "U2",
            "text": "*bold* and ~gone~ and `code *stays*`",
            "ts": "1700000002.000300",
            "edited": {"user": "U2", "ts": "1700000009.000000"},
            "thread_ts": "1700000002.000300",
            "reply_count": 1,
        },
        {
            "type": "message",
            "user": "U1",
            "text": "a reply in the thread",
            "ts": "1700000003.000400",
            "thread_ts": "1700000002.000300",
            "parent_user_id": "U2",
        },
        {
            "type": "message",
            "subtype": "bot_message",
            "bot_id": "B1",
            "username": "deploybot",
            "text": "Deployed *v2*",
            "ts": "1700000004.000500",
        },
        {
            "type": "message",
            "user": "U3",
            "text": "from someone who left",
            "ts": "1700000005.000600",
        },
        {
            "type": "message",
            "user": "U1",
            "text": "the chart",
            "ts": "1700000006.000700",
            "files": [
                {
                    "id": "F1",
                    "name": "chart.png",
                    "mimetype": "image/png",
                    "size": 100,
                    "url_private": file_url,
                    "url_private_download": file_url,
                }
            ],
        },
        {
            "type": "message",
            "subtype": "tombstone",
            "user": "USLACKBOT",
            "text": "This message was deleted.",
            "ts": "1700000007.000800",
        },
    ]


def write_export(
    path, file_url: str = "https://files.slack.example/F1/chart.png", *, broken: str = ""
) -> None:
    days = {
        "general/2023-11-14.json": json.dumps(general(file_url), indent=1),
        "random/2023-11-14.json": json.dumps(
            [
                {"type": "message", "user": "U2", "text": "old chatter", "ts": "1700000010.000000"},
                {
                    "type": "message",
                    "user": "U9",
                    "text": "a guest from a shared channel",
                    "ts": "1700000010.500000",
                },
            ],
            indent=1,
        ),
        "secret-plans/2023-11-14.json": json.dumps(
            [{"type": "message", "user": "U1", "text": "private words", "ts": "1700000011.000000"}],
            indent=1,
        ),
        "D1/2023-11-14.json": json.dumps(
            [{"type": "message", "user": "U2", "text": "psst <@U1>", "ts": "1700000012.000000"}],
            indent=1,
        ),
    }
    if broken:
        days["general/2023-11-15.json"] = broken
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("users.json", json.dumps(USERS))
        z.writestr("channels.json", json.dumps(CHANNELS))
        z.writestr("groups.json", json.dumps(GROUPS))
        z.writestr("dms.json", json.dumps(DMS))
        for name, body in days.items():
            z.writestr(name, body)
