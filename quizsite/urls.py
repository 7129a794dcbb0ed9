from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from quizsite.core import views as core_views

urlpatterns = [
    path("", RedirectView.as_view(url="/play/", permanent=False), name="home"),
    path("healthz", core_views.healthz, name="healthz"),
    path("favicon.ico", RedirectView.as_view(url=f"{settings.STATIC_URL}favicon.svg", permanent=False)),
    path("play/", include("quizsite.play.urls")),
    path("annotate/", include("quizsite.annotate.urls")),
    path("research/", include("quizsite.research.urls")),
    path("api/", include("quizsite.research.api")),
    path("accounts/", include("quizsite.accounts.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
]
