from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.methodology_comparison import MethodologyComparison
    from ..models.methodology_freshness import MethodologyFreshness
    from ..models.methodology_intervals import MethodologyIntervals
    from ..models.methodology_mention import MethodologyMention
    from ..models.methodology_methodology_window import MethodologyMethodologyWindow
    from ..models.methodology_metric_definition import MethodologyMetricDefinition
    from ..models.methodology_ordering import MethodologyOrdering
    from ..models.methodology_periods import MethodologyPeriods
    from ..models.methodology_rounding import MethodologyRounding
    from ..models.methodology_run import MethodologyRun
    from ..models.methodology_signals import MethodologySignals
    from ..models.methodology_slices import MethodologySlices


T = TypeVar("T", bound="Methodology")


@_attrs_define
class Methodology:
    """The versioned, machine-readable definition of every metric, window and ordering the API uses (GET
    /v1/public/methodology). Its version is the Metric-Definitions-Version header of every response. The prose is
    docs/metrics.md.

        Attributes:
            version (str): The metric definitions version (YYYY-MM-DD: the day they last changed meaning); equal to the
                Metric-Definitions-Version header.
            header (Literal['Metric-Definitions-Version']): The response header that carries the version.
            documentation (str): Where the prose definitions live in the repository.
            days (str): How days are counted.
            run (MethodologyRun): What counts as a run.
            mention (MethodologyMention): What counts as a mention.
            windows (list[MethodologyMethodologyWindow]): The day ranges the metrics cover.
            periods (MethodologyPeriods): The interval parameter: one point per day, ISO week or calendar month.
            engine_filter (str): What engine_ids does to the numbers.
            freshness (MethodologyFreshness): How far behind the newest committed data a served body may be
                (docs/operations.md, "Bounded staleness").
            metrics (list[MethodologyMetricDefinition]):
            competitor_metrics (str): How the formulas apply to a competitor.
            rounding (MethodologyRounding): Values are not rounded.
            intervals (MethodologyIntervals): The Wilson score interval beside every share-of-runs rate.
            comparison (MethodologyComparison): Comparing two periods (compare, compare_start_date, compare_end_date): which
                period, which fields, and the interval of a difference of two rates.
            slices (MethodologySlices): The dimensions of a run, the filters on them and the breakdowns (docs/metrics.md,
                Filters and Breakdowns).
            signals (MethodologySignals): How /signals decides which changes between two periods are real (docs/metrics.md,
                Signals).
            string_order (str): How text is compared in orderings.
            orderings (list[MethodologyOrdering]): Every list of every endpoint in the order its items come back.
    """

    version: str
    header: Literal["Metric-Definitions-Version"]
    documentation: str
    days: str
    run: MethodologyRun
    mention: MethodologyMention
    windows: list[MethodologyMethodologyWindow]
    periods: MethodologyPeriods
    engine_filter: str
    freshness: MethodologyFreshness
    metrics: list[MethodologyMetricDefinition]
    competitor_metrics: str
    rounding: MethodologyRounding
    intervals: MethodologyIntervals
    comparison: MethodologyComparison
    slices: MethodologySlices
    signals: MethodologySignals
    string_order: str
    orderings: list[MethodologyOrdering]

    def to_dict(self) -> dict[str, Any]:
        version = self.version

        header = self.header

        documentation = self.documentation

        days = self.days

        run = self.run.to_dict()

        mention = self.mention.to_dict()

        windows = []
        for windows_item_data in self.windows:
            windows_item = windows_item_data.to_dict()
            windows.append(windows_item)

        periods = self.periods.to_dict()

        engine_filter = self.engine_filter

        freshness = self.freshness.to_dict()

        metrics = []
        for metrics_item_data in self.metrics:
            metrics_item = metrics_item_data.to_dict()
            metrics.append(metrics_item)

        competitor_metrics = self.competitor_metrics

        rounding = self.rounding.to_dict()

        intervals = self.intervals.to_dict()

        comparison = self.comparison.to_dict()

        slices = self.slices.to_dict()

        signals = self.signals.to_dict()

        string_order = self.string_order

        orderings = []
        for orderings_item_data in self.orderings:
            orderings_item = orderings_item_data.to_dict()
            orderings.append(orderings_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "version": version,
                "header": header,
                "documentation": documentation,
                "days": days,
                "run": run,
                "mention": mention,
                "windows": windows,
                "periods": periods,
                "engine_filter": engine_filter,
                "freshness": freshness,
                "metrics": metrics,
                "competitor_metrics": competitor_metrics,
                "rounding": rounding,
                "intervals": intervals,
                "comparison": comparison,
                "slices": slices,
                "signals": signals,
                "string_order": string_order,
                "orderings": orderings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.methodology_comparison import MethodologyComparison  # noqa: PLC0415
        from ..models.methodology_freshness import MethodologyFreshness  # noqa: PLC0415
        from ..models.methodology_intervals import MethodologyIntervals  # noqa: PLC0415
        from ..models.methodology_mention import MethodologyMention  # noqa: PLC0415
        from ..models.methodology_methodology_window import MethodologyMethodologyWindow  # noqa: PLC0415
        from ..models.methodology_metric_definition import MethodologyMetricDefinition  # noqa: PLC0415
        from ..models.methodology_ordering import MethodologyOrdering  # noqa: PLC0415
        from ..models.methodology_periods import MethodologyPeriods  # noqa: PLC0415
        from ..models.methodology_rounding import MethodologyRounding  # noqa: PLC0415
        from ..models.methodology_run import MethodologyRun  # noqa: PLC0415
        from ..models.methodology_signals import MethodologySignals  # noqa: PLC0415
        from ..models.methodology_slices import MethodologySlices  # noqa: PLC0415

        d = dict(src_dict)
        version = d.pop("version")

        header = cast(Literal["Metric-Definitions-Version"], d.pop("header"))
        if header != "Metric-Definitions-Version":
            raise ValueError(f"header must match const 'Metric-Definitions-Version', got '{header}'")

        documentation = d.pop("documentation")

        days = d.pop("days")

        run = MethodologyRun.from_dict(d.pop("run"))

        mention = MethodologyMention.from_dict(d.pop("mention"))

        windows = []
        _windows = d.pop("windows")
        for windows_item_data in _windows:
            windows_item = MethodologyMethodologyWindow.from_dict(windows_item_data)

            windows.append(windows_item)

        periods = MethodologyPeriods.from_dict(d.pop("periods"))

        engine_filter = d.pop("engine_filter")

        freshness = MethodologyFreshness.from_dict(d.pop("freshness"))

        metrics = []
        _metrics = d.pop("metrics")
        for metrics_item_data in _metrics:
            metrics_item = MethodologyMetricDefinition.from_dict(metrics_item_data)

            metrics.append(metrics_item)

        competitor_metrics = d.pop("competitor_metrics")

        rounding = MethodologyRounding.from_dict(d.pop("rounding"))

        intervals = MethodologyIntervals.from_dict(d.pop("intervals"))

        comparison = MethodologyComparison.from_dict(d.pop("comparison"))

        slices = MethodologySlices.from_dict(d.pop("slices"))

        signals = MethodologySignals.from_dict(d.pop("signals"))

        string_order = d.pop("string_order")

        orderings = []
        _orderings = d.pop("orderings")
        for orderings_item_data in _orderings:
            orderings_item = MethodologyOrdering.from_dict(orderings_item_data)

            orderings.append(orderings_item)

        methodology = cls(
            version=version,
            header=header,
            documentation=documentation,
            days=days,
            run=run,
            mention=mention,
            windows=windows,
            periods=periods,
            engine_filter=engine_filter,
            freshness=freshness,
            metrics=metrics,
            competitor_metrics=competitor_metrics,
            rounding=rounding,
            intervals=intervals,
            comparison=comparison,
            slices=slices,
            signals=signals,
            string_order=string_order,
            orderings=orderings,
        )

        return methodology
