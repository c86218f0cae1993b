"""JUnit XML as Jenkins and GitLab read it: ``testsuites`` / one ``testsuite`` per family /
one ``testcase`` per item (classname = family, name = item); a regression is a
``<failure>``, an ignored item ``<skipped>``; warnings pass with a ``<system-out>`` note."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .model import Report, fmt_pct, fmt_us


def render(report: Report) -> str:
    """The XML document (UTF-8 declaration, two-space indent)."""
    items = report.items()
    root = ET.Element("testsuites", name=f"loganalyze {report.command}")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    families = []
    for r in items:
        if r["family"] not in families:
            families.append(r["family"])
    stat = report.statistic
    for family in families:
        suite = ET.SubElement(root, "testsuite", name=family)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        for r in (x for x in items if x["family"] == family):
            case = ET.SubElement(suite, "testcase", classname=family, name=r["item"], time="0")
            counts["tests"] += 1
            text = (f"{stat} per call: {fmt_us(r[f'baseline_{stat}_us']) or '-'} us -> "
                    f"{fmt_us(r[f'candidate_{stat}_us']) or '-'} us ({fmt_pct(r['delta_pct']) or r['status']}); "
                    f"calls {r['baseline_count']} -> {r['candidate_count']}")
            verdict = r.get("verdict")
            if verdict == "fail":
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", type="regression",
                                        message=f"{r['item']}: {fmt_pct(r['delta_pct'])} per-call {stat}")
                failure.text = f"{text}; {r['reason']}"
            elif verdict == "ignored":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=r["reason"])
            else:
                out = ET.SubElement(case, "system-out")
                out.text = text + (f"; {verdict}: {r['reason']}" if verdict else "")
        for key in counts:
            totals[key] += counts[key]
        suite.set("tests", str(counts["tests"]))
        suite.set("failures", str(counts["failures"]))
        suite.set("errors", "0")
        suite.set("skipped", str(counts["skipped"]))
        suite.set("time", "0")
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    root.set("skipped", str(totals["skipped"]))
    root.set("time", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
