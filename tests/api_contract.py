"""Every request and answer of an API test, checked against the published
OpenAPI document (``GET /api/openapi.json`` of the server under test).

A test module opts in with ``pytestmark = pytest.mark.usefixtures("api_contract")``
(and imports the fixture). The fixture records what every ``httpx.Client``
(or ``httpx.AsyncClient``) sends and receives during the test, then checks each exchange with
openapi-core: every answer against its route and status (a refusal against
the documented ``{"error"}``), every request the server accepted (below 400)
against its parameters and body. A request a test sends to be refused
(a bad parameter, a broken body) is not itself checked: its answer is.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from openapi_core import OpenAPI
from openapi_core.datatypes import RequestParameters
from werkzeug.datastructures import Headers, ImmutableMultiDict

_documents: dict[str, OpenAPI] = {}


class HttpxOpenAPIRequest:
    """An httpx request as openapi-core reads one."""

    def __init__(self, request: httpx.Request) -> None:
        self.request = request
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(list(request.url.params.multi_items())),
            header=Headers(dict(request.headers)),
            cookie=ImmutableMultiDict(),
        )

    @property
    def host_url(self) -> str:
        return f"{self.request.url.scheme}://{self.request.url.netloc.decode()}"

    @property
    def path(self) -> str:
        return self.request.url.path

    @property
    def method(self) -> str:
        return self.request.method.lower()

    @property
    def body(self) -> bytes | None:
        try:
            return self.request.content or None
        except httpx.RequestNotRead:  # a streamed body (a test of the size limit): not kept
            return None

    @property
    def content_type(self) -> str:
        # A body sent without a Content-Type (httpx's content=) is read as JSON by the server.
        return self.request.headers.get("content-type", "application/json" if self.body else "")


class HttpxOpenAPIResponse:
    def __init__(self, response: httpx.Response) -> None:
        self.response = response

    @property
    def data(self) -> bytes:
        return self.response.content

    @property
    def status_code(self) -> int:
        return self.response.status_code

    @property
    def content_type(self) -> str:
        return self.response.headers.get("content-type", "")

    @property
    def headers(self) -> Headers:
        return Headers(dict(self.response.headers))


def _keep_document(base: str, answer: httpx.Response) -> None:
    assert answer.status_code == 200, answer.text
    _documents[base] = OpenAPI.from_dict(answer.json())


def openapi_of(base: str) -> OpenAPI:
    """The document the server at ``base`` publishes (fetched once per server, by the fixture)."""
    if base not in _documents:
        with httpx.Client(timeout=30) as http:
            _keep_document(base, http.get(f"{base}/api/openapi.json"))
    return _documents[base]


def problems_of(exchanges: list[tuple[httpx.Request, httpx.Response]]) -> list[str]:
    from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound, ServerNotFound

    problems = []
    for request, response in exchanges:
        if request.url.path.startswith("/table/assets/") or request.url.path == "/api/openapi.json":
            continue  # the page's static files; the document itself
        base = f"{request.url.scheme}://{request.url.netloc.decode()}"
        spec = openapi_of(base)
        wrapped, answer = HttpxOpenAPIRequest(request), HttpxOpenAPIResponse(response)
        where = f"{request.method} {request.url.path} -> {response.status_code}"
        try:
            spec.validate_response(wrapped, answer)
        except (PathNotFound, ServerNotFound):  # (openapi-core says the latter of a path no server has either)
            if response.status_code not in (404, 405):
                problems.append(f"{where}: the route is not in the document")
            continue
        except OperationNotFound:
            if response.status_code != 405:
                problems.append(f"{where}: the method is not in the document")
            continue
        except Exception as exc:  # noqa: BLE001 - every kind of mismatch is reported the same way
            problems.append(f"{where}: the answer does not match: {_reason(exc)}")
        if response.status_code < 400:
            try:
                spec.validate_request(wrapped)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{where}: the request does not match: {_reason(exc)}")
    return problems


def _reason(exc: BaseException) -> str:
    causes = [str(exc)]
    while exc.__cause__ is not None:
        exc = exc.__cause__
        causes.append(str(exc))
    for sub in getattr(exc, "schema_errors", ()) or ():
        causes.append(f"{list(sub.absolute_path)}: {sub.message[:300]}")
    return " / ".join(c for c in causes if c)[:1500]


@pytest.fixture
def api_contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[httpx.Request, httpx.Response]]]:
    exchanges: list[tuple[httpx.Request, httpx.Response]] = []
    real_send = httpx.Client.send
    real_async_send = httpx.AsyncClient.send

    def wanted(request: httpx.Request, response: httpx.Response) -> str | None:
        """The server's base URL whose document is still to fetch for this exchange (None: none)."""
        if request.url.path == "/api/openapi.json":
            return None
        exchanges.append((request, response))
        base = f"{request.url.scheme}://{request.url.netloc.decode()}"
        # Fetched now, through the same client, while that server runs (a test may stop it before the
        # checks; an in-process app is reached only through its client's transport).
        return base if base not in _documents and response.status_code != 400 else None

    def send(self: httpx.Client, request: httpx.Request, **kwargs):  # type: ignore[no-untyped-def]
        response = real_send(self, request, **kwargs)
        if not kwargs.get("stream"):
            response.read()
            base = wanted(request, response)
            if base is not None:
                _keep_document(base, real_send(self, self.build_request("GET", f"{base}/api/openapi.json")))
        return response

    async def async_send(self: httpx.AsyncClient, request: httpx.Request, **kwargs):  # type: ignore[no-untyped-def]
        response = await real_async_send(self, request, **kwargs)
        if not kwargs.get("stream"):
            await response.aread()
            base = wanted(request, response)
            if base is not None:
                answer = await real_async_send(self, self.build_request("GET", f"{base}/api/openapi.json"))
                await answer.aread()
                _keep_document(base, answer)
        return response

    monkeypatch.setattr(httpx.Client, "send", send)
    monkeypatch.setattr(httpx.AsyncClient, "send", async_send)
    yield exchanges
    monkeypatch.undo()
    problems = problems_of(exchanges)
    assert not problems, "\n".join(problems)
