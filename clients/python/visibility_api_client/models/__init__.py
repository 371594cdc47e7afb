"""Contains all the data models used in inputs/outputs"""

from .citation_item import CitationItem
from .comparison_period import ComparisonPeriod
from .competitor_ranking import CompetitorRanking
from .competitor_ranking_entity_type import CompetitorRankingEntityType
from .competitor_rankings_compare import CompetitorRankingsCompare
from .competitors_item import CompetitorsItem
from .confidence_interval import ConfidenceInterval
from .daily_score import DailyScore
from .daily_scores_interval import DailyScoresInterval
from .difference_interval import DifferenceInterval
from .dimensions import Dimensions
from .dimensions_dimension_country import DimensionsDimensionCountry
from .dimensions_dimension_model import DimensionsDimensionModel
from .dimensions_dimension_persona import DimensionsDimensionPersona
from .dimensions_dimension_surface import DimensionsDimensionSurface
from .dimensions_dimension_surface_surface import DimensionsDimensionSurfaceSurface
from .engines_item import EnginesItem
from .error_response import ErrorResponse
from .forum_lead_item import ForumLeadItem
from .forum_lead_item_intent import ForumLeadItemIntent
from .forum_lead_item_status import ForumLeadItemStatus
from .forum_metrics import ForumMetrics
from .forum_metrics_forum_platform_count_item import ForumMetricsForumPlatformCountItem
from .forum_opportunity_item import ForumOpportunityItem
from .forum_opportunity_item_intent import ForumOpportunityItemIntent
from .forum_opportunity_item_status import ForumOpportunityItemStatus
from .mention_item import MentionItem
from .mention_item_entity_type import MentionItemEntityType
from .mentions_entity_type import MentionsEntityType
from .methodology import Methodology
from .methodology_comparison import MethodologyComparison
from .methodology_freshness import MethodologyFreshness
from .methodology_intervals import MethodologyIntervals
from .methodology_intervals_interval_counts import MethodologyIntervalsIntervalCounts
from .methodology_mention import MethodologyMention
from .methodology_methodology_window import MethodologyMethodologyWindow
from .methodology_methodology_window_name import MethodologyMethodologyWindowName
from .methodology_metric_definition import MethodologyMetricDefinition
from .methodology_ordering import MethodologyOrdering
from .methodology_ordering_order_key import MethodologyOrderingOrderKey
from .methodology_ordering_order_key_direction import MethodologyOrderingOrderKeyDirection
from .methodology_periods import MethodologyPeriods
from .methodology_periods_values_item import MethodologyPeriodsValuesItem
from .methodology_rounding import MethodologyRounding
from .methodology_run import MethodologyRun
from .methodology_signals import MethodologySignals
from .methodology_slices import MethodologySlices
from .openapi_response_200 import OpenapiResponse200
from .project import Project
from .prompts_item import PromptsItem
from .rate_change import RateChange
from .referrer_item import ReferrerItem
from .run_group import RunGroup
from .run_group_prompt_runs_item import RunGroupPromptRunsItem
from .run_group_prompt_runs_item_status import RunGroupPromptRunsItemStatus
from .run_group_status import RunGroupStatus
from .run_results_item import RunResultsItem
from .run_results_item_citations_item import RunResultsItemCitationsItem
from .run_results_item_mentions_item import RunResultsItemMentionsItem
from .run_results_item_mentions_item_entity_type import RunResultsItemMentionsItemEntityType
from .run_results_item_status import RunResultsItemStatus
from .runs_item import RunsItem
from .runs_item_status import RunsItemStatus
from .segment_analytics_compare import SegmentAnalyticsCompare
from .segment_analytics_item import SegmentAnalyticsItem
from .segments_item import SegmentsItem
from .signal_rate import SignalRate
from .signals import Signals
from .signals_compare import SignalsCompare
from .signals_signal import SignalsSignal
from .signals_signal_delta_ci import SignalsSignalDeltaCi
from .signals_signal_entity_type import SignalsSignalEntityType
from .signals_signal_metric import SignalsSignalMetric
from .terms_item import TermsItem
from .terms_item_kind import TermsItemKind
from .timeseries_interval import TimeseriesInterval
from .timeseries_point import TimeseriesPoint
from .timeseries_point_timeseries_engine import TimeseriesPointTimeseriesEngine
from .visibility_compare import VisibilityCompare
from .visibility_group_by_item import VisibilityGroupByItem
from .visibility_report import VisibilityReport
from .visibility_report_engine_breakdown import VisibilityReportEngineBreakdown
from .visibility_report_prompt_breakdown import VisibilityReportPromptBreakdown
from .visibility_report_top_competitor import VisibilityReportTopCompetitor
from .visibility_report_visibility_group import VisibilityReportVisibilityGroup
from .warm_lead_item import WarmLeadItem
from .warm_lead_item_platform import WarmLeadItemPlatform

