from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.run_group_status import RunGroupStatus

if TYPE_CHECKING:
    from ..models.run_group_prompt_runs_item import RunGroupPromptRunsItem


T = TypeVar("T", bound="RunGroup")


@_attrs_define
class RunGroup:
    """A run group with its prompt runs, by completed_at then id.

    Attributes:
        id (UUID):
        project_id (UUID):
        status (RunGroupStatus):
        trigger (None | str):
        started_at (datetime.datetime):
        completed_at (datetime.datetime | None):
        prompt_run_count (int):
        succeeded_count (int):
        failed_count (int):
        prompt_runs (list[RunGroupPromptRunsItem]):
    """

    id: UUID
    project_id: UUID
    status: RunGroupStatus
    trigger: None | str
    started_at: datetime.datetime
    completed_at: datetime.datetime | None
    prompt_run_count: int
    succeeded_count: int
    failed_count: int
    prompt_runs: list[RunGroupPromptRunsItem]

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        project_id = str(self.project_id)

        status = self.status.value

        trigger: None | str
        trigger = self.trigger

        started_at = self.started_at.isoformat()

        completed_at: None | str
        if isinstance(self.completed_at, datetime.datetime):
            completed_at = self.completed_at.isoformat()
        else:
            completed_at = self.completed_at

        prompt_run_count = self.prompt_run_count

        succeeded_count = self.succeeded_count

        failed_count = self.failed_count

        prompt_runs = []
        for prompt_runs_item_data in self.prompt_runs:
            prompt_runs_item = prompt_runs_item_data.to_dict()
            prompt_runs.append(prompt_runs_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "project_id": project_id,
                "status": status,
                "trigger": trigger,
                "started_at": started_at,
                "completed_at": completed_at,
                "prompt_run_count": prompt_run_count,
                "succeeded_count": succeeded_count,
                "failed_count": failed_count,
                "prompt_runs": prompt_runs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.run_group_prompt_runs_item import RunGroupPromptRunsItem  # noqa: PLC0415

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        project_id = UUID(d.pop("project_id"))

        status = RunGroupStatus(d.pop("status"))

        def _parse_trigger(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        trigger = _parse_trigger(d.pop("trigger"))

        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))

        def _parse_completed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                completed_at_type_0 = datetime.datetime.fromisoformat(data)

                return completed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        completed_at = _parse_completed_at(d.pop("completed_at"))

        prompt_run_count = d.pop("prompt_run_count")

        succeeded_count = d.pop("succeeded_count")

        failed_count = d.pop("failed_count")

        prompt_runs = []
        _prompt_runs = d.pop("prompt_runs")
        for prompt_runs_item_data in _prompt_runs:
            prompt_runs_item = RunGroupPromptRunsItem.from_dict(prompt_runs_item_data)

            prompt_runs.append(prompt_runs_item)

        run_group = cls(
            id=id,
            project_id=project_id,
            status=status,
            trigger=trigger,
            started_at=started_at,
            completed_at=completed_at,
            prompt_run_count=prompt_run_count,
            succeeded_count=succeeded_count,
            failed_count=failed_count,
            prompt_runs=prompt_runs,
        )

        return run_group
