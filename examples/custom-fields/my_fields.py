"""Fields of my own for papersift: `papersift run --fields examples/custom-fields/my_fields.py`.

One pydantic model; each field says, inside Annotated, how code grounds it in the
abstract. The descriptions are written for the model: they are sent with the draft schema.
"""

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from papersift.schemas.fields import Choice, Flag, Name, Number, Phrase


class MyFields(BaseModel):
    """What this project wants besides papersift's built-in fields."""

    baselines: Annotated[list[str], Name()] = Field(
        default_factory=list, max_length=4,
        description="Names of prior methods the paper compares against, as written.")
    model_sizes: Annotated[list[str], Number()] = Field(
        default_factory=list, max_length=3,
        description="Parameter counts of the models it trains or evaluates, as written "
        "without the unit: '7' for '7B'.")
    limitation: Annotated[list[str], Phrase()] = Field(
        default_factory=list, max_length=1,
        description="A limitation the abstract admits, in its own words.")
    proves_theory: Annotated[bool, Flag("prove", "theorem", "bound")] = Field(
        description="true if the paper proves a theoretical result.")
    setting: Annotated[Literal["supervised", "self-supervised", "reinforcement", "other"],
                       Choice()] = Field(
        description="The learning setting the paper works in.")
