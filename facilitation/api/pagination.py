"""Page-number pagination with the counts in the envelope's ``meta``.

``?page=`` (from 1) and ``?pageSize=`` (1..100, default 20). A page past the end
is an empty list; non-numeric or out-of-range values are 400.
"""
from facilitation.api.parsing import int_param

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
MAX_PAGE = 1_000_000


def paginate(request, queryset) -> tuple[list, dict]:
    """The rows of the requested page and the page's meta."""
    page = int_param(request, "page", 1, 1, MAX_PAGE)
    size = int_param(request, "pageSize", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    total = queryset.count()
    start = (page - 1) * size
    rows = list(queryset[start:start + size]) if start < total else []
    pages = (total + size - 1) // size
    return rows, {"page": page, "pageSize": size, "total": total, "totalPages": pages,
                  "hasNext": page < pages, "hasPrevious": page > 1 and total > 0}
