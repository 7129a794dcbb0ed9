from django.urls import path

from . import manage_views, views

app_name = "annotate"
urlpatterns = [
    path("", views.index, name="index"),
    path("manage/", manage_views.campaign_list, name="manage"),
    path("manage/new/", manage_views.campaign_new, name="manage_new"),
    path("manage/<slug:slug>/", manage_views.campaign_detail, name="manage_detail"),
    path("manage/<slug:slug>/toggle/", manage_views.campaign_toggle, name="manage_toggle"),
    path("manage/<slug:slug>/score/", manage_views.campaign_score, name="manage_score"),
    path("manage/<slug:slug>/invitations/", manage_views.campaign_invitations, name="manage_invitations"),
    path("manage/<slug:slug>/authored/<int:pk>/", manage_views.authored_review, name="manage_review"),
    path("<slug:slug>/", views.start, name="start"),
    path("<slug:slug>/instructions/", views.instructions, name="instructions"),
    path("<slug:slug>/item/", views.item, name="item"),
    path("<slug:slug>/feedback/", views.feedback, name="feedback"),
    path("<slug:slug>/done/", views.done, name="done"),
]
