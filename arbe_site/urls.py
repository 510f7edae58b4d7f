from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("threads.urls")),
    path("", include("threads.page_urls")),
    path("", include("houses.urls")),
    path("", include("dispatch.urls")),
    path("", include("boards.urls")),
    path("", include("search.urls")),
]
