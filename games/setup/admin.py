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

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from games import labels
from games.models import RuleConfiguration, SpecialHandSetting
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.errors import ConfigError
from games.rules.presets import PRESETS
from games.rules.stats import DealShape, SpecialStats, special_intervals, special_stats
from games.setup.forms import (
    RuleConfigurationForm,
    SpecialHandFormSet,
    SpecialHandSettingForm,
)
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
from games.setup.row_bonus_stats import (
    row_bonus_compute_in_background,
    row_bonus_progress,
    row_bonus_ready,
)
from games.setup.selectors import special_stats_settings
from games.setup.services import (
    PublishRefused,
    configuration_publish_checks,
    rule_configuration_publish,
    rule_configuration_save,
    rule_configuration_save_as_draft,
    rule_configuration_set_default,
    special_hands_save,
)
from games.setup.special_stats import (
    special_deals_build_in_background,
    special_deals_ready,
    special_sample_ready,
    special_stats_progress,
)
from games.setup.versions import (
    configuration_versions,
    rule_configuration_versions_diff,
    rule_configurations_compare,
    special_changes,
    special_hands_diff,
    version_until,
)
from lobby.models import Room, RoomStatus
from shisanshui.admin_ids import CheckedHistoryIds
from shisanshui.ratelimit import RateLimited, rate_limit_hit


class PublishForm(forms.Form):
    reason = forms.CharField(
        label=_("reason for publishing"),
        max_length=100,
        help_text=_("Kept in the history with your name and the time."),
    )
    confirm_warnings = forms.BooleanField(label=_("publish despite the warnings"), required=False)


class CompareForm(forms.Form):
    a = forms.ModelChoiceField(
        label=_("configuration A"), queryset=RuleConfiguration.objects.order_by("name")
    )
    b = forms.ModelChoiceField(
        label=_("configuration B"), queryset=RuleConfiguration.objects.order_by("name")
    )


# Open rooms listed on a configuration's page (the rest are counted, and linked).
_ROOMS_LISTED = 20


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


