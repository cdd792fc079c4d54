"""A script for Chromium: each element a selector finds, with its text as a selection of it reads (what a copy takes)
and as it is, and its lines (the text of each, by where its characters are drawn); and how far the page scrolls
sideways. Shared by the reader's phone and tablet tests of headings that must break only where they may."""

from __future__ import annotations

import json


def drawn_lines(selector: str, shown_if: str, block: str) -> str:
    """The script for the elements ``selector`` finds; the one whose text ends with ``shown_if`` scrolled into view
    (``block``: ``start`` or ``center``), for the screenshot."""
    return f"""[[...document.querySelectorAll({json.dumps(selector)})].map((code) => {{
  const range = document.createRange(); range.selectNodeContents(code);
  const picked = getSelection(); picked.removeAllRanges(); picked.addRange(range); const copied = picked.toString();
  picked.removeAllRanges();
  const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT), lines = [];
  let top = null;
  for (let node = walk.nextNode(); node; node = walk.nextNode())
    for (let i = 0; i < node.data.length; i++) {{
      const one = document.createRange(); one.setStart(node, i); one.setEnd(node, i + 1);
      const box = [...one.getClientRects()].find((r) => r.width > 0), at = box ? Math.round(box.top) : top;
      if (at !== top || !lines.length) {{ lines.push(''); top = at; }}
      lines[lines.length - 1] += node.data[i]; }}
  if (code.textContent.endsWith({json.dumps(shown_if)})) code.scrollIntoView({{block: {json.dumps(block)}}});
  return [copied, code.textContent, lines]; }}),
  document.scrollingElement.scrollWidth - document.documentElement.clientWidth]"""
