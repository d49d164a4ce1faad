"""Rules the offline model follows: plan, next tool call, report and review.

Pure functions of their text inputs, so the offline model is deterministic.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engram.agent._prompts import DISCLAIMER

Results = dict[str, dict[str, dict[str, Any]]]
"""Tool results by ticker, then by tool name (the peer table sits under ``"*"``)."""


_CONSERVATIVE = re.compile(r"\b(conservative|risk[- ]averse|low[- ]risk|cautious)\b", re.I)
_AGGRESSIVE = re.compile(r"\b(aggressive|high[- ]risk|risk[- ]seeking)\b", re.I)
_COMPETITORS = re.compile(r"\b(competitors?|competition|competitive|peers?)\b", re.I)
_DEEP = re.compile(r"\b(deep|detailed|in[- ]depth|thorough)\b", re.I)


@dataclass(frozen=True, slots=True)
class Tailoring:
    """What recalled user facts change in a plan (risk stance, competitors, depth)."""

    risk: str | None = None
    competitors: bool = False
    deep: bool = False

    @classmethod
    def from_facts(cls, facts: Sequence[str]) -> Tailoring:
        text = " ".join(facts)
        risk = "conservative" if _CONSERVATIVE.search(text) else None
        if risk is None and _AGGRESSIVE.search(text):
            risk = "aggressive"
        return cls(risk, bool(_COMPETITORS.search(text)), bool(_DEEP.search(text)))

    def notes(self) -> list[str]:
        """Unnumbered plan lines saying how the plan follows the user's preferences."""
        notes = []
        if self.risk:
            notes.append(f"Tailored: {self.risk} risk tolerance (downside risk weighed first)")
        if self.competitors:
            notes.append("Tailored: competitor analysis requested (peers compared)")
        if self.deep:
            notes.append("Tailored: in-depth analysis preferred (more headlines)")
        return notes


def plan_steps(tickers: list[str], facts: Sequence[str] = ()) -> list[str]:
    """One price, fundamentals and news step per ticker, then a peer comparison;
    recalled ``facts`` tailor the reasons and depth (see :class:`Tailoring`)."""
    tailor = Tailoring.from_facts(facts)
    risk = f", drawdown first for a {tailor.risk} investor" if tailor.risk else ""
    steps: list[str] = []
    for ticker in tickers:
        arg = json.dumps({"ticker": ticker})
        steps.append(f"get_price_history {arg} - trend, range and volatility of {ticker}{risk}")
        steps.append(f"get_fundamentals {arg} - valuation, growth and margins of {ticker}")
        news = json.dumps({"ticker": ticker, "limit": 5 if tailor.deep else 3})
        steps.append(f"get_news {news} - recent headlines and their tone for {ticker}")
    peers = json.dumps({"tickers": tickers})
    why = "competitor analysis: rank" if tailor.competitors else "rank"
    steps.append(f"compare_peers {peers} - {why} the names against each other or their peers")
    return [*tailor.notes(), *(f"{i}. {step}" for i, step in enumerate(steps, start=1))]


def group_results(results: list[tuple[str, dict[str, Any]]]) -> Results:
    """Index tool results by ticker and tool name."""
    grouped: Results = defaultdict(dict)
    for name, value in results:
        grouped[str(value.get("ticker", "*"))][name] = value
    return grouped


def _tone(sentiment: float) -> str:
    return "positive" if sentiment > 0.15 else "negative" if sentiment < -0.15 else "mixed"


def _signed(value: float) -> str:
    return f"{value:+.2f}%"


def summary_line(ticker: str, got: dict[str, dict[str, Any]]) -> str:
    """One line per ticker: return, volatility, P/E and news tone, as far as known."""
    parts = [f"**{ticker}**"]
    if prices := got.get("get_price_history"):
        parts.append(f"{_signed(prices['return_pct'])} from {prices['start']} to {prices['end']}")
        parts.append(f"volatility {prices['volatility_pct']:.1f}%")
    if funds := got.get("get_fundamentals"):
        parts.append(f"P/E {funds['pe_ratio']}")
    if news := got.get("get_news"):
        parts.append(f"news tone {_tone(news['mean_sentiment'])} ({news['mean_sentiment']:+.2f})")
    return "- " + ", ".join(parts)


