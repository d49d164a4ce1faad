"""Generate the synthetic offline market data set in ``engram/agent/data/``.

Run ``python -m engram.agent._generate`` to rewrite the files; the output is a pure
function of :data:`SEED` and the tables below (``random.Random`` is stable across
Python versions), so re-running it reproduces the shipped files byte for byte.
The numbers are synthetic: they are not real market data and not advice.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

SEED = 20240102
START = date(2024, 1, 2)
TRADING_DAYS = 126
DATA_DIR = Path(__file__).with_name("data")


@dataclass(frozen=True, slots=True)
class Company:
    """The fixed profile a ticker's synthetic series is drawn around."""

    ticker: str
    name: str
    sector: str
    industry: str
    start_price: float
    drift: float
    volatility: float
    peers: tuple[str, ...]


_SEMIS = ("NVDA", "AMD", "INTC", "TSM", "AVGO", "QCOM")
_SOFTWARE = ("MSFT", "ORCL", "GOOGL", "META")
_HARDWARE = ("AAPL", "AMZN")

COMPANIES: tuple[Company, ...] = (
    Company("NVDA", "NVIDIA Corp.", "Technology", "Semiconductors", 48.0, 0.0045, 0.032, _SEMIS),
    Company(
        "AMD",
        "Advanced Micro Devices",
        "Technology",
        "Semiconductors",
        140.0,
        0.0012,
        0.030,
        _SEMIS,
    ),
    Company("INTC", "Intel Corp.", "Technology", "Semiconductors", 48.0, -0.0030, 0.024, _SEMIS),
    Company(
        "TSM",
        "Taiwan Semiconductor Mfg.",
        "Technology",
        "Semiconductors",
        105.0,
        0.0030,
        0.022,
        _SEMIS,
    ),
    Company("AVGO", "Broadcom Inc.", "Technology", "Semiconductors", 112.0, 0.0025, 0.024, _SEMIS),
    Company("QCOM", "Qualcomm Inc.", "Technology", "Semiconductors", 145.0, 0.0018, 0.021, _SEMIS),
    Company("MSFT", "Microsoft Corp.", "Technology", "Software", 372.0, 0.0008, 0.014, _SOFTWARE),
    Company("ORCL", "Oracle Corp.", "Technology", "Software", 104.0, 0.0020, 0.019, _SOFTWARE),
    Company(
        "GOOGL",
        "Alphabet Inc.",
        "Communication",
        "Internet Services",
        138.0,
        0.0015,
        0.018,
        _SOFTWARE,
    ),
    Company(
        "META",
        "Meta Platforms",
        "Communication",
        "Internet Services",
        346.0,
        0.0020,
        0.022,
        _SOFTWARE,
    ),
    Company(
        "AAPL", "Apple Inc.", "Technology", "Consumer Hardware", 185.0, 0.0004, 0.015, _HARDWARE
    ),
    Company(
        "AMZN", "Amazon.com Inc.", "Consumer", "Internet Retail", 149.0, 0.0012, 0.018, _HARDWARE
    ),
)

_GOOD = (
    "{name} beats quarterly revenue estimates on strong demand",
    "Analysts raise price targets for {name} after product launch",
    "{name} announces expanded buyback programme",
    "{name} wins a multi-year supply agreement",
)
_BAD = (
    "{name} shares slip as guidance disappoints",
    "Regulators open an inquiry into {name} pricing practices",
    "{name} delays next-generation product roadmap",
    "Supply constraints weigh on {name} margins",
)
_NEUTRAL = (
    "{name} to present at an industry conference",
    "{name} names a new chief financial officer",
    "{name} schedules its quarterly earnings call",
)


def trading_days(start: date, count: int) -> list[date]:
    """The first ``count`` weekdays from ``start`` (the synthetic calendar has no holidays)."""
    days: list[date] = []
    day = start
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += timedelta(days=1)
    return days


