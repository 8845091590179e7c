"""One way to page a list page: Django's ``Paginator`` over an explicitly
ordered queryset (newest first), the page number from the query string, and
the other query parameters kept for the links of ``templates/_pagination.html``.

A list is paged instead of cut at a cap, so nothing drops off its end."""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.http import HttpRequest, QueryDict

PER_PAGE = 50


def paginate(
    request: HttpRequest | None,
    items,
    *,
    per_page: int = PER_PAGE,
    param: str = "page",
    newest_first: bool = True,
) -> dict:
    """``{"page_obj", "page_param", "page_query", "page_newest_first"}`` for
    ``_pagination.html``; ``page_obj`` iterates over the rows of the requested
    page (an out-of-range or malformed number gives the last or the first
    page, never an error). A list in another order (``newest_first=False``)
    gets neutral link names (previous/next instead of newer/older)."""
    query_dict = request.GET if request is not None else QueryDict()
    page: Page = Paginator(items, per_page).get_page(query_dict.get(param))
    params = query_dict.copy()
    params.pop(param, None)
    query = params.urlencode()
    return {
        "page_obj": page,
        "page_param": param,
        "page_query": f"{query}&" if query else "",
        "page_newest_first": newest_first,
    }
