"""A refusal's message is made a string when it is read, in the language active then: the
follow-ups offered are found by asking each rule and dropping its refusal, unread (#17)."""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext_lazy

from campaign.errors import Conflict, InvalidInput, call_rules
from rolls.systems import cofd


def test_a_lazy_message_is_read_in_the_language_active_when_read():
    error = Conflict("check", gettext_lazy("this roll is already visible to everyone"))
    with translation.override("ru"):
        assert error.message == "этот бросок уже виден всем"
        assert error.errors == {"check": "этот бросок уже виден всем"}
        assert str(error) == "check: этот бросок уже виден всем"
    with translation.override("en"):
        assert error.message == "this roll is already visible to everyone"


def test_a_rule_error_keeps_its_message_and_parameters():
    try:
        call_rules(cofd.intentional_dramatic_failure, {"outcome": "success"}, prefix="check.")
    except InvalidInput as refusal:
        error = Conflict(refusal.field, refusal.lazy_message)
    with translation.override("en"):
        assert error.field == "check"
        assert error.message == "cofd: only a failure can become a dramatic failure, not 'success'"
    assert isinstance(error.message, str) and isinstance(error.errors["check"], str)