def first_problem(form: Any, formsets: list[Any]) -> dict[str, str] | None:
    """The first refused field of the change page, for the banner that jumps to it: the
    configuration's fields in the page's order, then the special-hand rows, then the
    warnings above them."""
    if not form.is_bound:
        return None
    for name in form.fields:
        if form.errors.get(name):
            field = form[name]
            return {
                "anchor": field.id_for_label,
                "label": str(field.label),
                "message": str(form.errors[name][0]),
            }
    for formset in formsets:
        for row in formset.forms:
            for name in row.fields:
                if row.errors.get(name):
                    field = row[name]
                    return {
                        "anchor": field.id_for_label,
                        "label": str(field.label),
                        "message": str(row.errors[name][0]),
                    }
        if formset.non_form_errors():
            return {
                "anchor": f"{formset.prefix}-group",
                "label": str(gettext("special hands")),
                "message": str(formset.non_form_errors()[0]),
            }
    return None


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
    list_display = (
        "name",
        "status_display",
        "is_default",
        "preset",
        "base_score",
        "entry_minimum",
        "updated_at",
    )
    list_display_links = ("name",)
    list_filter = ("is_draft",)
    search_fields = ("name", "description")
    actions = ["make_default", "compare_two"]
    readonly_fields = (
        "status_display",
        "published_at",
        "published_by",
        "publish_reason",
        "preset",
        "entry_minimum_display",
        "deck_display",
        "special_stats_table",
        "rooms_display",
        "created_at",
        "updated_at",
    )
    object_history_template = "admin/games/ruleconfiguration/object_history.html"
    fieldsets = (
        (None, {"fields": ("name", "description", "is_default", "preset")}),
        (
            _("Draft and publication (草稿, 发布)"),
            {
                "fields": ("status_display", "published_at", "published_by", "publish_reason"),
                "description": _(
                    "“Save as new” makes a draft copy. A draft can be edited and its statistics "
                    "seen, but no room can use it until it is published, with a reason."
                ),
            },
        ),
        (
            _("This change"),
            {
                "fields": ("change_reason", "confirm_warnings"),
                "description": _(
                    "Saving checks the money these rules move: an entry minimum of 0 or above "
                    "the sign-up grant, an escape penalty of 0, or a special hand worth more "
                    "than a new player holds needs a confirmation."
                ),
            },
        ),
        (
            _("Where these rules are used"),
            {
                "fields": ("rooms_display",),
                "description": _(
                    "A change applies to new tables. An open table keeps the rules it was "
                    "created with until its room closes; a room with no round in play can be "
                    "moved to another configuration (Rooms: the action “Move to another "
                    "configuration”)."
                ),
            },
        ),
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
                    "row_water",
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
                "fields": (
                    "ready_seconds",
                    "special_choice_seconds",
                    "arrange_seconds",
                    "reconnect_grace_seconds",
                ),
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

    @admin.display(description=_("status"), ordering="is_draft")
    def status_display(self, obj: RuleConfiguration | None) -> str:
        if obj is None or obj.pk is None or obj.is_draft:
            return gettext("Draft 草稿")
        return gettext("Published")

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

    @admin.display(description=_("open rooms"))
    def rooms_display(self, obj: RuleConfiguration | None) -> str:
        if obj is None or obj.pk is None:
            return gettext("None yet.")
        rooms = list(
            Room.objects.filter(rules_id=obj.pk, status=RoomStatus.OPEN)
            .select_related("table")
            .order_by("pk")[: _ROOMS_LISTED + 1]
        )
        count = Room.objects.filter(rules_id=obj.pk, status=RoomStatus.OPEN).count()
        rows = [
            {
                "room": room,
                "url": reverse("admin:lobby_room_change", args=[room.pk]),
                "table": getattr(room, "table", None),
                "phase": (labels.phase_label(room.table.phase) if hasattr(room, "table") else ""),
            }
            for room in rooms[:_ROOMS_LISTED]
        ]
        return render_to_string(
            "admin/games/ruleconfiguration/rooms.html",
            {
                "rows": rows,
                "count": count,
                "more": max(0, count - len(rows)),
                "rooms_url": reverse("admin:lobby_room_changelist")
                + f"?rules__id__exact={obj.pk}&status__exact={RoomStatus.OPEN.value}",
            },
        )

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
        row_bonus_html = self.row_bonus_table(obj, config)
        deals = special_deals_ready(shape)
        progress: dict[str, object] | None = None
        progress_url = (
            reverse("admin:games_ruleconfiguration_stats_progress", args=[obj.pk])
            if obj is not None and obj.pk is not None
            else ""
        )
        if deals is None:
            # Never simulate in a request (tens of seconds): build in the background (a
            # sample first, for an answer within seconds) and show how far it is.
            if shape.is_classic:
                special_deals_build_in_background()
            else:
                special_deals_build_in_background(shape)
            progress = special_stats_progress(shape)
            deals = special_sample_ready(shape)
        if deals is None:
            return render_to_string(
                "admin/games/ruleconfiguration/special_stats_pending.html",
                {
                    "deals": f"{special_stats_settings()[1]:,}",
                    "players": shape.players,
                    "classic": shape.is_classic,
                    "deck": deck_summary(config),
                    "entry_minimum": f"{config.entry_minimum:,}",
                    "base_score": f"{config.base_score:,}",
                    "progress": progress,
                    "progress_url": progress_url,
                    "row_bonus_html": row_bonus_html,
                },
            )
        stats: SpecialStats = special_stats(deals, config)
        intervals = special_intervals(deals, config) if progress is not None else None
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
                "frequency_ci": (
                    f"± {intervals[row.id].frequency.half_width * 100:.2g} %"
                    if intervals is not None
                    else ""
                ),
                "water_ci": (
                    f"± {intervals[row.id].expected_water_per_deal.half_width:.3g}"
                    if intervals is not None
                    else ""
                ),
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
                "sampled": intervals is not None,
                "total_water_ci": (
                    f"± {intervals['*'].expected_water_per_deal.half_width:.3g}"
                    if intervals is not None
                    else ""
                ),
                "progress": progress,
                "progress_url": progress_url,
                "row_bonus_html": row_bonus_html,
            },
        )

    def row_bonus_table(self, obj: RuleConfiguration | None, config: RuleConfig) -> str:
        """What each row bonus of ``config`` is worth (RULES.md §7.1), computed per
        configuration in the background (:mod:`games.setup.row_bonus_stats`): the latest
        figures with their intervals, and a progress bar while a run is going."""
        progress = row_bonus_progress(config)
        if progress["phase"] in ("idle",):
            row_bonus_compute_in_background(config)
            progress = row_bonus_progress(config)
            if progress["phase"] == "idle":
                progress = {"phase": "sampling", "done": 0, "total": 0, "percent": 0}
        ready = row_bonus_ready(config)
        rows = []
        context: dict[str, object] = {}
        if ready is not None:
            figures, sampled = ready
            names = {
                "front": gettext("front"),
                "middle": gettext("middle"),
                "back": gettext("back"),
            }
            rows = [
                {
                    "stat": row,
                    "key": row.key,
                    "row_name": names[row.row],
                    "category_name": labels.category_name(row.category.id),
                    "frequency": f"{row.frequency * 100:.3g} %",
                    "frequency_ci": f"± {row.frequency_interval.half_width * 100:.2g} %",
                    "one_in": f"{row.one_in:,.0f}" if row.one_in else None,
                    "water_per_deal": f"{row.expected_water_per_deal:.4f}",
                    "water_ci": f"± {row.water_interval.half_width:.3g}",
                    "coins_per_deal": f"{row.expected_water_per_deal * config.base_score:,.1f}",
                }
                for row in figures.rows
            ]
            context = {
                "deals": f"{figures.deals:,}",
                "hands": f"{figures.hands:,}",
                "players": figures.players,
                "declared": f"{figures.specials_declared:,}",
                "sampled": sampled,
                "total_water_per_deal": f"{figures.expected_water_per_deal:.4f}",
                "total_water_ci": f"± {figures.total_interval.half_width:.3g}",
                "total_coins_per_deal": (
                    f"{figures.expected_water_per_deal * config.base_score:,.1f}"
                ),
            }
        running = progress["phase"] in ("sampling", "sampled")
        return render_to_string(
            "admin/games/ruleconfiguration/row_bonus_stats.html",
            {
                **context,
                "rows": rows,
                "progress": progress,
                "running": running,
                "failed": progress["phase"] == "failed",
                "progress_url": (
                    reverse("admin:games_ruleconfiguration_row_bonus_progress", args=[obj.pk])
                    if obj is not None and obj.pk is not None
                    else ""
                ),
            },
        )

    def _poll(
        self, request: HttpRequest, object_id: int
    ) -> tuple[RuleConfiguration, RuleConfig] | HttpResponse:
        """What both statistics polls check first: the configuration (404), the view
        permission, the poll's rate limit (429 JSON) and valid stored rules ("invalid")."""
        configuration = get_object_or_404(RuleConfiguration, pk=object_id)
        if not self.has_view_permission(request, configuration):
            raise PermissionDenied
        limited = rate_limit_hit("admin.rule_stats_progress", request.user.pk)
        if limited is not None:
            response = JsonResponse(
                {"error": "rate_limited", "retry_after": limited.retry_after}, status=429
            )
            response["Retry-After"] = str(limited.retry_after)
            return response
        config = self._saved_config(configuration)
        if config is None:
            return JsonResponse({"phase": "invalid", "done": 0, "total": 0, "percent": 0})
        return configuration, config

    def row_bonus_progress_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """The row bonuses' figures for the change page to poll (JSON, staff with the view
        permission, rate-limited with the special hands' poll): ``phase``, ``done``,
        ``total``, ``percent`` and, once a sample is there, ``html``: the table to show."""
        checked = self._poll(request, object_id)
        if isinstance(checked, HttpResponse):
            return checked
        configuration, config = checked
        body: dict[str, object] = dict(row_bonus_progress(config))
        if body["phase"] in ("ready", "sampled", "failed"):
            body["html"] = self.row_bonus_table(configuration, config)
        return JsonResponse(body)

    def stats_progress_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """The statistics of the configuration's deck, for the change page to poll (JSON,
        staff with the view permission, rate-limited): ``phase``, ``done``, ``total``,
        ``percent`` (:func:`special_stats_progress`) and, once a sample or the full
        simulation is there, ``html``: the statistics table to show."""
        checked = self._poll(request, object_id)
        if isinstance(checked, HttpResponse):
            return checked
        configuration, config = checked
        body: dict[str, object] = dict(special_stats_progress(DealShape.of(config)))
        if body["phase"] in ("ready", "sampled"):
            body["html"] = self.special_stats_table(configuration)
        return JsonResponse(body)

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
        obj._change_reason = form.cleaned_data.get("change_reason") or None  # type: ignore[attr-defined]
        rule_configuration_save(configuration=obj)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not SpecialHandSetting:
            super().save_formset(request, form, formset, change)
            return
        rows = formset.save(commit=False)
        reason = form.cleaned_data.get("change_reason") or None
        for row in rows:
            row._change_reason = reason
        special_hands_save(rows=rows)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        # The rules and their special hands are all saved now: which preset do they play?
        form.instance.preset_refresh()

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> HttpResponse:
        adminform = context.get("adminform")
        inlines = context.get("inline_admin_formsets") or []
        if adminform is not None:
            context["first_problem"] = first_problem(
                adminform.form, [inline.formset for inline in inlines]
            )
        return super().render_change_form(request, context, add, change, form_url, obj)

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
        if configuration.is_draft:
            self.message_user(
                request,
                gettext("%(name)s is a draft and cannot be the default: publish it first.")
                % {"name": configuration},
                messages.ERROR,
            )
            return
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
            "special_changes": special_changes(object_id),
            "config_versions": configuration_versions(object_id),
        }
        return super().history_view(request, object_id, extra_context=extra)

    def get_urls(self) -> list[URLPattern]:
        # (route, view, name after "games_ruleconfiguration_"), before the admin's own, whose
        # "<path:object_id>/" would take them.
        own = (
            ("<int:object_id>/statistics/", self.stats_progress_view, "stats_progress"),
            (
                "<int:object_id>/row-bonus-statistics/",
                self.row_bonus_progress_view,
                "row_bonus_progress",
            ),
            ("<int:object_id>/history/compare/", self.history_compare_view, "history_compare"),
            ("compare/", self.compare_view, "compare"),
            ("from-preset/", self.from_preset_view, "from_preset"),
            ("<int:object_id>/save-as-draft/", self.save_as_draft_view, "save_as_draft"),
            ("<int:object_id>/publish/", self.publish_view, "publish"),
        )
        return [
            *(
                path(
                    route, self.admin_site.admin_view(view), name=f"games_ruleconfiguration_{name}"
                )
                for route, view, name in own
            ),
            *super().get_urls(),
        ]

    # -- drafts ---------------------------------------------------------------------------------
    @staticmethod
    def _too_many(limited: RateLimited) -> HttpResponse:
        response = HttpResponse(
            gettext("Too many requests: try again in %(seconds)s s.")
            % {"seconds": limited.retry_after},
            status=429,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = str(limited.retry_after)
        return response

    def save_as_draft_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """ "Save as new" (POST): a draft copy of the configuration as saved, whose change page
        opens."""
        configuration = get_object_or_404(RuleConfiguration, pk=object_id)
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method != "POST":
            return HttpResponseRedirect(
                reverse("admin:games_ruleconfiguration_change", args=[configuration.pk])
            )
        limited = rate_limit_hit("admin.rule_draft", request.user.pk)
        if limited is not None:
            return self._too_many(limited)
        draft = rule_configuration_save_as_draft(configuration=configuration, user=request.user)
        self.log_addition(request, draft, [{"added": {}}])
        self.message_user(
            request,
            gettext(
                "%(name)s is a draft copy of %(source)s: edit it, see its statistics, then "
                "publish it."
            )
            % {"name": draft.name, "source": configuration.name},
            messages.SUCCESS,
        )
        return HttpResponseRedirect(
            reverse("admin:games_ruleconfiguration_change", args=[draft.pk])
        )

    def publish_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Publish a draft: a reason is required; the money checks of the admin's save run
        again (errors refuse, warnings need the confirmation tick)."""
        configuration = get_object_or_404(RuleConfiguration, pk=object_id)
        if not self.has_change_permission(request, configuration):
            raise PermissionDenied
        change_url = reverse("admin:games_ruleconfiguration_change", args=[configuration.pk])
        if not configuration.is_draft:
            self.message_user(
                request,
                gettext("%(name)s is already published.") % {"name": configuration},
                messages.WARNING,
            )
            return HttpResponseRedirect(change_url)
        warnings, errors = configuration_publish_checks(configuration)
        form = PublishForm(request.POST if request.method == "POST" else None)
        refusal = ""
        status = 200
        if request.method == "POST":
            limited = rate_limit_hit("admin.rule_draft", request.user.pk)
            if limited is not None:
                return self._too_many(limited)
            status = 400
            if form.is_valid():
                try:
                    rule_configuration_publish(
                        configuration_id=configuration.pk,
                        user=request.user,
                        reason=form.cleaned_data["reason"],
                        confirm_warnings=form.cleaned_data["confirm_warnings"],
                    )
                except PublishRefused as exc:
                    warnings, errors = exc.warnings or warnings, exc.errors or errors
                    refusal = exc.message or (
                        gettext("Nothing was published: the rules have errors.")
                        if exc.errors
                        else gettext(
                            "Nothing was published. To publish anyway, tick “publish despite "
                            "the warnings”."
                        )
                    )
                else:
                    self.log_change(request, configuration, form.cleaned_data["reason"])
                    self.message_user(
                        request,
                        gettext("%(name)s is published: rooms can use it now.")
                        % {"name": configuration},
                        messages.SUCCESS,
                    )
                    return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": configuration,
            "title": gettext("Publish %(name)s") % {"name": configuration},
            "form": form,
            "warnings": warnings,
            "errors": errors,
            "refusal": refusal,
            "change_url": change_url,
        }
        return TemplateResponse(
            request, "admin/games/ruleconfiguration/publish.html", context, status=status
        )

    # -- compare any two ----------------------------------------------------------------------
    @admin.action(description=_("Compare the two selected configurations"), permissions=["view"])
    def compare_two(
        self, request: HttpRequest, queryset: QuerySet[RuleConfiguration]
    ) -> HttpResponse | None:
        ids = list(queryset.order_by("name").values_list("pk", flat=True)[:3])
        if len(ids) != 2:
            self.message_user(
                request, gettext("Select exactly two configurations to compare."), messages.ERROR
            )
            return None
        url = reverse("admin:games_ruleconfiguration_compare")
        return HttpResponseRedirect(f"{url}?a={ids[0]}&b={ids[1]}")

    def compare_view(self, request: HttpRequest) -> HttpResponse:
        """Two configurations side by side (GET ``a`` and ``b``: their ids, picked here or by
        the list's action), every value in words, the differences highlighted."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        limited = rate_limit_hit("admin.rule_compare", request.user.pk)
        if limited is not None:
            response = HttpResponse(
                gettext("Too many comparisons: try again in %(seconds)s s.")
                % {"seconds": limited.retry_after},
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(limited.retry_after)
            return response
        form = CompareForm(request.GET if request.GET else None)
        comparison = None
        a = b = None
        if form.is_bound and form.is_valid():
            a, b = form.cleaned_data["a"], form.cleaned_data["b"]
            comparison = rule_configurations_compare(a=a, b=b)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": gettext("Compare two configurations"),
            "form": form,
            "a": a,
            "b": b,
            "comparison": comparison,
        }
        status = 400 if form.is_bound and not form.is_valid() else 200
        return TemplateResponse(
            request, "admin/games/ruleconfiguration/compare.html", context, status=status
        )

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
                configuration_id=configuration.pk, old=version_until(old), new=version_until(new)
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
