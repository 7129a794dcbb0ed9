"""No tables: a model only so that the roles' permissions have a content type (quizsite.core.roles)."""

from __future__ import annotations

from django.db import models


class RolePermissions(models.Model):
    class Meta:
        managed = False  # no table; Django still makes its content type and permissions
        default_permissions = ()
        permissions = [("use_research", "Can use research pages, exports, campaigns and the API")]

    def __str__(self) -> str:
        return "role permissions"
