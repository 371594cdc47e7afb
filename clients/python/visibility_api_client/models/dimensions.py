from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.dimensions_dimension_country import DimensionsDimensionCountry
    from ..models.dimensions_dimension_model import DimensionsDimensionModel
    from ..models.dimensions_dimension_persona import DimensionsDimensionPersona
    from ..models.dimensions_dimension_surface import DimensionsDimensionSurface


T = TypeVar("T", bound="Dimensions")


@_attrs_define
class Dimensions:
    """The countries, personas, models and surfaces the project's counted runs name (all its history), each with its number
    of runs, by value: what the country, persona and model filters can be given. A run that names none of a dimension is
    in none of its lists. See docs/metrics.md#dimensions.

        Attributes:
            project_id (UUID):
            countries (list[DimensionsDimensionCountry]):
            personas (list[DimensionsDimensionPersona]):
            models (list[DimensionsDimensionModel]):
            surfaces (list[DimensionsDimensionSurface]):
    """

    project_id: UUID
    countries: list[DimensionsDimensionCountry]
    personas: list[DimensionsDimensionPersona]
    models: list[DimensionsDimensionModel]
    surfaces: list[DimensionsDimensionSurface]

    def to_dict(self) -> dict[str, Any]:
        project_id = str(self.project_id)

        countries = []
        for countries_item_data in self.countries:
            countries_item = countries_item_data.to_dict()
            countries.append(countries_item)

        personas = []
        for personas_item_data in self.personas:
            personas_item = personas_item_data.to_dict()
            personas.append(personas_item)

        models = []
        for models_item_data in self.models:
            models_item = models_item_data.to_dict()
            models.append(models_item)

        surfaces = []
        for surfaces_item_data in self.surfaces:
            surfaces_item = surfaces_item_data.to_dict()
            surfaces.append(surfaces_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "project_id": project_id,
                "countries": countries,
                "personas": personas,
                "models": models,
                "surfaces": surfaces,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dimensions_dimension_country import DimensionsDimensionCountry  # noqa: PLC0415
        from ..models.dimensions_dimension_model import DimensionsDimensionModel  # noqa: PLC0415
        from ..models.dimensions_dimension_persona import DimensionsDimensionPersona  # noqa: PLC0415
        from ..models.dimensions_dimension_surface import DimensionsDimensionSurface  # noqa: PLC0415

        d = dict(src_dict)
        project_id = UUID(d.pop("project_id"))

        countries = []
        _countries = d.pop("countries")
        for countries_item_data in _countries:
            countries_item = DimensionsDimensionCountry.from_dict(countries_item_data)

            countries.append(countries_item)

        personas = []
        _personas = d.pop("personas")
        for personas_item_data in _personas:
            personas_item = DimensionsDimensionPersona.from_dict(personas_item_data)

            personas.append(personas_item)

        models = []
        _models = d.pop("models")
        for models_item_data in _models:
            models_item = DimensionsDimensionModel.from_dict(models_item_data)

            models.append(models_item)

        surfaces = []
        _surfaces = d.pop("surfaces")
        for surfaces_item_data in _surfaces:
            surfaces_item = DimensionsDimensionSurface.from_dict(surfaces_item_data)

            surfaces.append(surfaces_item)

        dimensions = cls(
            project_id=project_id,
            countries=countries,
            personas=personas,
            models=models,
            surfaces=surfaces,
        )

        return dimensions
