"""The price table: what a model's tokens cost, normally and through the Batch API.

Prices are data (extract/prices.toml); a TOML file named by PAPERSIFT_PRICES overrides or
adds models, and a run's ``--price IN OUT`` overrides both for its model.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from papersift.errors import PapersiftError


@dataclass(frozen=True)
class Pricing:
    """US dollars per million prompt and completion tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return (prompt_tokens * self.input_per_mtok
                + completion_tokens * self.output_per_mtok) / 1e6


PRICES_FILE = Path(__file__).with_name("prices.toml")


class PriceError(PapersiftError):
    """A price file is unreadable or malformed."""


@dataclass(frozen=True)
class ModelPrice:
    input: float
    output: float
    batch_input: float
    batch_output: float

    def pricing(self, batch: bool = False) -> Pricing:
        if batch:
            return Pricing(self.batch_input, self.batch_output)
        return Pricing(self.input, self.output)


def _read(path: Path) -> dict[str, ModelPrice]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise PriceError(f"{path}: cannot read the price table: {error}") from error
    table: dict[str, ModelPrice] = {}
    for model, entry in (data.get("models") or {}).items():
        try:
            price_in, price_out = float(entry["input"]), float(entry["output"])
            table[model] = ModelPrice(
                price_in, price_out,
                float(entry.get("batch_input", price_in / 2)),
                float(entry.get("batch_output", price_out / 2)),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise PriceError(f"{path}: [models.{model!r}] needs numeric input and output "
                             f"prices per million tokens ({error})") from error
    return table


@cache
def _table(extra: str | None) -> dict[str, ModelPrice]:
    table = _read(PRICES_FILE)
    if extra:
        table.update(_read(Path(extra)))
    return table


def price_table() -> dict[str, ModelPrice]:
    """The packaged prices, overridden by the file PAPERSIFT_PRICES names."""
    return dict(_table(os.environ.get("PAPERSIFT_PRICES") or None))


def pricing_for(model: str, *, batch: bool = False,
                override: tuple[float, float] | None = None) -> Pricing | None:
    """The prices a run of ``model`` pays, or None when no price is known."""
    if override is not None:
        return Pricing(*override)
    price = price_table().get(model)
    return price.pricing(batch) if price is not None else None
