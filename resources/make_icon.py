"""Draws the studio icon (resources/keypose-studio.png, .ico) so the installer needs no design tool.

The picture: three key states (diamonds, as on an animator's dope sheet) joined by
the motion arc between them, on a dark rounded tile. Run with the studio's Python:
    .venv/bin/python resources/make_icon.py
"""
from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
TILE, ARC, KEY, APPROVED = (32, 36, 48), (120, 190, 255), (255, 196, 64), (110, 220, 120)


def draw(size: int = 256) -> Image.Image:
    """The icon at `size` pixels, drawn at 4x and scaled down for smooth edges."""
    s = size * 4
    img = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle([s * 0.04, s * 0.04, s * 0.96, s * 0.96], radius=s * 0.18, fill=TILE)
    keys = [(0.22, 0.70), (0.50, 0.32), (0.78, 0.62)]
    pts = [(x * s, y * s) for x, y in keys]
    (x0, y0), (x1, y1), (x2, y2) = pts   # the parabola through the three keys is the motion arc
    curve = []
    for i in range(65):
        x = x0 + (x2 - x0) * i / 64
        l0 = (x - x1) * (x - x2) / ((x0 - x1) * (x0 - x2))
        l1 = (x - x0) * (x - x2) / ((x1 - x0) * (x1 - x2))
        l2 = (x - x0) * (x - x1) / ((x2 - x0) * (x2 - x1))
        curve.append((x, y0 * l0 + y1 * l1 + y2 * l2))
    d.line(curve, fill=ARC, width=int(s * 0.035), joint="curve")
    d.line([(s * 0.14, s * 0.84), (s * 0.86, s * 0.84)], fill=(90, 96, 112), width=int(s * 0.02))
    for i, (x, y) in enumerate(pts):
        r = s * 0.085
        colour = APPROVED if i != 1 else KEY
        d.polygon([(x, y - r), (x + r, y), (x, y + r), (x - r, y)], fill=colour, outline=TILE)
        d.line([(x, s * 0.80), (x, s * 0.88)], fill=colour, width=int(s * 0.02))
    return img.resize((size, size), Image.LANCZOS)


def main() -> None:
    big = draw(256)
    big.save(HERE / "keypose-studio.png")
    big.save(HERE / "keypose-studio.ico", sizes=[(16, 16), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
    print(f"wrote {HERE / 'keypose-studio.png'} and .ico")


if __name__ == "__main__":
    main()