__all__ = (
    "CitationItem",
    "ComparisonPeriod",
    "CompetitorRanking",
    "CompetitorRankingEntityType",
    "CompetitorRankingsCompare",
    "CompetitorsItem",
    "ConfidenceInterval",
    "DailyScore",
    "DailyScoresInterval",
    "DifferenceInterval",
    "Dimensions",
    "DimensionsDimensionCountry",
    "DimensionsDimensionModel",
    "DimensionsDimensionPersona",
    "DimensionsDimensionSurface",
    "DimensionsDimensionSurfaceSurface",
    "EnginesItem",
    "ErrorResponse",
    "ForumLeadItem",
    "ForumLeadItemIntent",
    "ForumLeadItemStatus",
    "ForumMetrics",
    "ForumMetricsForumPlatformCountItem",
    "ForumOpportunityItem",
    "ForumOpportunityItemIntent",
    "ForumOpportunityItemStatus",
    "MentionItem",
    "MentionItemEntityType",
    "MentionsEntityType",
    "Methodology",
    "MethodologyComparison",
    "MethodologyFreshness",
    "MethodologyIntervals",
    "MethodologyIntervalsIntervalCounts",
    "MethodologyMention",
    "MethodologyMethodologyWindow",
    "MethodologyMethodologyWindowName",
    "MethodologyMetricDefinition",
    "MethodologyOrdering",
    "MethodologyOrderingOrderKey",
    "MethodologyOrderingOrderKeyDirection",
    "MethodologyPeriods",
    "MethodologyPeriodsValuesItem",
    "MethodologyRounding",
    "MethodologyRun",
    "MethodologySignals",
    "MethodologySlices",
    "OpenapiResponse200",
    "Project",
    "PromptsItem",
    "RateChange",
    "ReferrerItem",
    "RunGroup",
    "RunGroupPromptRunsItem",
    "RunGroupPromptRunsItemStatus",
    "RunGroupStatus",
    "RunResultsItem",
    "RunResultsItemCitationsItem",
    "RunResultsItemMentionsItem",
    "RunResultsItemMentionsItemEntityType",
    "RunResultsItemStatus",
    "RunsItem",
    "RunsItemStatus",
    "SegmentAnalyticsCompare",
    "SegmentAnalyticsItem",
    "SegmentsItem",
    "SignalRate",
    "Signals",
    "SignalsCompare",
    "SignalsSignal",
    "SignalsSignalDeltaCi",
    "SignalsSignalEntityType",
    "SignalsSignalMetric",
    "TermsItem",
    "TermsItemKind",
    "TimeseriesInterval",
    "TimeseriesPoint",
    "TimeseriesPointTimeseriesEngine",
    "VisibilityCompare",
    "VisibilityGroupByItem",
    "VisibilityReport",
    "VisibilityReportEngineBreakdown",
    "VisibilityReportPromptBreakdown",
    "VisibilityReportTopCompetitor",
    "VisibilityReportVisibilityGroup",
    "WarmLeadItem",
    "WarmLeadItemPlatform",
)
