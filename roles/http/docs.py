"""The API's own documentation, offline: Swagger UI (`/docs`) and ReDoc (`/redoc`) from the assets the
`fastapi-offline` package ships (no CDN), and the OpenAPI schema with the bearer-key scheme declared on
every `/v1` operation (`secured`)."""

from __future__ import annotations

import copy
import functools
from importlib.resources import files
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

__all__ = ["ASSETS", "SCHEME", "install_docs", "secured"]

SCHEME = "bearerKey"
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}
_PACKAGE = "fastapi_offline"
_OWN = (  # the pages load nothing from elsewhere, even what their scripts name (ReDoc's logo, a validator)
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'"
)
_REFUSALS = {
    "401": {"description": "no API key, or an unknown or revoked one (`WWW-Authenticate: Bearer`)"},
    "429": {
        "description": "the key's rate limit: try again after `Retry-After` seconds",
        "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "seconds to wait"}},
    },
}


def secured(schema: dict[str, Any], prefix: str = "/v1/") -> dict[str, Any]:
    """`schema` with the bearer-key scheme, required by every operation under `prefix` (with its 401 and
    429 answers). Pure: a new schema."""
    out = copy.deepcopy(schema)
    out.setdefault("components", {}).setdefault("securitySchemes", {})[SCHEME] = {
        "type": "http",
        "scheme": "bearer",
        "description": "an API key (`brain keys create`), sent as `Authorization: Bearer bk_…`",
    }
    for path, operations in out.get("paths", {}).items():
        if not path.startswith(prefix):
            continue
        for operation in operations.values():
            operation["security"] = [{SCHEME: []}]
            responses = operation.setdefault("responses", {})
            for status, refusal in _REFUSALS.items():
                responses.setdefault(status, copy.deepcopy(refusal))
    return out


def install_docs(app: FastAPI, assets: str = "/docs/assets") -> None:
    """Serve `/docs` and `/redoc` from local assets, and the secured schema at `app.openapi_url`. The app
    must be made with `docs_url=None, redoc_url=None`."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            plain = get_openapi(
                title=app.title,
                version=app.version,
                summary=app.summary,
                description=app.description,
                routes=app.routes,
                tags=app.openapi_tags,
            )
            app.openapi_schema = secured(plain)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    schema_url = app.openapi_url or "/openapi.json"

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _own(
            get_swagger_ui_html(
                openapi_url=f"{root}{schema_url}",
                title=f"{app.title} - Swagger UI",
                swagger_js_url=f"{root}{assets}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{assets}/swagger-ui.css",
                swagger_favicon_url=f"{root}{assets}/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},  # no badge from the online validator
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _own(
            get_redoc_html(
                openapi_url=f"{root}{schema_url}",
                title=f"{app.title} - ReDoc",
                redoc_js_url=f"{root}{assets}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{assets}/favicon.png",
                with_google_fonts=False,
            )
        )

    @app.get(assets + "/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        kind = ASSETS.get(name)
        if kind is None:
            return Response(status_code=404)
        return Response(_asset(name), media_type=kind, headers={"Cache-Control": "public, max-age=86400"})


@functools.cache
def _asset(name: str) -> bytes:
    return files(_PACKAGE).joinpath("static", name).read_bytes()


def _own(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = _OWN
    return page
