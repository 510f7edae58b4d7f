from django.urls import path

from threads import jump, privacy_pages, views

urlpatterns = [
    path("threads/jump", jump.jump, name="thread-jump"),
    path("threads/<str:thread_id>/", views.thread_page, name="thread"),
    path("threads/<str:thread_id>/runs", views.delegate_run, name="thread-run"),
    path("threads/<str:thread_id>/window", views.thread_window, name="thread-window"),
    path("threads/<str:thread_id>/private", privacy_pages.private_form, name="thread-private"),
    path(
        "threads/<str:thread_id>/members/add",
        privacy_pages.add_member_form,
        name="thread-add-member",
    ),
    path(
        "threads/<str:thread_id>/members/<str:agent_id>/remove",
        privacy_pages.remove_member_form,
        name="thread-remove-member",
    ),
    path("houses/<slug:slug>/direct", privacy_pages.direct_form, name="open-direct"),
]
