from django.urls import path

from quizsite.agents import views as agent_views

from . import views

app_name = "research"
urlpatterns = [
    path("", views.index, name="index"),
    path("fits/", views.fit_list, name="fit_list"),
    path("fits/new/", views.fit_new, name="fit_new"),
    path("fits/compare/", views.fit_compare, name="fit_compare"),
    path("fits/<int:pk>/", views.fit_detail, name="fit_detail"),
    path("fits/<int:pk>/progress.json", views.fit_progress, name="fit_progress"),
    path("fits/<int:pk>/cancel/", views.fit_cancel, name="fit_cancel"),
    path("fits/<int:pk>/activate/", views.fit_activate, name="fit_activate"),
    path("fits/<int:pk>/labels/", views.fit_labels, name="fit_labels"),
    path("fits/<int:pk>/plots/<slug:name>.svg", views.fit_plot, name="fit_plot"),
    path("fits/<int:pk>/items/", views.fit_items, name="fit_items"),
    path("fits/<int:pk>/items/<int:item_pk>/", views.fit_item, name="fit_item"),
    path("reports/", views.reports, name="reports"),
    path("romqa/", views.romqa, name="romqa"),
    path("reports/<int:pk>/resolve/", views.report_resolve, name="report_resolve"),
]
urlpatterns += [
    path("exports/", views.export_page, name="exports"),
    path("exports/responses.<slug:fmt>", views.export_responses, name="export_responses"),
    path("exports/caimira.zip", views.export_caimira, name="export_caimira"),
    path("exports/fits/<int:pk>/<slug:what>.<slug:fmt>", views.export_fit, name="export_fit"),
]

# AI agents (quizsite/agents/views.py): listed here so they sit under /research/ with the fits.
urlpatterns += [
    path("agents/", agent_views.agent_list, name="agent_list"),
    path("agents/runs/<int:pk>/", agent_views.agent_run, name="agent_run"),
    path("agents/runs/<int:pk>/progress.json", agent_views.agent_run_progress, name="agent_run_progress"),
    path("agents/runs/<int:pk>/cancel/", agent_views.agent_run_cancel, name="agent_run_cancel"),
    path("agents/runs/<int:pk>/resume/", agent_views.agent_run_resume, name="agent_run_resume"),
    path("agents/<slug:name>/", agent_views.agent_detail, name="agent_detail"),
]
