#!/usr/bin/env python3
"""A screenshot of the built site for the README (docs/img/), taken in headless chromium.

    make book
    python scripts/site_screenshot.py                       # chapter 2, its first chart
    python scripts/site_screenshot.py --page book/intro.html --out docs/img/site-intro.png

The site in ``_build/html`` is served on 127.0.0.1 and opened in Debian's chromium
(Playwright, as ``tests/test_site.py`` drives it) with every non-local request aborted,
in a light colour scheme at 1200 x 760 CSS pixels. Every Predict box is answered with
its "see it without guessing" button, so no chart is veiled; ``--scroll-to`` names the
element the shot starts above (a CSS selector; the first chart by default). The file is written only
to a new path or over a PNG (another kind of file there is refused in one line).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser_helpers import CHROMIUM, CHROMIUM_ARGS, SITE, serve

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VIEWPORT = {"width": 1200, "height": 760}


def fail(message: str) -> None:
    print(f"site_screenshot: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--page", default="book/ch02-admission-and-preemption.html",
                        help="a page of the built site, relative to _build/html")
    parser.add_argument("--out", default=str(ROOT / "docs" / "img" / "site-ch02.png"),
                        help="the PNG to write")
    parser.add_argument("--scroll-to", default=".vega-embed",
                        help="CSS selector of the element to bring into view ('' for the top)")
    args = parser.parse_args(argv)
    page_file = SITE / args.page
    if not page_file.is_file():
        fail(f"--page {args.page!r}: no such page in {SITE} (run `make book` first)")
    if not CHROMIUM.exists():
        fail(f"no chromium at {CHROMIUM}: apt-get install chromium (or set KVBOOK_CHROMIUM)")
    out = Path(args.out)
    if out.exists() and (not out.is_file() or out.read_bytes()[:8] != PNG_SIGNATURE):
        fail(f"--out {args.out!r}: exists and is not a PNG file; give a new path or a PNG to replace")
    out.parent.mkdir(parents=True, exist_ok=True)

    from playwright.sync_api import sync_playwright

    with serve(SITE) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT, color_scheme="light", device_scale_factor=1)
            context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base)
                          else route.abort())
            page = context.new_page()
            page.goto(f"{base}/{args.page}", wait_until="load")
            page.wait_for_timeout(1500)                     # MathJax and the charts draw
            # each Predict box: its "see it without guessing" button
            page.evaluate("""() => document.querySelectorAll('form.kvbook-guess .kvbook-guess-skip')
                .forEach(button => button.click())""")
            if args.scroll_to:
                target = page.locator(args.scroll_to).first
                if target.count() == 0:
                    fail(f"--scroll-to {args.scroll_to!r}: no such element on {args.page}")
                target.scroll_into_view_if_needed()
                page.evaluate("window.scrollBy(0, -140)")  # the heading above it
                page.wait_for_timeout(500)
            png = page.screenshot(type="png")
        finally:
            browser.close()
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(png)
    tmp.replace(out)
    print(f"{out} ({len(png):,} B)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
