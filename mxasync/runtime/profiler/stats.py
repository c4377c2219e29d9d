"""MXNet's aggregate profile statistics: per domain and name, count and total/min/max/avg time in ms.

Ranges give times; a counter's entry gives its values' statistics (MXNet lists counters
among the times too). The JSON form is ``{"Time": {domain: {name: {...}}}, "Memory": {...},
"Unit": {"Time": "ms", "Memory": "kB"}}``.
"""

from __future__ import annotations

import json

__all__ = ["aggregate", "aggregate_json", "aggregate_table", "check_dumps_args", "SORT_KEYS"]

SORT_KEYS = {"total": "Total", "avg": "Avg", "min": "Min", "max": "Max", "count": "Count"}


def check_dumps_args(format: str, sort_by: str) -> None:  # noqa: A002
    # MXNet checks these with assert, so AssertionError is what its callers expect
    assert format in ("table", "json"), f"Invalid value provided for format: {format}. Support: 'table', 'json'"
    assert sort_by in SORT_KEYS, (f"Invalid value provided for sort_by: {sort_by}. "
                                  "Support: 'total', 'avg', 'min', 'max', 'count'")


def aggregate(records) -> dict[str, dict[str, dict[str, float]]]:
    """``{domain: {name: {Count, Total, Min, Max, Avg}}}`` from the profiler's records."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for r in records:
        if r.ph == "i":
            out.setdefault(r.domain, {})
            continue
        v = (r.t1 - r.t0) * 1e3 if r.ph == "X" else r.value
        s = out.setdefault(r.domain, {}).get(r.name)
        if s is None:
            out[r.domain][r.name] = {"Count": 1, "Total": v, "Min": v, "Max": v}
        else:
            s["Count"] += 1
            s["Total"] += v
            s["Min"] = min(s["Min"], v)
            s["Max"] = max(s["Max"], v)
    for names in out.values():
        for s in names.values():
            s["Avg"] = s["Total"] / s["Count"]
    return out


def _sorted(names: dict, sort_by: str, ascending: bool) -> list[tuple[str, dict]]:
    key = SORT_KEYS[sort_by]
    return sorted(names.items(), key=lambda kv: kv[1][key], reverse=not ascending)


def aggregate_json(records, sort_by: str = "total", ascending: bool = False) -> str:
    stats = aggregate(records)
    time_part = {}
    for domain in sorted(stats):
        time_part[domain] = {name: {"Count": s["Count"], "Total": round(s["Total"], 4), "Min": round(s["Min"], 4),
                                    "Max": round(s["Max"], 4), "Avg": round(s["Avg"], 4)}
                             for name, s in _sorted(stats[domain], sort_by, ascending)}
    # device memory is not tracked per allocation here: the section is present and empty
    doc = {"Time": time_part, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}
    return json.dumps(doc, indent=4)


def aggregate_table(records, sort_by: str = "total", ascending: bool = False) -> str:
    stats = aggregate(records)
    lines = ["", "Profile Statistics:", "\tNote the difference in units for different entries."]
    head = f"{'Name':<30}{'Total Count':>11}{'Time (ms)':>17}{'Min Time (ms)':>17}{'Max Time (ms)':>17}" \
           f"{'Avg Time (ms)':>17}"
    rule = f"{'----':<30}{'-----------':>11}{'---------':>17}{'-------------':>17}{'-------------':>17}" \
           f"{'-------------':>17}"
    for domain in sorted(stats):
        lines += [domain, "=================", head, rule]
        for name, s in _sorted(stats[domain], sort_by, ascending):
            lines.append(f"{name:<30}{s['Count']:>11}{s['Total']:>17.4f}{s['Min']:>17.4f}{s['Max']:>17.4f}"
                         f"{s['Avg']:>17.4f}")
        lines.append("")
    return "\n".join(lines) + "\n"
