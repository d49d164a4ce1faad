"""The shipped data set: reproducible from its generator, complete for every ticker."""

from __future__ import annotations

from importlib.resources import files

from engram.agent import _generate, load_market_data


def test_generator_reproduces_the_shipped_files_byte_for_byte() -> None:
    shipped = files("engram.agent").joinpath("data")
    for name, text in _generate.render().items():
        assert shipped.joinpath(name).read_text(encoding="utf-8") == text, name


def test_every_ticker_has_prices_fundamentals_and_news() -> None:
    data = load_market_data()
    assert len(data.tickers) >= 10
    assert {"NVDA", "AMD", "INTC", "AAPL", "MSFT"} <= set(data.tickers)
    for ticker in data.tickers:
        bars = data.prices[ticker]
        assert len(bars) == _generate.TRADING_DAYS
        assert all(b.low <= min(b.open, b.close) <= max(b.open, b.close) <= b.high for b in bars)
        assert [b.date for b in bars] == sorted(b.date for b in bars)
        assert (
            data.fundamentals[ticker]["peers"] and ticker not in data.fundamentals[ticker]["peers"]
        )
        assert len(data.news[ticker]) == 6


def test_data_md_states_provenance_and_licence() -> None:
    text = files("engram.agent").joinpath("data").joinpath("DATA.md").read_text(encoding="utf-8")
    assert "synthetic" in text.lower() and "not real market data" in text
    assert "Apache-2.0" in text and "_generate.py" in text