def ticker_section(ticker: str, got: dict[str, dict[str, Any]]) -> list[str]:
    """The per-ticker section of the brief."""
    name = got.get("get_fundamentals", {}).get("name", ticker)
    lines = [f"## {ticker}: {name}", ""]
    if p := got.get("get_price_history"):
        lines.append(
            f"Price: {p['first_close']:.2f} to {p['last_close']:.2f} ({_signed(p['return_pct'])}), "
            f"range {p['low']:.2f}-{p['high']:.2f}, 20-day average {p['sma_20']:.2f} vs 50-day "
            f"{p['sma_50']:.2f}, max drawdown {p['max_drawdown_pct']:.2f}%."
        )
    if f := got.get("get_fundamentals"):
        lines.append(
            f"Fundamentals: market cap {f['market_cap_bn']:.1f} bn, P/E {f['pe_ratio']}, revenue "
            f"growth {f['revenue_growth_yoy'] * 100:+.1f}% y/y, operating margin "
            f"{f['operating_margin'] * 100:.1f}%, debt/equity {f['debt_to_equity']:.2f}."
        )
    if n := got.get("get_news"):
        lines.append("News:")
        lines += [f"- {h['date']}: {h['headline']} ({h['sentiment']:+.2f})" for h in n["headlines"]]
    return [*lines, ""]


def peer_section(table: dict[str, Any]) -> list[str]:
    """The comparison table and its two conclusions."""
    lines = [
        "## Peer comparison",
        "",
        "| ticker | return % | volatility % | P/E | revenue growth | operating margin |",
        "|---|---|---|---|---|---|",
    ]
    for r in table["rows"]:
        lines.append(
            f"| {r['ticker']} | {r['return_pct']:+.2f} | {r['volatility_pct']:.1f} "
            f"| {r['pe_ratio']} | {r['revenue_growth_yoy'] * 100:+.1f}% "
            f"| {r['operating_margin'] * 100:.1f}% |"
        )
    lines += ["", f"Best return: {table['best_return']}. Lowest P/E: {table['lowest_pe']}.", ""]
    return lines


def write_report(tickers: list[str], results: list[tuple[str, dict[str, Any]]]) -> str:
    """The Markdown brief, written from the tool results by fixed rules."""
    grouped = group_results(results)
    lines = [f"# Market brief: {', '.join(tickers)}", "", "## Summary", ""]
    lines += [summary_line(t, grouped.get(t, {})) for t in tickers]
    lines.append("")
    for ticker in tickers:
        lines += ticker_section(ticker, grouped.get(ticker, {}))
    if table := grouped.get("*", {}).get("compare_peers"):
        lines += peer_section(table)
    lines.append(DISCLAIMER)
    return "\n".join(lines) + "\n"


def review_report(draft: str) -> dict[str, Any]:
    """Check a draft on its own: sections with figures, comparison, disclaimer."""
    title = re.search(r"^# Market brief: (.+)$", draft, re.M)
    tickers = [t.strip() for t in title.group(1).split(",")] if title else []
    issues = [] if title else ["the draft has no '# Market brief: ...' title"]
    for ticker in tickers:
        section = re.search(rf"^## {re.escape(ticker)}: .*?(?=^## |\Z)", draft, re.M | re.S)
        if not section or not re.search(r"\d", section.group(0).split("\n", 1)[-1]):
            issues.append(f"{ticker} has no section with figures")
    if len(tickers) > 1 and "## Peer comparison" not in draft:
        issues.append("several tickers but no peer comparison")
    if DISCLAIMER not in draft:
        issues.append("the disclaimer is missing")
    checks = len(tickers) + 3
    score = round(max(0.0, 1.0 - len(issues) / checks), 2)
    return {"verdict": "revise" if issues else "approve", "score": score, "issues": issues}
