"""A draft rule configuration is tried in the admin, never played: every path that gives a
room or a table its rules refuses it, with `draft_rules`."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from accounts.models import User
from games.models import RuleConfiguration
from games.rules.presets import preset_config
from lobby.errors import DraftRules
from lobby.forms import RoomCreateForm
from lobby.matchmaking import room_quick_play
from lobby.models import Room
from lobby.selectors import variant_rules, variants_offered
from lobby.services import room_create, room_rules_move
from tests.lobby.conftest import MakePlayer, lobby_counts


@pytest.fixture
def draft(rules: RuleConfiguration) -> RuleConfiguration:
    return RuleConfiguration.from_engine(rules.engine_config(), name="Tried", is_draft=True)


def test_room_create_refuses_a_draft(alice: User, draft: RuleConfiguration) -> None:
    before = lobby_counts()
    with pytest.raises(DraftRules) as caught:
        room_create(owner=alice, name="T", base_score=100, seats=4, rules=draft)
    assert caught.value.code == "draft_rules"
    assert "Tried" in caught.value.message
    assert lobby_counts() == before


def test_the_api_refuses_a_draft_with_a_clear_error(alice: User, draft: RuleConfiguration) -> None:
    client = APIClient()
    client.force_login(alice)
    response = client.post(
        "/api/lobby/rooms/",
        {"name": "T", "base_score": 100, "seats": 4, "rules": draft.pk},
        format="json",
    )
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "draft_rules"
    assert "draft" in error["message"]
    assert not Room.objects.exists()


def test_a_room_is_not_moved_to_a_draft(alice: User, draft: RuleConfiguration) -> None:
    room = room_create(owner=alice, name="T", base_score=100, seats=4)
    with pytest.raises(DraftRules):
        room_rules_move(room_id=room.pk, rules=draft)
    room.refresh_from_db()
    assert room.rules_id != draft.pk


def test_model_validation_refuses_a_room_on_a_draft(alice: User, draft: RuleConfiguration) -> None:
    room = room_create(owner=alice, name="T", base_score=100, seats=4)
    room.rules = draft
    with pytest.raises(ValidationError) as caught:
        room.full_clean()
    assert "rules" in caught.value.message_dict


def test_a_draft_is_never_the_default_even_around_the_orm(draft: RuleConfiguration) -> None:
    draft.is_default = True
    with pytest.raises(ValidationError):
        draft.full_clean()
    with pytest.raises(IntegrityError), transaction.atomic():
        RuleConfiguration.objects.filter(pk=draft.pk).update(is_default=True)


def test_variants_and_quick_play_skip_drafts(
    rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    # Every configuration but the classic default is a draft: only the default is offered.
    RuleConfiguration.objects.exclude(pk=rules.pk).update(is_draft=True, is_default=False)
    RuleConfiguration.from_engine(preset_config("duoyise"), name="A draft", is_draft=True)
    assert "duoyise" not in variants_offered()
    assert variant_rules(variant="duoyise") is None
    played = room_quick_play(user=make_player())
    assert played.seat.room.rules_id == rules.pk


def test_the_room_form_does_not_offer_drafts(
    rules: RuleConfiguration, draft: RuleConfiguration
) -> None:
    choices = RoomCreateForm().fields["rules"].queryset
    assert rules in choices
    assert draft not in choices
