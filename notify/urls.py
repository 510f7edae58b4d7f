from django.urls import path

from notify import inbox_views, views

urlpatterns = [
    # Notification settings belong with the account's pages (/account/).
    path("account/notifications/", views.settings_page, name="notify-settings"),
    path(
        "account/notifications/devices/<int:pk>/remove",
        views.remove_device,
        name="notify-remove-device",
    ),
    path("api/notify/devices", views.device_api, name="api-notify-devices"),
    path("api/notify/devices/forget", views.forget_device_api, name="api-notify-forget"),
    path("threads/<str:thread_id>/notify", views.set_thread_mode, name="thread-notify"),
    path("houses/<slug:slug>/notify", views.set_house_mode, name="house-notify"),
    path("sw.js", views.service_worker, name="service-worker"),
    path("inbox/", inbox_views.inbox_page, name="inbox"),
    path("inbox/read", inbox_views.mark_all_read_form, name="inbox-read"),
    path("api/inbox", inbox_views.inbox_api, name="api-inbox"),
    path("api/inbox/read", inbox_views.inbox_read_api, name="api-inbox-read"),
]
