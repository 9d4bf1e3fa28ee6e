#!/usr/bin/env python3
"""Draws icon.png, the MCP Bundle icon: a page of skills with a bookmark.

Standard library only (zlib + struct), deterministic: running it again gives
the same bytes. 512x512 is the size `mcpb validate` recommends.

    python3 packaging/mcpb/icon.py            # writes packaging/mcpb/icon.png
    python3 packaging/mcpb/icon.py OUT.png
"""

import math
import struct
import sys
import zlib
from pathlib import Path

SIZE = 512

# Colours (sRGB).
TOP_LEFT = (14, 165, 233)  # sky
BOTTOM_RIGHT = (91, 33, 182)  # violet
PAGE = (255, 255, 255)
LINE = (76, 81, 191)
RIBBON = (245, 158, 11)  # amber


def rounded_rect(px, py, x0, y0, x1, y1, r):
    """Signed distance from (px, py) to a rounded rectangle (negative inside)."""
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    hx, hy = (x1 - x0) / 2 - r, (y1 - y0) / 2 - r
    qx, qy = abs(px - cx) - hx, abs(py - cy) - hy
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    return outside + min(max(qx, qy), 0.0) - r


def ribbon(px, py, x0, y0, x1, y1, notch):
    """Signed distance (approximate, exact enough for 1-px antialiasing) to a
    bookmark: a rectangle whose bottom edge has a V cut of depth `notch`."""
    box = max(x0 - px, px - x1, y0 - py, py - y1)
    # The cut: the region below the two lines from the bottom corners to the
    # notch tip is outside.
    mx = (x0 + x1) / 2
    tip = y1 - notch
    half = (x1 - x0) / 2
    norm = math.hypot(notch, half)
    # Distance to the line through (x0, y1) and (mx, tip), positive below it.
    left = ((py - y1) * half + (px - x0) * notch) / norm
    right = ((py - y1) * half - (px - x1) * notch) / norm
    cut = min(left, right)
    return max(box, cut)


def coverage(d):
    """Antialiased coverage of a pixel whose centre is at signed distance d."""
    return min(max(0.5 - d, 0.0), 1.0)


def blend(dst, src, alpha):
    return tuple(d + (s - d) * alpha for d, s in zip(dst, src))


def pixel(x, y):
    px, py = x + 0.5, y + 0.5
    bg = coverage(rounded_rect(px, py, 0, 0, SIZE, SIZE, 112))
    if bg == 0.0:
        return (0, 0, 0, 0)
    t = (px + py) / (2 * SIZE)
    colour = tuple(a + (b - a) * t for a, b in zip(TOP_LEFT, BOTTOM_RIGHT))

    # A soft shadow under the page.
    shadow = rounded_rect(px, py - 10, 136, 96, 376, 424, 30)
    colour = blend(colour, (20, 10, 60), 0.28 * min(max(1.0 - shadow / 18, 0.0), 1.0))

    page = coverage(rounded_rect(px, py, 136, 88, 376, 416, 30))
    colour = blend(colour, PAGE, page)

    # Lines of text: one heading and four lines.
    for y0, width, thick in ((168, 104, 26), (226, 180, 16), (266, 160, 16), (306, 180, 16), (346, 120, 16)):
        d = rounded_rect(px, py, 176, y0, 176 + width, y0 + thick, thick / 2)
        colour = blend(colour, LINE, coverage(d) * page)

    colour = blend(colour, RIBBON, coverage(ribbon(px, py, 300, 70, 344, 186, 22)))
    return (*(round(c) for c in colour), round(255 * bg))


def png(width, height, rows):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("icon.png")
    rows = []
    for y in range(SIZE):
        row = []
        for x in range(SIZE):
            row.extend(pixel(x, y))
        rows.append(row)
    out.write_bytes(png(SIZE, SIZE, rows))
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
