from django.urls import path

from archives import views

urlpatterns = [
    path("houses/<slug:slug>/settings/export", views.export_section, name="house-export"),
    path(
        "houses/<slug:slug>/settings/export/<int:job_id>.zip",
        views.download,
        name="house-export-download",
    ),
]
