"""Read-only JSON API for researchers: responses, items, agents, fit runs and their parameters.

Token authentication (`Authorization: Token <key>`; a researcher makes or revokes their own on their
profile page, /accounts/profile/; `python manage.py drf_create_token <username>` works too) or the browser
session. Only researchers may read, by the
rule of `quizsite.core.roles` (a superuser or a member of the `researcher` group; staff alone is not enough). Humans are pseudonymous everywhere: agents are identified
by `public_id`, human names never appear. OpenAPI schema: /api/schema/; in the browser: /api/docs/.
"""

from __future__ import annotations

from django.db.models import QuerySet
from django.urls import include, path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, extend_schema_view
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework import permissions, routers, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.response import Response as ApiResponse

from quizsite.agents.models import Agent
from quizsite.core.roles import is_researcher, researcher_required
from quizsite.items.models import Item, Response

from . import analyses, services
from .models import FitAgent, FitItem, FitRun
from .prepare import DataSpec, responses_selected, with_campaign_and_practice, with_latest_override
from .selectors import data_spec_names_check


class IsResearcher(permissions.BasePermission):
    message = "Researchers only (a superuser or a member of the 'researcher' group)."

    def has_permission(self, request, view) -> bool:
        return is_researcher(request.user)


class Pages(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class ById(CursorPagination):
    """Cursor pages in id order: stable and cheap however large the responses table grows."""

    ordering = "id"
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


# --- serializers ---------------------------------------------------------------------------------------


class ResponseSerializer(serializers.ModelSerializer):
    """The columns of the `responses` export (DATA.md), with the latest override, then campaign and practice
    appended, as the export appends them (the same annotations: `prepare.with_campaign_and_practice`)."""

    response_id = serializers.IntegerField(source="id")
    agent_id = serializers.CharField(source="agent.public_id")
    agent_kind = serializers.CharField(source="agent.kind")
    agent_name = serializers.SerializerMethodField()
    item_id = serializers.CharField(source="item.external_id")
    item_set = serializers.CharField(source="item.item_set.slug")
    item_kind = serializers.CharField(source="item.kind")
    tossup_id = serializers.SerializerMethodField()
    override_verdict = serializers.CharField(allow_null=True, read_only=True)
    override_correct = serializers.BooleanField(allow_null=True, read_only=True)
    override_by = serializers.CharField(allow_null=True, read_only=True)
    override_at = serializers.DateTimeField(allow_null=True, read_only=True)
    campaign = serializers.CharField(read_only=True, help_text="annotation campaign slug; empty for other rows")
    practice = serializers.BooleanField(read_only=True, help_text="an annotation practice answer (only with include_practice)")

    class Meta:
        model = Response
        fields = [
            "response_id", "created_at", "agent_id", "agent_kind", "agent_name", "item_id", "item_set", "item_kind",
            "tossup_id", "clue_index", "word_index", "n_words", "elapsed_ms", "duration_ms", "given", "choices", "verdict",
            "correct", "score", "points", "room", "source",
            "override_verdict", "override_correct", "override_by", "override_at",
            "campaign", "practice",
        ]

    @extend_schema_field(OpenApiTypes.STR)
    def get_agent_name(self, obj: Response) -> str:
        return obj.agent.name if obj.agent.kind == Agent.Kind.AI else obj.agent.public_id

    @extend_schema_field(OpenApiTypes.STR)
    def get_tossup_id(self, obj: Response) -> str | None:
        if obj.item.kind == Item.Kind.TOSSUP:
            return obj.item.external_id
        orig = obj.item.data.get("orig_qid") if isinstance(obj.item.data, dict) else None
        return None if orig is None else str(orig)


# Kinds as plain strings: Agent.Kind and Item.Kind would otherwise collide as one "Kind" enum in the schema.
_ITEM_KIND = serializers.CharField(help_text=", ".join(Item.Kind.values))
_AGENT_KIND = serializers.CharField(help_text=", ".join(Agent.Kind.values))


class ItemSerializer(serializers.ModelSerializer):
    item_set = serializers.CharField(source="item_set.slug")
    kind = _ITEM_KIND

    class Meta:
        model = Item
        fields = ["id", "item_set", "external_id", "kind", "text", "answer", "category", "subcategory", "difficulty", "data", "created_at"]


class AgentSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    kind = _AGENT_KIND
    name = serializers.SerializerMethodField()

    class Meta:
        model = Agent
        fields = ["id", "kind", "subtype", "name", "created_at"]

    @extend_schema_field(OpenApiTypes.STR)
    def get_name(self, obj: Agent) -> str:
        return obj.name if obj.kind == Agent.Kind.AI else obj.public_id


class FitRunSerializer(serializers.ModelSerializer):
    dimension_names = serializers.SerializerMethodField()

    class Meta:
        model = FitRun
        fields = ["id", "label", "status", "is_active", "reason", "created_at", "started_at", "finished_at", "settings",
                  "counts", "metrics", "timing", "progress", "clusters", "dim_labels", "dimension_names", "error",
                  "attempts", "heartbeat_at", "worker"]

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_dimension_names(self, obj: FitRun) -> list[str]:
        return obj.dim_names()


class FitAgentSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="key")
    kind = _AGENT_KIND

    class Meta:
        model = FitAgent
        fields = ["id", "kind", "name", "skill", "n_responses", "accuracy", "members"]


class FitItemSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="key")
    item = serializers.IntegerField(source="item_id", allow_null=True)

    class Meta:
        model = FitItem
        fields = ["id", "item", "clue", "relevance", "difficulty", "effective_difficulty", "n_responses", "accuracy", "cluster"]


# --- views ---------------------------------------------------------------------------------------------

_LIST = lambda name, desc: OpenApiParameter(name, str, many=True, explode=True, description=desc)  # noqa: E731


class ResearchViewSet(viewsets.ReadOnlyModelViewSet):
    permission_classes = [IsResearcher]
    pagination_class = Pages


@extend_schema_view(list=extend_schema(parameters=[
    _LIST("item_set", "item set slug(s)"), _LIST("item_kind", "item kind(s)"), _LIST("agent_kind", "agent kind(s)"),
    OpenApiParameter("since", str, description="ISO date or datetime, inclusive"),
    OpenApiParameter("until", str, description="ISO date or datetime, exclusive"),
    OpenApiParameter("agent", str, description="agent public id"), OpenApiParameter("source", str),
    _LIST("campaign", "annotation campaign slug(s): only those campaigns' annotation answers"),
    OpenApiParameter("include_practice", bool,
                     description="keep annotation practice answers (1, on or true; left out by default)"),
]))
class ResponseViewSet(ResearchViewSet):
    """The rows of the responses export, selected the same way (`responses_selected`): practice answers are
    left out unless include_practice is given, and campaign keeps those campaigns' answers only. One query
    per page, however many rows it holds."""

    serializer_class = ResponseSerializer
    pagination_class = ById

    def get_queryset(self) -> QuerySet[Response]:
        q = self.request.query_params
        try:
            spec = DataSpec(item_sets=q.getlist("item_set"), item_kinds=q.getlist("item_kind"),
                            agent_kinds=q.getlist("agent_kind") or [k.value for k in Agent.Kind],
                            since=q.get("since", ""), until=q.get("until", ""),
                            include_practice=q.get("include_practice") in ("1", "on", "true"),  # as the HTTP export
                            campaigns=[c for c in q.getlist("campaign") if c])
            data_spec_names_check(spec)  # a mistyped set or campaign is a 400, not an empty page
        except ValueError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        qs = responses_selected(spec).select_related("agent", "item", "item__item_set")
        if q.get("agent"):
            qs = qs.filter(agent__public_id=q["agent"])
        if q.get("source"):
            qs = qs.filter(source=q["source"])
        return with_campaign_and_practice(with_latest_override(qs))


