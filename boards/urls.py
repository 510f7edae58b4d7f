from django.urls import path

from boards import views

urlpatterns = [
    path("houses/<slug:slug>/board/", views.board_page, name="board"),
    path("houses/<slug:slug>/board/rows/<int:pk>/", views.row_detail, name="board-row"),
]
