"""The offline tools: figures computed from the data set, clear errors for bad input."""

from __future__ import annotations

import json
import math

import pytest

from engram import InvalidInputError, NotFoundError
from engram.agent import load_market_data, make_tools
from engram.agent._tools import annualised_volatility, max_drawdown, price_stats


def _invoke(name: str, args: dict[str, object]) -> dict[str, object]:
    tool = {t.name: t for t in make_tools()}[name]
    result = json.loads(tool.invoke(args))
    assert isinstance(result, dict)
    return result


def test_price_history_matches_the_csv() -> None:
    bars = load_market_data().prices["NVDA"]
    stats = _invoke("get_price_history", {"ticker": "nvda"})
    assert stats["ticker"] == "NVDA" and stats["trading_days"] == len(bars)
    assert stats["first_close"] == bars[0].close and stats["last_close"] == bars[-1].close
    expected = round((bars[-1].close / bars[0].close - 1) * 100, 2)
    assert stats["return_pct"] == expected
    assert stats["high"] == max(b.high for b in bars) and stats["low"] == min(b.low for b in bars)
    assert stats["sma_20"] == round(sum(b.close for b in bars[-20:]) / 20, 2)


def test_price_history_window() -> None:
    stats = _invoke(
        "get_price_history", {"ticker": "AMD", "start": "2024-03-01", "end": "2024-03-29"}
    )
    assert (stats["start"], stats["end"]) == ("2024-03-01", "2024-03-29")
    assert stats["trading_days"] == 21
    with pytest.raises(InvalidInputError):
        price_stats(load_market_data(), "AMD", "2030-01-01", None)


def test_drawdown_and_volatility_on_known_series() -> None:
    assert max_drawdown([100, 120, 90, 130, 65]) == -50.0
    assert max_drawdown([1, 2, 3]) == 0.0
    assert annualised_volatility([10.0, 10.0, 10.0]) == 0.0
    up_down = [100.0, 110.0, 100.0, 110.0]
    step = math.log(1.1)
    sd = math.sqrt(sum((x - step / 3) ** 2 for x in (step, -step, step)) / 2)
    assert annualised_volatility(up_down) == round(sd * math.sqrt(252) * 100, 2)


def test_fundamentals_and_news() -> None:
    funds = _invoke("get_fundamentals", {"ticker": "INTC"})
    assert funds["name"] == "Intel Corp." and "AMD" in funds["peers"]
    news = _invoke("get_news", {"ticker": "AAPL", "limit": 2})
    dates = [h["date"] for h in news["headlines"]]
    assert len(dates) == 2 and dates == sorted(dates, reverse=True)
    mean = sum(h["sentiment"] for h in news["headlines"]) / 2
    assert news["mean_sentiment"] == round(mean, 2)


def test_peer_comparison_ranks_and_expands_a_single_ticker() -> None:
    table = _invoke("compare_peers", {"tickers": ["NVDA", "INTC", "nvda"]})
    assert table["tickers"] == ["NVDA", "INTC"]
    best = max(table["rows"], key=lambda r: r["return_pct"])["ticker"]
    assert table["best_return"] == best
    alone = _invoke("compare_peers", {"tickers": ["MSFT"]})
    assert alone["tickers"][0] == "MSFT" and len(alone["tickers"]) == 4


def test_unknown_ticker_is_a_clear_error() -> None:
    with pytest.raises(NotFoundError, match="unknown ticker 'ZZZZ'"):
        _invoke("get_fundamentals", {"ticker": "zzzz"})
    with pytest.raises(InvalidInputError):
        _invoke("get_news", {"ticker": "AMD", "limit": 0})
