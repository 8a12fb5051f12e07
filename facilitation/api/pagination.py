"""Page-number pagination with the counts in the envelope's ``meta``.

``?page=`` (from 1) and ``?pageSize=`` (1..100, default 20, unless a list says otherwise: a list
whose rows are usually all wanted at once pages by 100, a log by up to 1000). A page past the end
is an empty list; non-numeric or out-of-range values are 400.

``hasNext`` says that rows come after the page, ``hasPrevious`` that rows come before it: past the end of a
list with rows it is true, on any page of an empty list false.

``size_alias`` names an older parameter a list took for its length (``limit``): it is read as
``pageSize`` when ``pageSize`` is not sent, so callers written before the list was paged get what
they got before.
"""
from facilitation.api.parsing import int_param

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
MAX_PAGE = 1_000_000


def paginate(request, queryset, *, default_size: int = DEFAULT_PAGE_SIZE, max_size: int = MAX_PAGE_SIZE,
             size_alias: str | None = None) -> tuple[list, dict]:
    """The rows of the requested page and the page's meta."""
    page = int_param(request, "page", 1, 1, MAX_PAGE)
    size_param = "pageSize"
    if size_alias and request.query_params.get(size_param) in (None, "") \
            and request.query_params.get(size_alias) not in (None, ""):
        size_param = size_alias
    size = int_param(request, size_param, default_size, 1, max_size)
    total = queryset.count()
    start = (page - 1) * size
    rows = list(queryset[start:start + size]) if start < total else []
    pages = (total + size - 1) // size
    return rows, {"page": page, "pageSize": size, "total": total, "totalPages": pages,
                  "hasNext": page < pages, "hasPrevious": page > 1 and total > 0}
