from django.urls import path

from threads import api, privacy_api, stream_proxy

urlpatterns = [
    path("api/threads", api.thread_list, name="api-threads"),
    path("api/threads/<str:thread_id>", api.thread, name="api-thread"),
    path("api/threads/<str:thread_id>/entries", api.entries, name="api-entries"),
    path("api/threads/<str:thread_id>/entries/<str:entry_id>", api.entry, name="api-entry"),
    path(
        "api/threads/<str:thread_id>/entries/<str:entry_id>/reactions",
        api.reactions,
        name="api-reactions",
    ),
    path("api/threads/<str:thread_id>/private", privacy_api.private, name="api-private"),
    path("api/threads/<str:thread_id>/members", privacy_api.members, name="api-thread-members"),
    path(
        "api/threads/<str:thread_id>/members/<str:agent_id>",
        privacy_api.member,
        name="api-thread-member",
    ),
    path("api/threads/<str:thread_id>/runs", api.runs, name="api-runs"),
    path("api/threads/<str:thread_id>/now", api.thread_now, name="api-now"),
    path("api/threads/<str:thread_id>/stream", stream_proxy.thread_stream, name="api-stream"),
    path("api/houses/<slug:slug>/threads", api.house_threads, name="api-house-threads"),
    path("api/houses/<slug:slug>/direct", privacy_api.direct, name="api-direct"),
    path("api/stream/<path:name>", stream_proxy.sandbox_stream, name="api-sandbox-stream"),
]
