from django.urls import path

from attachments import views

urlpatterns = [
    path("api/threads/<str:thread_id>/attachments", views.upload, name="api-attachments"),
    path(
        "api/threads/<str:thread_id>/entries/<str:entry_id>/files",
        views.purge,
        name="api-purge-files",
    ),
    path(
        "attachments/<str:thread_id>/<str:attachment_id>/<str:part>",
        views.fetch,
        name="attachment",
    ),
]
