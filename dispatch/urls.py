from django.urls import path

from dispatch import demo_model

urlpatterns = [
    path("demo-model/v1/chat/completions", demo_model.chat_completions, name="demo-model"),
]
