from django.urls import path

from search import api, views

urlpatterns = [
    path("search/", views.search_page, name="search"),
    path("api/search", api.search, name="api-search"),
]
