"""The admin of rule configurations (RULES.md §5–8).

The rules engine decides what is valid: the form checks the plain fields with
``RuleConfig.from_dict``, and the special-hand formset checks the whole configuration (the
submitted fields with the submitted rows), so an invalid change saves nothing. Each
configuration has exactly the engine's special hands, one row each: rows are never added or
deleted here, only their enabled / water / rank are edited. Every change is kept by
django-simple-history with its user; the change page shows the entry minimum and, from a cached
simulation of the configuration's own deck (RULES.md §12), how often each special hand counts
and what it is worth per deal. A deck change that would seat fewer players than an open room
of the configuration has seats is refused. "New from preset" creates a configuration from a
preset of RULES.md §12.6 (games.setup.presets).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.forms.models import BaseInlineFormSet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from games import labels
from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS, RuleConfiguration, SpecialHandSetting
from games.rules.config import DEFAULT_CONFIG, SPECIAL_BY_ID, SPECIAL_IDS, RuleConfig
from games.rules.errors import ConfigError
from games.rules.presets import PRESETS
from games.rules.stats import DealShape, SpecialStats, special_stats
from games.setup.presets import (
    DECK_FIELDS,
    NameTaken,
    PresetForm,
    deck_summary,
    name_taken_message,
    preset_default_name,
    preset_name,
    preset_summary,
    rule_configuration_from_preset,
)
from games.setup.selectors import special_stats_settings
from games.setup.services import (
    rule_configuration_save,
    rule_configuration_set_default,
    special_hands_save,
)
from games.setup.special_stats import special_deals_build_in_background, special_deals_ready
from lobby.models import Room, RoomStatus
from shisanshui.admin_ids import CheckedHistoryIds
from shisanshui.ratelimit import RateLimited, rate_limit_hit

# Open rooms named in the error refusing a deck change (the rest are counted).
_ROOMS_NAMED = 10

# Engine field name (as ConfigError messages start) -> the form field it belongs to.
_ERROR_FIELDS = {name: name for name in PLAIN_FIELDS} | {
    f"row_bonus.{key}": field for field, key in ROW_BONUS_FIELDS.items()
}


def _engine_error_field(message: str) -> str | None:
    head = message.split(" ", 1)[0]
    return _ERROR_FIELDS.get(head)


class RuleConfigurationForm(forms.ModelForm):
    """The plain fields; the engine validates them (the special hands: see the formset)."""

    class Meta:
        model = RuleConfiguration
        fields = "__all__"

    def _get_validation_exclusions(self) -> set[str]:
        # "One default" is kept by the save, which unsets the previous default first.
        return {*super()._get_validation_exclusions(), "is_default"}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if (
            self.instance.pk is not None
            and self.instance.is_default
            and not cleaned.get("is_default", True)
        ):
            self.add_error(
                "is_default",
                gettext(
                    "There must be a default configuration: make another one the default "
                    "instead (it replaces this one)."
                ),
            )
        if any(name in self.errors for name in (*PLAIN_FIELDS, *ROW_BONUS_FIELDS)):
            return cleaned
        data: dict[str, Any] = {name: cleaned[name] for name in PLAIN_FIELDS if name in cleaned}
        data["row_bonus"] = {
            key: cleaned[field] for field, key in ROW_BONUS_FIELDS.items() if field in cleaned
        }
        try:
            config = RuleConfig.from_dict(data)
        except ConfigError as exc:
            message = gettext("The rules engine rejects this: %(error)s") % {"error": exc}
            self.add_error(_engine_error_field(exc.message), message)
            return cleaned
        self._check_open_rooms(config)
        return cleaned

    def _check_open_rooms(self, config: RuleConfig) -> None:
        """A deck change must leave a seat for every seat of the open rooms that play this
        configuration (RULES.md §12: ``max_seats``); otherwise it is refused, naming them."""
        changed = [name for name in DECK_FIELDS if name in self.changed_data]
        if self.instance.pk is None or not changed:
            return
        if transaction.get_connection().in_atomic_block:
            # The admin validates and saves in one transaction: hold the row until then, so
            # that two deck changes of one configuration are checked one after the other.
            RuleConfiguration.objects.select_for_update().filter(pk=self.instance.pk).exists()
        rooms = Room.objects.filter(
            rules_id=self.instance.pk, status=RoomStatus.OPEN, seats__gt=config.max_seats
        ).order_by("pk")
        count = rooms.count()
        if not count:
            return
        named = [
            gettext("“%(name)s” (#%(id)s, %(seats)s seats)")
            % {"name": room.name, "id": room.pk, "seats": room.seats}
            for room in rooms[:_ROOMS_NAMED]
        ]
        if count > len(named):
            named.append(gettext("and %(count)s more") % {"count": count - len(named)})
        self.add_error(
            changed[0],
            gettext(
                "This deck seats at most %(max)s players, but open rooms with this "
                "configuration have more seats: %(rooms)s. Keep the deck until they close, or "
                "give them another configuration."
            )
            % {"max": config.max_seats, "rooms": ", ".join(named)},
        )


class SpecialNameWidget(forms.Select):
    """The special hand's name (in the page's language) as text, not as a control."""

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        if SPECIAL_BY_ID.get(str(value)) is None:
            return format_html("{}", value or "")
        return format_html("<strong>{}</strong>", labels.special_name(str(value)))


class SpecialHandSettingForm(forms.ModelForm):
    class Meta:
        model = SpecialHandSetting
        fields = ("special", "enabled", "water", "order")
        widgets = {"special": SpecialNameWidget}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Disabled: the special of a row is never read from the request, only shown.
        self.fields["special"].disabled = True

    def has_changed(self) -> bool:
        # A new configuration's rows come pre-filled and are saved even when left as they are.
        return self.instance._state.adding or super().has_changed()


class SpecialHandFormSet(BaseInlineFormSet):
    """Validates the whole configuration: the parent's submitted values with these rows."""

    def get_unique_error_message(self, unique_check: Any) -> str:
        if "order" in unique_check:
            return gettext("Two special hands have the same rank: give each one its own rank.")
        return str(super().get_unique_error_message(unique_check))

    def rows(self) -> list[SpecialHandSetting]:
        """The rows as they would be saved (existing rows, and new rows that are saved)."""
        return [
            form.instance
            for form in self.forms
            if form.instance.pk is not None or form.has_changed()
        ]

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        rows = self.rows()
        if sorted(row.special for row in rows) != sorted(SPECIAL_IDS):
            raise ValidationError(
                gettext(
                    "A configuration has exactly one row for each of the %(count)d special hands."
                )
                % {"count": len(SPECIAL_IDS)}
            )
        ranks = Counter(row.order for row in rows)
        taken_twice = sorted(rank for rank, n in ranks.items() if n > 1)
        if taken_twice:
            raise ValidationError(
                gettext("Two special hands have rank %(rank)s: give each one its own rank.")
                % {"rank": taken_twice[0]}
            )
        try:
            RuleConfig.from_dict(self.instance.engine_dict(specials=rows))
        except ConfigError as exc:
            raise ValidationError(
                gettext("The rules engine rejects these rules: %(error)s") % {"error": exc}
            ) from None


