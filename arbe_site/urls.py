from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

# The admin's tables (threads, raw entries) need the width more than a second app menu.
admin.site.enable_nav_sidebar = False

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("threads.urls")),
    path("", include("threads.page_urls")),
    path("", include("houses.urls")),
    path("", include("dispatch.urls")),
    path("", include("boards.urls")),
    # Browsers ask for /favicon.ico whatever the page links.
    path("favicon.ico", RedirectView.as_view(url="/static/arbe/favicon.svg", permanent=True)),
    path("", include("search.urls")),
    path("", include("notify.urls")),
    path("", include("attachments.urls")),
]