def price_rows(rng: random.Random, company: Company, days: list[date]) -> list[list[object]]:
    """Daily OHLCV rows from a geometric random walk around the company's drift."""
    rows: list[list[object]] = []
    close = company.start_price
    for day in days:
        open_ = close * math.exp(rng.gauss(0.0, company.volatility / 4))
        close = open_ * math.exp(rng.gauss(company.drift, company.volatility))
        high = max(open_, close) * (1 + abs(rng.gauss(0.0, company.volatility / 3)))
        low = min(open_, close) * (1 - abs(rng.gauss(0.0, company.volatility / 3)))
        volume = int(rng.uniform(0.6, 1.4) * 40_000_000 * (100 / company.start_price) ** 0.5)
        rows.append(
            [
                company.ticker,
                day.isoformat(),
                *(round(x, 2) for x in (open_, high, low, close)),
                volume,
            ]
        )
    return rows


def fundamentals(rng: random.Random, company: Company, last_close: float) -> dict[str, object]:
    """A plausible-looking but synthetic fundamentals record."""
    eps = round(last_close / rng.uniform(14, 70), 2)
    shares_bn = rng.uniform(1.5, 16.0)
    return {
        "ticker": company.ticker,
        "name": company.name,
        "sector": company.sector,
        "industry": company.industry,
        "peers": [p for p in company.peers if p != company.ticker],
        "market_cap_bn": round(last_close * shares_bn, 1),
        "eps_ttm": eps,
        "pe_ratio": round(last_close / eps, 1),
        "revenue_growth_yoy": round(
            rng.uniform(-0.12, 0.9) if company.drift > 0.002 else rng.uniform(-0.15, 0.2), 3
        ),
        "gross_margin": round(rng.uniform(0.35, 0.78), 3),
        "operating_margin": round(rng.uniform(0.02, 0.5), 3),
        "debt_to_equity": round(rng.uniform(0.05, 1.8), 2),
        "dividend_yield": round(rng.choice((0.0, rng.uniform(0.002, 0.035))), 4),
    }


def news_items(rng: random.Random, company: Company, days: list[date]) -> list[dict[str, object]]:
    """Six dated headlines whose tone leans with the company's drift."""
    items: list[dict[str, object]] = []
    lean = max(-0.6, min(0.6, company.drift * 150))
    for day in sorted(rng.sample(days, 6)):
        roll = rng.uniform(-1, 1) + lean
        pool, sentiment = (
            (_GOOD, 0.6) if roll > 0.35 else (_BAD, -0.6) if roll < -0.35 else (_NEUTRAL, 0.0)
        )
        items.append(
            {
                "ticker": company.ticker,
                "date": day.isoformat(),
                "headline": rng.choice(pool).format(name=company.name),
                "sentiment": round(sentiment + rng.uniform(-0.3, 0.3), 2),
                "source": "synthetic",
            }
        )
    return items


def render() -> dict[str, str]:
    """The data files' contents, keyed by file name."""
    rng = random.Random(SEED)
    days = trading_days(START, TRADING_DAYS)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["ticker", "date", "open", "high", "low", "close", "volume"])
    funds: list[dict[str, object]] = []
    news: list[dict[str, object]] = []
    for company in COMPANIES:
        rows = price_rows(rng, company, days)
        writer.writerows(rows)
        last_close = rows[-1][5]
        assert isinstance(last_close, float)
        funds.append(fundamentals(rng, company, last_close))
        news.extend(news_items(rng, company, days))
    return {
        "prices.csv": out.getvalue(),
        "fundamentals.json": json.dumps(funds, indent=1) + "\n",
        "news.json": json.dumps(news, indent=1) + "\n",
    }


def main() -> None:
    """Write the data set next to this module."""
    DATA_DIR.mkdir(exist_ok=True)
    for name, text in render().items():
        (DATA_DIR / name).write_text(text, encoding="utf-8")
        print(f"wrote {DATA_DIR / name}")


if __name__ == "__main__":
    main()
