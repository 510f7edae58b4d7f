from django.urls import path

from threads import jump, views

urlpatterns = [
    path("threads/jump", jump.jump, name="thread-jump"),
    path("threads/<str:thread_id>/", views.thread_page, name="thread"),
    path("threads/<str:thread_id>/runs", views.delegate_run, name="thread-run"),
    path("threads/<str:thread_id>/window", views.thread_window, name="thread-window"),
]
