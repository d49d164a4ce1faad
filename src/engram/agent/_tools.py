"""LangChain tools over the offline market data set.

Every tool returns a JSON string so that any chat model can read it and the
offline model can parse it back. The statistics are pure functions of the data.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from typing import Any

from langchain_core.tools import BaseTool, tool

from engram.agent._data import Bar, MarketData, load_market_data
from engram.errors import InvalidInputError

TRADING_DAYS_PER_YEAR = 252


def _pct(new: float, old: float) -> float:
    return round((new / old - 1.0) * 100.0, 2)


def max_drawdown(closes: list[float]) -> float:
    """The largest peak-to-trough fall, in percent (0 for a rising series)."""
    peak, worst = closes[0], 0.0
    for close in closes:
        peak = max(peak, close)
        worst = min(worst, close / peak - 1.0)
    return round(worst * 100.0, 2)


def annualised_volatility(closes: list[float]) -> float:
    """Standard deviation of daily log returns, annualised, in percent."""
    returns = [math.log(b / a) for a, b in itertools.pairwise(closes)]
    if len(returns) < 2:
        return 0.0
    return round(statistics.stdev(returns) * math.sqrt(TRADING_DAYS_PER_YEAR) * 100.0, 2)


def _window(bars: tuple[Bar, ...], start: str | None, end: str | None) -> list[Bar]:
    chosen = [
        b for b in bars if (start is None or b.date >= start) and (end is None or b.date <= end)
    ]
    if len(chosen) < 2:
        raise InvalidInputError(f"fewer than two trading days between {start} and {end}")
    return chosen


def price_stats(
    data: MarketData, ticker: str, start: str | None = None, end: str | None = None
) -> dict[str, Any]:
    """Trend, range, volatility and moving averages of one ticker over a window."""
    symbol = data.check(ticker)
    bars = _window(data.prices[symbol], start, end)
    closes = [b.close for b in bars]
    return {
        "ticker": symbol,
        "start": bars[0].date,
        "end": bars[-1].date,
        "trading_days": len(bars),
        "first_close": closes[0],
        "last_close": closes[-1],
        "return_pct": _pct(closes[-1], closes[0]),
        "high": max(b.high for b in bars),
        "low": min(b.low for b in bars),
        "sma_20": round(statistics.fmean(closes[-20:]), 2),
        "sma_50": round(statistics.fmean(closes[-50:]), 2),
        "volatility_pct": annualised_volatility(closes),
        "max_drawdown_pct": max_drawdown(closes),
        "avg_volume": int(statistics.fmean(b.volume for b in bars)),
    }


def news_digest(data: MarketData, ticker: str, limit: int = 5) -> dict[str, Any]:
    """The latest ``limit`` headlines of a ticker and their mean sentiment."""
    symbol = data.check(ticker)
    if limit < 1:
        raise InvalidInputError(f"limit must be at least 1, got {limit}")
    items = sorted(data.news.get(symbol, ()), key=lambda h: h.date, reverse=True)[:limit]
    mean = round(statistics.fmean(h.sentiment for h in items), 2) if items else 0.0
    return {
        "ticker": symbol,
        "mean_sentiment": mean,
        "headlines": [
            {"date": h.date, "headline": h.headline, "sentiment": h.sentiment} for h in items
        ],
    }


def peer_table(data: MarketData, tickers: list[str]) -> dict[str, Any]:
    """Side-by-side metrics for ``tickers``; one ticker is compared with its listed peers."""
    symbols = list(dict.fromkeys(data.check(t) for t in tickers))
    if len(symbols) == 1:
        symbols += list(data.fundamentals[symbols[0]]["peers"])[:3]
    rows = []
    for symbol in symbols:
        funds, stats = data.fundamentals[symbol], price_stats(data, symbol)
        rows.append(
            {
                "ticker": symbol,
                "return_pct": stats["return_pct"],
                "volatility_pct": stats["volatility_pct"],
                "pe_ratio": funds["pe_ratio"],
                "revenue_growth_yoy": funds["revenue_growth_yoy"],
                "operating_margin": funds["operating_margin"],
            }
        )
    best = max(rows, key=lambda r: r["return_pct"])["ticker"]
    cheapest = min(rows, key=lambda r: r["pe_ratio"])["ticker"]
    return {"tickers": symbols, "rows": rows, "best_return": best, "lowest_pe": cheapest}


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True)


def make_tools(data: MarketData | None = None) -> list[BaseTool]:
    """The Market Analyst's tools, bound to ``data`` (the shipped data set by default)."""
    market = data or load_market_data()

    @tool
    def get_price_history(ticker: str, start: str | None = None, end: str | None = None) -> str:
        """Price statistics of a ticker: return, range, volatility, moving averages, drawdown.

        Dates are ISO (YYYY-MM-DD); without them the whole history is used.
        """
        return _dump(price_stats(market, ticker, start, end))

    @tool
    def get_fundamentals(ticker: str) -> str:
        """Fundamentals of a ticker: sector, peers, market cap, P/E, growth, margins, leverage."""
        return _dump(dict(market.fundamentals[market.check(ticker)]))

    @tool
    def get_news(ticker: str, limit: int = 5) -> str:
        """The latest headlines of a ticker with sentiment scores in [-1, 1]."""
        return _dump(news_digest(market, ticker, limit))

    @tool
    def compare_peers(tickers: list[str]) -> str:
        """Compare tickers side by side (one ticker is compared with its listed peers)."""
        return _dump(peer_table(market, tickers))

    return [get_price_history, get_fundamentals, get_news, compare_peers]
