from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define

from ..models.runs_item_status import RunsItemStatus

T = TypeVar("T", bound="RunsItem")


@_attrs_define
class RunsItem:
    """
    Attributes:
        id (UUID):
        project_id (UUID):
        status (RunsItemStatus):
        trigger (None | str):
        started_at (datetime.datetime):
        completed_at (datetime.datetime | None):
        prompt_run_count (int):
        succeeded_count (int):
        failed_count (int):
    """

    id: UUID
    project_id: UUID
    status: RunsItemStatus
    trigger: None | str
    started_at: datetime.datetime
    completed_at: datetime.datetime | None
    prompt_run_count: int
    succeeded_count: int
    failed_count: int

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
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        project_id = UUID(d.pop("project_id"))

        status = RunsItemStatus(d.pop("status"))

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

        runs_item = cls(
            id=id,
            project_id=project_id,
            status=status,
            trigger=trigger,
            started_at=started_at,
            completed_at=completed_at,
            prompt_run_count=prompt_run_count,
            succeeded_count=succeeded_count,
            failed_count=failed_count,
        )

        return runs_item
