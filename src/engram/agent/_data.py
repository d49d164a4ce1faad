"""The offline market data set shipped in ``engram/agent/data/`` (synthetic; see DATA.md)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from engram.errors import InvalidInputError, NotFoundError


@dataclass(frozen=True, slots=True)
class Bar:
    """One trading day of one ticker."""

    date: str
    open: float
    high: float
    low: float
    close: float
    volume: int


@dataclass(frozen=True, slots=True)
class Headline:
    """One dated news item with a sentiment score in [-1, 1]."""

    date: str
    headline: str
    sentiment: float


@dataclass(frozen=True, slots=True)
class MarketData:
    """Prices, fundamentals and news, keyed by ticker."""

    prices: dict[str, tuple[Bar, ...]]
    fundamentals: dict[str, dict[str, Any]]
    news: dict[str, tuple[Headline, ...]]

    @property
    def tickers(self) -> tuple[str, ...]:
        """Every ticker the data set covers, sorted."""
        return tuple(sorted(self.fundamentals))

    def check(self, ticker: str) -> str:
        """Return the normalised ``ticker`` or raise if the data set lacks it."""
        if not isinstance(ticker, str) or not ticker.strip():
            raise InvalidInputError(f"ticker must be a non-empty string, got {ticker!r}")
        symbol = ticker.strip().upper()
        if symbol not in self.fundamentals:
            known = ", ".join(self.tickers)
            raise NotFoundError(f"unknown ticker {symbol!r}; the offline data set has: {known}")
        return symbol


def _read(name: str) -> str:
    return files("engram.agent").joinpath("data").joinpath(name).read_text(encoding="utf-8")


def _prices(text: str) -> dict[str, tuple[Bar, ...]]:
    series: dict[str, list[Bar]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        bar = Bar(
            row["date"],
            float(row["open"]),
            float(row["high"]),
            float(row["low"]),
            float(row["close"]),
            int(row["volume"]),
        )
        series.setdefault(row["ticker"], []).append(bar)
    return {ticker: tuple(bars) for ticker, bars in series.items()}


def _news(items: list[dict[str, Any]]) -> dict[str, tuple[Headline, ...]]:
    grouped: dict[str, list[Headline]] = {}
    for item in items:
        headline = Headline(item["date"], item["headline"], float(item["sentiment"]))
        grouped.setdefault(item["ticker"], []).append(headline)
    return {ticker: tuple(items) for ticker, items in grouped.items()}


@cache
def load_market_data() -> MarketData:
    """Load (once per process) the data set shipped with the package."""
    fundamentals = {rec["ticker"]: rec for rec in json.loads(_read("fundamentals.json"))}
    return MarketData(
        prices=_prices(_read("prices.csv")),
        fundamentals=fundamentals,
        news=_news(json.loads(_read("news.json"))),
    )
