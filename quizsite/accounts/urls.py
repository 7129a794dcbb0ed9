from django.urls import path

from . import views

app_name = "accounts"
urlpatterns = [
    path("profile/", views.profile, name="profile"),
    path("profile/responses.<slug:fmt>", views.download, name="download"),
    path("profile/token/", views.token_create, name="token_create"),
    path("profile/token/revoke/", views.token_revoke, name="token_revoke"),
    path("delete/", views.delete, name="delete"),
]
