from __future__ import annotations

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

MIN_DISTINCT = 4


class VarietyValidator:
    """Django's validators let "        " and "aaaaaaaa" through: ask for a few different
    characters besides spaces."""

    def validate(self, password: str, user=None) -> None:
        if len(set(password.replace(" ", ""))) < MIN_DISTINCT:
            raise ValidationError(
                _("This password needs at least %(n)d different characters besides spaces."),
                code="password_too_plain",
                params={"n": MIN_DISTINCT},
            )

    def get_help_text(self) -> str:
        return _("Your password needs at least %(n)d different characters besides spaces.") % {
            "n": MIN_DISTINCT
        }