@extend_schema_view(list=extend_schema(parameters=[
    _LIST("item_set", "item set slug(s)"), _LIST("kind", "item kind(s)"), OpenApiParameter("category", str),
]))
class ItemViewSet(ResearchViewSet):
    serializer_class = ItemSerializer

    def get_queryset(self) -> QuerySet[Item]:
        q = self.request.query_params
        qs = Item.objects.select_related("item_set").order_by("id")
        if q.getlist("item_set"):
            qs = qs.filter(item_set__slug__in=q.getlist("item_set"))
        if q.getlist("kind"):
            qs = qs.filter(kind__in=q.getlist("kind"))
        if q.get("category"):
            qs = qs.filter(category__iexact=q["category"])
        return qs


@extend_schema_view(list=extend_schema(parameters=[_LIST("kind", "agent kind(s)")]))
class AgentViewSet(ResearchViewSet):
    serializer_class = AgentSerializer
    lookup_field = "public_id"

    def get_queryset(self) -> QuerySet[Agent]:
        qs = Agent.objects.order_by("id")
        kinds = self.request.query_params.getlist("kind")
        return qs.filter(kind__in=kinds) if kinds else qs


@extend_schema_view(list=extend_schema(parameters=[
    OpenApiParameter("status", str), OpenApiParameter("active", bool, description="only the active fit"),
]))
class FitRunViewSet(ResearchViewSet):
    serializer_class = FitRunSerializer
    queryset = FitRun.objects.all()  # the model, for the schema; reads go through get_queryset

    def get_queryset(self) -> QuerySet[FitRun]:
        services.fitrun_reap_lost()  # a read of the fits also ends those whose worker died
        q = self.request.query_params
        qs = FitRun.objects.defer("artifact", "history").order_by("-id")
        if q.get("status"):
            qs = qs.filter(status=q["status"])
        if q.get("active") in ("1", "true", "yes"):
            qs = qs.filter(is_active=True)
        return qs

    @extend_schema(responses=FitAgentSerializer(many=True), parameters=[_LIST("kind", "agent kind(s)")])
    @action(detail=True, methods=["get"], serializer_class=FitAgentSerializer)
    def agents(self, request, pk=None):
        qs = FitAgent.objects.filter(fit=self.get_object()).order_by("id")
        if request.query_params.getlist("kind"):
            qs = qs.filter(kind__in=request.query_params.getlist("kind"))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(FitAgentSerializer(page, many=True).data)

    @extend_schema(responses=FitItemSerializer(many=True), parameters=[OpenApiParameter("cluster", int)])
    @action(detail=True, methods=["get"], serializer_class=FitItemSerializer)
    def items(self, request, pk=None):
        qs = FitItem.objects.filter(fit=self.get_object()).order_by("id")
        if request.query_params.get("cluster", "").isdigit():
            qs = qs.filter(cluster=int(request.query_params["cluster"]))
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(FitItemSerializer(page, many=True).data)

    @extend_schema(responses=OpenApiTypes.OBJECT, description="The analysis figures of a succeeded fit (research README).")
    @action(detail=True, methods=["get"])
    def figures(self, request, pk=None):
        run = self.get_object()
        if run.status != FitRun.Status.SUCCEEDED:
            raise NotFound("this fit has no results")
        return ApiResponse(analyses.fit_figures(run))


router = routers.DefaultRouter()
router.register("responses", ResponseViewSet, basename="response")
router.register("items", ItemViewSet, basename="item")
router.register("agents", AgentViewSet, basename="agent")
router.register("fits", FitRunViewSet, basename="fit")

app_name = "api"
urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(permission_classes=[IsResearcher]), name="schema"),
    # The same schema, browsable (Swagger UI's scripts served by this site: drf-spectacular-sidecar). The
    # page is guarded like the research pages (sign in, or 403 with the reason); the schema it loads is
    # fetched with the browser session.
    path("docs/", researcher_required(SpectacularSwaggerView.as_view(url_name="api:schema", permission_classes=[permissions.AllowAny])),
         name="docs"),
    path("", include(router.urls)),
]
