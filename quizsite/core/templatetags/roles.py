"""`{% load roles %}{% if user|is_researcher %}`: templates show research links by the same rule the views use."""

from __future__ import annotations

from django import template
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser

from quizsite.core import roles

register = template.Library()


@register.filter(name="is_researcher")
def is_researcher(user: AbstractBaseUser | AnonymousUser | None) -> bool:
    return roles.is_researcher(user)
