from django.urls import path

from houses import views

urlpatterns = [
    path("", views.home, name="home"),
    path("houses/<slug:slug>/", views.house_page, name="house"),
]
