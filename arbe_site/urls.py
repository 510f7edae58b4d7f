from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.generic import RedirectView

from houses import password_reset

# The admin's tables (threads, raw entries) need the width more than a second app menu.
admin.site.enable_nav_sidebar = False

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # "Forgot password?" (houses.password_reset): Django's views and names, our pages.
    path("login/forgot/", password_reset.PasswordReset.as_view(), name="password_reset"),
    path(
        "login/forgot/sent", password_reset.PasswordResetDone.as_view(), name="password_reset_done"
    ),
    path(
        "login/reset/<uidb64>/<token>/",
        password_reset.PasswordResetConfirm.as_view(),
        name="password_reset_confirm",
    ),
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
    path("", include("archives.urls")),
]
