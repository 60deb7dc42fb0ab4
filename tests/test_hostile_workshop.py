"""Hostile uploads to the GM's workshop over real HTTP (the server of
tests/test_workshop_api.py): damaged and two-faced images are refused."""

from __future__ import annotations

import io

import pytest
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


def with_private_details(kind: str) -> bytes:
    """A picture as a phone makes it: Exif with a GPS position (and, for
    JPEG, a turned orientation), plus a comment, text or XMP where the format has them."""
    from PIL import PngImagePlugin

    picture = Image.effect_noise((96, 64), 64).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # turned: the browser shows it upright by this
    exif[0x010F] = "PhoneMaker"
    exif.get_ifd(0x8825).update({1: "N", 2: (51.0, 30.0, 26.0), 3: "W", 4: (0.0, 7.0, 39.0)})
    out = io.BytesIO()
    if kind == "JPEG":
        picture.save(out, "JPEG", exif=exif.tobytes(), comment=b"GM home: 12 Secret Lane")
    elif kind == "PNG":
        text = PngImagePlugin.PngInfo()
        text.add_text("Comment", "GM home: 12 Secret Lane")
        picture.save(out, "PNG", pnginfo=text, exif=exif.tobytes())
    else:
        picture.save(out, "WEBP", exif=exif.tobytes(), xmp=b"<x:xmpmeta>GM home: 12 Secret Lane</x:xmpmeta>")
    return out.getvalue()


@pytest.mark.parametrize("kind", ["JPEG", "PNG", "WEBP"])
async def test_an_image_is_served_without_where_and_when_it_was_taken(shop: Shop, kind: str) -> None:
    sent = with_private_details(kind)
    assert b"PhoneMaker" in sent and b"Secret Lane" in sent
    async with shop.browser() as http:
        kept = await http.post(shop.url("/images"), content=sent, headers={"Content-Type": f"image/{kind.lower()}"})
        assert kept.status_code == 201, kept.text
        served = (await http.get(shop.url(f"/images/{kept.json()['image']}"))).content
    assert kept.json()["bytes"] == len(served)
    assert b"PhoneMaker" not in served and b"Secret Lane" not in served
    with Image.open(io.BytesIO(served)) as image:
        exif = image.getexif()
        assert exif.get_ifd(0x8825) == {} and 0x010F not in exif
        assert exif.get(0x0112, 1) == (6 if kind == "JPEG" else 1)
        image.load()  # still a whole picture
        with Image.open(io.BytesIO(sent)) as original:
            assert image.tobytes() == original.tobytes()  # the pixels untouched