class SpecialHandSettingInline(admin.TabularInline):
    """The engine's special hands, one row each: edit enabled / water / rank, nothing else."""

    model = SpecialHandSetting
    form = SpecialHandSettingForm
    formset = SpecialHandFormSet
    fields = ("special", "enabled", "water", "order")
    can_delete = False
    extra = 0
    max_num = len(SPECIAL_IDS)
    verbose_name = _("special hand")
    verbose_name_plural = _("special hands (特殊牌型): a disabled one never counts (RULES.md §5)")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Rows are created only with a new configuration, one per special of the engine.
        adding = obj is None or obj.pk is None
        return adding and super().has_add_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_extra(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> int:
        return len(SPECIAL_IDS) if obj is None or obj.pk is None else 0

    def get_min_num(self, request: HttpRequest, obj: Any = None, **kwargs: Any) -> int:
        return 0


def _new_rows_initial() -> list[dict[str, Any]]:
    """A new configuration starts with the engine's defaults (RULES.md §5)."""
    return [
        {"special": rule.id, "enabled": rule.enabled, "water": rule.water, "order": position}
        for position, rule in enumerate(DEFAULT_CONFIG.specials, start=1)
    ]


@admin.register(RuleConfiguration)
class RuleConfigurationAdmin(CheckedHistoryIds, SimpleHistoryAdmin):
    form = RuleConfigurationForm
    inlines = [SpecialHandSettingInline]
    list_display = ("name", "is_default", "base_score", "entry_minimum", "updated_at")
    list_display_links = ("name",)
    search_fields = ("name", "description")
    actions = ["make_default"]
    readonly_fields = (
        "entry_minimum_display",
        "deck_display",
        "special_stats_table",
        "created_at",
        "updated_at",
    )
    object_history_template = "admin/games/ruleconfiguration/object_history.html"
    fieldsets = (
        (None, {"fields": ("name", "description", "is_default")}),
        (
            _("Deck (RULES.md §12)"),
            {
                "fields": (*DECK_FIELDS, "deck_display"),
                "description": _(
                    "The variant decks: extra suits of diamonds (多一色), jokers (癞子), three "
                    "spare cards (多三张). With every setting at none the game is the classic "
                    "one. The deck limits the seats of a room: a change that leaves an open "
                    "room of this configuration without enough cards is refused."
                ),
            },
        ),
        (
            _("Rows and bonuses (墩, 比牌额外水数)"),
            {
                "fields": (
                    "a2345",
                    "bonus_front_trips",
                    "bonus_middle_full_house",
                    "bonus_middle_quads",
                    "bonus_middle_straight_flush",
                    "bonus_back_quads",
                    "bonus_back_straight_flush",
                    "bonus_middle_five_of_a_kind",
                    "bonus_back_five_of_a_kind",
                ),
                "description": _("Row water and the winner's extra water (RULES.md §3, §7.1)."),
            },
        ),
        (
            _("Gun and home run (打枪, 全垒打)"),
            {
                "fields": (
                    "run_over_counts_as_gun",
                    "gun_mode",
                    "gun_water",
                    "home_run_water",
                    "home_run_min_players",
                ),
                "description": _("RULES.md §7.2."),
            },
        ),
        (
            _("Coins and escape (底分, 逃跑)"),
            {
                "fields": (
                    "base_score",
                    "entry_minimum_display",
                    "escape_penalty_multiplier",
                    "escape_covers_losses",
                ),
                "description": _("RULES.md §7.4 and §7.5."),
            },
        ),
        (
            _("Deal and compare (发牌, 比牌)"),
            {
                "fields": ("deal_mode", "deal_interval_ms", "compare_mode", "reveal_interval_ms"),
                "description": _("How the deal and the comparison are shown (RULES.md §8)."),
            },
        ),
        (
            _("Time limits"),
            {
                "fields": ("ready_seconds", "special_choice_seconds", "arrange_seconds"),
                "description": _("RULES.md §5.1, §6 and §8."),
            },
        ),
        (
            _("Special hands: frequency and expected water (特殊牌型统计)"),
            {"fields": ("special_stats_table",), "classes": ("wide",)},
        ),
        (_("Record"), {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    )

    # -- list -------------------------------------------------------------------------------
    def get_queryset(self, request: HttpRequest) -> QuerySet[RuleConfiguration]:
        return super().get_queryset(request).prefetch_related("special_hands")

    @admin.display(description=_("entry minimum (coins)"))
    def entry_minimum(self, obj: RuleConfiguration) -> str:
        try:
            return f"{obj.engine_config().entry_minimum:,}"
        except ConfigError:
            return gettext("invalid rules")

    # -- the change page ----------------------------------------------------------------------
    def _saved_config(self, obj: RuleConfiguration | None) -> RuleConfig | None:
        """The engine value of the configuration as saved (RULES.md defaults for a new one);
        None if the stored rules are invalid. A page redisplayed with errors shows the values
        being edited, which are not saved: the figures are always those of the saved rules."""
        if obj is None or obj.pk is None:
            return DEFAULT_CONFIG
        stored = RuleConfiguration.objects.prefetch_related("special_hands").get(pk=obj.pk)
        try:
            return stored.engine_config()
        except ConfigError:
            return None

    @admin.display(description=_("entry minimum"))
    def entry_minimum_display(self, obj: RuleConfiguration | None) -> str:
        config = self._saved_config(obj)
        if config is None:
            return gettext("The stored rules are invalid.")
        top = max((s.water for s in config.enabled_specials), default=0)
        return gettext(
            "%(coins)s coins = %(water)s water (the highest enabled special hand) × base score "
            "%(base)s × 3 (RULES.md §7.4), for the rules as saved."
        ) % {"coins": f"{config.entry_minimum:,}", "water": top, "base": f"{config.base_score:,}"}

    @admin.display(description=_("deck as saved"))
    def deck_display(self, obj: RuleConfiguration | None) -> str:
        config = self._saved_config(obj)
        if config is None:
            return gettext("The stored rules are invalid.")
        return deck_summary(config)

    @admin.display(description=_("special hands"))
    def special_stats_table(self, obj: RuleConfiguration | None) -> str:
        config = self._saved_config(obj)
        if config is None:
            return gettext("The stored rules are invalid.")
        shape = DealShape.of(config)  # the configuration's own deck (RULES.md §12)
        deals = special_deals_ready(shape)
        if deals is None:
            # Never simulate in a request (tens of seconds): build in the background and say so.
            if shape.is_classic:
                special_deals_build_in_background()
            else:
                special_deals_build_in_background(shape)
            return render_to_string(
                "admin/games/ruleconfiguration/special_stats_pending.html",
                {
                    "deals": f"{special_stats_settings()[1]:,}",
                    "players": shape.players,
                    "classic": shape.is_classic,
                    "deck": deck_summary(config),
                    "entry_minimum": f"{config.entry_minimum:,}",
                    "base_score": f"{config.base_score:,}",
                },
            )
        stats: SpecialStats = special_stats(deals, config)
        orders: dict[str, int] = {}
        if obj is not None and obj.pk is not None:
            orders = dict(
                SpecialHandSetting.objects.filter(configuration_id=obj.pk).values_list(
                    "special", "order"
                )
            )
        rows = [
            {
                "stat": row,
                "name": labels.special_name(row.id),
                "order": orders.get(row.id, position),
                "frequency": f"{row.frequency * 100:.3g} %",
                "one_in": f"{row.one_in:,.0f}" if row.one_in else None,
                "water_per_deal": f"{row.expected_water_per_deal:.4f}",
                "coins_per_deal": f"{row.expected_water_per_deal * config.base_score:,.1f}",
            }
            for position, row in enumerate(stats.rows, start=1)
        ]
        any_one_in = 1 / stats.special_frequency if stats.special_frequency else None
        return render_to_string(
            "admin/games/ruleconfiguration/special_stats.html",
            {
                "new": obj is None or obj.pk is None,
                "stats": stats,
                "rows": rows,
                "base_score": f"{config.base_score:,}",
                "entry_minimum": f"{config.entry_minimum:,}",
                "any_frequency": f"{stats.special_frequency * 100:.3g} %",
                "any_one_in": f"{any_one_in:,.0f}" if any_one_in else None,
                "total_water_per_deal": f"{stats.expected_water_per_deal:.4f}",
                "total_coins_per_deal": (
                    f"{stats.expected_water_per_deal * config.base_score:,.1f}"
                ),
                "deals": f"{stats.deals:,}",
                "hands": f"{stats.hands:,}",
                "players": deals.players,
                "classic": shape.is_classic,
                "deck": deck_summary(config),
            },
        )

    # -- forms --------------------------------------------------------------------------------
    def get_formset_kwargs(
        self, request: HttpRequest, obj: RuleConfiguration, inline: Any, prefix: str
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = super().get_formset_kwargs(request, obj, inline, prefix)
        if isinstance(inline, SpecialHandSettingInline) and obj.pk is None:
            kwargs["initial"] = _new_rows_initial()
        return kwargs

    def save_model(
        self, request: HttpRequest, obj: RuleConfiguration, form: Any, change: bool
    ) -> None:
        obj._history_user = request.user  # type: ignore[attr-defined]
        rule_configuration_save(configuration=obj)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not SpecialHandSetting:
            super().save_formset(request, form, formset, change)
            return
        rows = formset.save(commit=False)
        special_hands_save(rows=rows)

    # -- default and deletion -----------------------------------------------------------------
    @admin.action(
        description=_("Make the selected configuration the default"), permissions=["change"]
    )
    def make_default(self, request: HttpRequest, queryset: QuerySet[RuleConfiguration]) -> None:
        if queryset.count() != 1:
            self.message_user(
                request,
                gettext("Select exactly one configuration to make it the default."),
                messages.ERROR,
            )
            return
        configuration = queryset.get()
        try:
            configuration.engine_config()
        except ConfigError as exc:
            self.message_user(
                request,
                gettext("%(name)s has invalid rules and cannot be the default: %(error)s")
                % {"name": configuration, "error": exc},
                messages.ERROR,
            )
            return
        rule_configuration_set_default(configuration=configuration)
        self.message_user(
            request,
            gettext("%(name)s is now the default configuration.") % {"name": configuration},
            messages.SUCCESS,
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if obj is not None and obj.is_default:
            return False
        return super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> Any:
        """The default configuration is never deleted, not even in a bulk delete."""
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        defaults = [obj for obj in objs if obj.is_default]
        if defaults:
            protected = [
                *protected,
                *(
                    gettext("%(name)s (the default configuration)") % {"name": obj}
                    for obj in defaults
                ),
            ]
        return deleted, model_count, perms_needed, protected

    # -- history ------------------------------------------------------------------------------
    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {
            **(extra_context or {}),
            "special_changes": _special_changes(object_id),
            "config_versions": _versions(object_id),
        }
        return super().history_view(request, object_id, extra_context=extra)

    def get_urls(self) -> list[URLPattern]:
        compare = path(
            "<int:object_id>/history/compare/",
            self.admin_site.admin_view(self.history_compare_view),
            name="games_ruleconfiguration_history_compare",
        )
        from_preset = path(
            "from-preset/",
            self.admin_site.admin_view(self.from_preset_view),
            name="games_ruleconfiguration_from_preset",
        )
        return [compare, from_preset, *super().get_urls()]

    # -- new from preset ----------------------------------------------------------------------
    def from_preset_view(self, request: HttpRequest) -> HttpResponse:
        """Every preset of RULES.md §12.6, each with a name and a button that creates it
        (POST, CSRF-checked by the admin site): the new configuration is the engine's preset,
        recorded in history, and its change page opens so it can be edited."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        chosen: str | None = None
        form: PresetForm | None = None
        limited: RateLimited | None = None
        status = 200
        if request.method == "POST":
            chosen = str(request.POST.get("preset", ""))
            form = PresetForm(request.POST)
            limited = rate_limit_hit("admin.rule_preset", request.user.pk)
            if limited is not None:
                form.is_valid()  # the form shows what was sent, with the refusal
                form.add_error(
                    None,
                    gettext("Too many configurations created: try again in %(seconds)s s.")
                    % {"seconds": limited.retry_after},
                )
                status = 429
            elif form.is_valid():
                preset = PRESETS[form.cleaned_data["preset"]]
                try:
                    created = rule_configuration_from_preset(
                        preset=preset, name=form.cleaned_data["name"], user=request.user
                    )
                except NameTaken:
                    form.add_error("name", name_taken_message(form.cleaned_data["name"]))
                else:
                    self.log_addition(request, created, [{"added": {}}])
                    self.message_user(
                        request,
                        gettext(
                            "%(name)s was created from the preset %(preset)s: check it and "
                            "edit it if you like."
                        )
                        % {"name": created.name, "preset": preset_name(preset)},
                        messages.SUCCESS,
                    )
                    return HttpResponseRedirect(
                        reverse("admin:games_ruleconfiguration_change", args=[created.pk])
                    )
            if status == 200:
                status = 400
        errors = [] if form is None else [str(m) for ms in form.errors.values() for m in ms]
        presets = [
            {
                "preset": preset,
                # A refused name is shown again, in its own preset's form.
                "name": (
                    str(request.POST.get("name", ""))[:200]
                    if errors and chosen == preset.id
                    else preset_default_name(preset)
                ),
                "summary": preset_summary(preset),
                "deck": deck_summary(preset.config),
            }
            for preset in PRESETS.values()
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": gettext("New configuration from a preset"),
            "presets": presets,
            "errors": errors,
            "chosen": chosen,
            "name_max_length": RuleConfiguration._meta.get_field("name").max_length,
        }
        response = TemplateResponse(
            request, "admin/games/ruleconfiguration/from_preset.html", context, status=status
        )
        if limited is not None:
            response["Retry-After"] = str(limited.retry_after)
        return response

    def history_compare_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """The difference between two versions (GET ``old`` and ``new``: history ids), the
        special-hand rows included, with who made the newer one and when."""
        configuration = get_object_or_404(RuleConfiguration, pk=object_id)
        if not self.has_view_permission(request, configuration):
            raise PermissionDenied
        versions = RuleConfiguration.history.filter(id=configuration.pk)
        try:
            old = versions.get(history_id=int(request.GET.get("old", "")))
            new = versions.get(history_id=int(request.GET.get("new", "")))
        except (ValueError, RuleConfiguration.history.model.DoesNotExist):
            raise Http404 from None
        if (old.history_date, old.history_id) > (new.history_date, new.history_id):
            old, new = new, old
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": configuration,
            "title": gettext("Compare versions of %(name)s") % {"name": configuration},
            "old": old,
            "new": new,
            "changes": rule_configuration_versions_diff(old=old, new=new),
            "special_changes": special_hands_diff(
                configuration_id=configuration.pk, old=_until(old), new=_until(new)
            ),
        }
        return TemplateResponse(
            request, "admin/games/ruleconfiguration/history_compare.html", context
        )

    def history_form_view(
        self,
        request: HttpRequest,
        object_id: str,
        version_id: str,
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # Old versions can be looked at, not restored: restoring the fields alone would skip
        # the special-hand rows and the engine's validation of the whole.
        if request.method == "POST":
            raise PermissionDenied
        return super().history_form_view(request, object_id, version_id, extra_context)


_TRACKED = ("enabled", "water", "order")
# Their names in the history pages (the fields' verbose names carry a Chinese gloss).
_TRACKED_LABELS = {"enabled": _("enabled"), "water": _("water"), "order": _("rank")}


def _versions(object_id: str) -> list[Any]:
    try:
        configuration_id = int(object_id)
    except ValueError:
        return []
    return list(
        RuleConfiguration.history.filter(id=configuration_id)
        .select_related("history_user")
        .order_by("-history_date", "-history_id")[:100]
    )


def rule_configuration_versions_diff(*, old: Any, new: Any) -> list[dict[str, Any]]:
    """The plain fields that differ between two historical versions (simple-history's
    ``diff_against``), with their verbose names."""
    delta = new.diff_against(old, excluded_fields=["updated_at", "created_at"])
    out = []
    for change in delta.changes:
        try:
            label = str(RuleConfiguration._meta.get_field(change.field).verbose_name)
        except Exception:  # noqa: BLE001 - a field removed since: show its name
            label = change.field
        out.append({"field": change.field, "label": label, "old": change.old, "new": change.new})
    return out


def _until(version: Any) -> Any:
    """The end of a configuration version: the next version's date (None: still current).

    The admin saves the special-hand rows just after the configuration, so a version's rows
    are those recorded before the next version of the configuration."""
    following = (
        RuleConfiguration.history.filter(id=version.id, history_date__gt=version.history_date)
        .order_by("history_date", "history_id")
        .first()
    )
    return None if following is None else following.history_date


def _special_rows_at(configuration_id: int, until: Any) -> dict[str, Any]:
    """Each special-hand row of a configuration as it was before ``until`` (None: now)."""
    rows: dict[int, Any] = {}
    records = SpecialHandSetting.history.filter(configuration_id=configuration_id)
    if until is not None:
        records = records.filter(history_date__lt=until)
    for record in records.order_by("history_date", "history_id"):
        rows[record.id] = record
    return {r.special: r for r in rows.values() if r.history_type != "-"}


def special_hands_diff(*, configuration_id: int, old: Any, new: Any) -> list[dict[str, Any]]:
    """The special-hand rows' values that differ between the rows recorded before ``old``
    and those recorded before ``new`` (None: now)."""
    before, after = _special_rows_at(configuration_id, old), _special_rows_at(configuration_id, new)
    out = []
    for special in sorted(set(before) | set(after)):
        a, b = before.get(special), after.get(special)
        for field in _TRACKED:
            va, vb = getattr(a, field, None), getattr(b, field, None)
            if va != vb:
                out.append(
                    {
                        "special": special,
                        "name": labels.special_name(special),
                        "field": field,
                        "label": str(_TRACKED_LABELS[field]),
                        "old": va,
                        "new": vb,
                        "by": getattr(b, "history_user", None),
                    }
                )
    return out


def _special_changes(object_id: str, limit: int = 300) -> list[dict[str, Any]]:
    """The history of a configuration's special-hand rows, newest first, with what changed."""
    try:
        configuration_id = int(object_id)
    except ValueError:
        return []
    records = list(
        SpecialHandSetting.history.filter(configuration_id=configuration_id)
        .select_related("history_user")
        .order_by("history_date", "history_id")
    )
    previous: dict[int, Any] = {}
    out = []
    for record in records:
        before = previous.get(record.id)
        changes = [
            (str(_TRACKED_LABELS[field]), getattr(before, field), getattr(record, field))
            for field in _TRACKED
            if before is not None and getattr(before, field) != getattr(record, field)
        ]
        previous[record.id] = record
        out.append(
            {
                "record": record,
                "name": labels.special_name(record.special),
                "changes": changes,
            }
        )
    out.reverse()
    return out[:limit]
