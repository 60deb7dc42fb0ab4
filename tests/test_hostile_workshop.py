"""Hostile uploads to the GM's workshop over real HTTP (the server of
tests/test_workshop_api.py): damaged and two-faced images are refused."""

from __future__ import annotations

import io

from PIL import Image

from tests.test_workshop_api import Shop, png, shop  # noqa: F401 - `shop` is the fixture


def jpeg(width: int = 256, height: int = 256) -> bytes:
    out = io.BytesIO()
    Image.effect_noise((width, height), 64).convert("RGB").save(out, "JPEG", quality=90)
    return out.getvalue()


async def test_a_truncated_jpeg_is_refused_as_damaged(shop: Shop) -> None:
    whole = jpeg()
    async with shop.browser() as http:
        assert (await http.post(shop.url("/images"), content=whole, headers={"Content-Type": "image/jpeg"})).status_code == 201
        cut = await http.post(shop.url("/images"), content=whole[: len(whole) * 2 // 3],
                              headers={"Content-Type": "image/jpeg"})
    assert cut.status_code == 400, cut.text
    assert cut.json()["error"] == "the image is damaged (it ends early)"


async def test_a_png_carrying_a_page_after_its_end_is_refused(shop: Shop) -> None:
    page = b"<html><script>fetch('/api/workshop/session')</script></html>" + b"IEND\xaeB`\x82"  # a false end, too
    polyglot = png() + page
    async with shop.browser() as http:
        sent = await http.post(shop.url("/images"), content=polyglot, headers={"Content-Type": "image/png"})
    assert sent.status_code == 400, sent.text
    assert sent.json()["error"] == f"the image has {len(page)} bytes after its end (a file hidden in it?)"
